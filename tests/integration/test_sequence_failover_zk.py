"""Sequences across ZooKeeper server restarts (docs/cluster.md, "Sequences").

A three-server ZooKeeper ensemble; three leafd nodes with sequences,
snowflake and RESP on, connected to all three servers, session timeout 6 s,
batch 1000; six following/retrying clients (HTTP and RESP) on one sequence
the whole time, while in turn:
  1. the ZooKeeper server that holds the primary's session (found with `cons`)
     is stopped and restarted: the session moves to another server;
  2. the ensemble's leader (whichever it is now) is stopped and restarted:
     the remaining two elect a new leader.
After each: IDs unique and in real-time order over all answers so far, gap
at most one batch, and the longest time without any answer printed and
asserted below the session timeout + 2 s (the docs give no figure for
this; whether the primary changed is printed). Fails fast when sequences are
absent. About 60 s."""
import time

from leafdtest import Env, check, log, raw, wait_until
from seqcluster import (boot, final_checks, find_primary, node_sessions, report, seq_props,
                        zk_server_of)

SESSION_MS = 6000
BATCH = 1000

env = Env()
zks = env.zookeeper_ensemble(3)
address = ",".join(z.address() for z in zks)
props = [seq_props(address, SESSION_MS, BATCH) for _ in range(3)]
nodes, primary, wl = boot(env, props)
time.sleep(2.0)


def leader():
    for z in zks:
        try:
            if b"Mode: leader" in raw(z.port, b"srvr", timeout=1):
                return z
        except OSError:
            pass
    return None


def restart(z, label):
    """Stops z for 2 s, starts it again; reports the phase."""
    global primary
    log("%s: stopping %s" % (label, z.name))
    t_fault = time.monotonic()
    z.stop()
    time.sleep(2.0)
    z.start(wait=False)
    check(wait_until(z.serving, 60), "%s: %s rejoined the ensemble" % (label, z.name))
    check(wl.settle(SESSION_MS / 1000.0 + 10), "%s: every client gets IDs again" % label)
    time.sleep(1.5)
    fig = report(wl, label, t_fault, time.monotonic(), BATCH)
    now = find_primary(nodes, timeout=10)
    log("%s: primary before %s, after %s" % (label, primary.name, now and now.name))
    check(fig["unavailable"] < SESSION_MS / 1000.0 + 2.0,
          "%s: no stretch without answers as long as session timeout + 2 s (%.1f ms)"
          % (label, fig["unavailable"] * 1000))
    primary = now or primary


# ---- 1. the server holding the primary's session -----------------------------
sids, how = node_sessions(primary, zks)
log("%s: sessions %s (found by %s)" % (primary.name, sids, how))
z1 = zk_server_of(sids[-1], zks) if sids else None
check(z1 is not None, "the server holding the primary's session is found with cons (%s)" % sids)
restart(z1 or zks[0], "restart of the primary's ZooKeeper server")

# ---- 2. the leader ------------------------------------------------------------
lead = wait_until(leader, 30)
check(lead is not None, "the ensemble has a leader again")
restart(lead or zks[1], "restart of the ZooKeeper leader %s" % (lead or zks[1]).name)

wl.stop()
final_checks(env, wl, nodes, zks[0])
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
