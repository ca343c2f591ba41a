"""Sequence failover when the primary dies (docs/cluster.md, "Sequences").

Three leafd nodes with sequences, snowflake and RESP on, one ZooKeeper,
session timeout 4 s, batch 1000. Six clients (HTTP and RESP, single IDs and
blocks, following 307/MOVED and retrying 503 no_primary/TRYAGAIN) ask for
one sequence the whole time, while in turn:
  1. the primary is killed -9: a standby serves within the session timeout
     + 2 s; the gap in the sequence is at most one batch; the killed node
     comes back as a standby;
  2. the (new) primary is stopped with SIGTERM: it hands over at once; the
     longest time a client sees redirects/TRYAGAIN/503 (or a refused
     connection to the stopped node) is printed exactly and asserted < 1 s
     (the documented figure is 200 ms); no other error; it restarts as a
     standby.
After each fault: IDs unique and in real-time order over all answers so
far (check_strict_order), gap at most one batch. At the end the persisted
max in ZooKeeper covers every ID seen. Fails fast when sequences are absent.
About 40 s."""
import signal
import time

from leafdtest import Env, check, log
from seqclients import first_answer
from seqcluster import (boot, fatal, final_checks, find_primary, report, restart_node,
                        seq_props)

SESSION_MS = 4000
BATCH = 1000

env = Env()
zk = env.zookeeper()
props = [seq_props(zk.address(), SESSION_MS, BATCH) for _ in range(3)]
nodes, primary, wl = boot(env, props)
time.sleep(2.0)

# ---- 1. kill -9 of the primary ------------------------------------------------
old = primary
log("kill -9 %s" % old.name)
t_fault = time.monotonic()
old.stop(signal.SIGKILL)
new = find_primary(nodes, timeout=SESSION_MS / 1000.0 + 15, exclude=old)
if new is None:
    wl.stop()
    fatal(env, "no standby became primary within %.0f s of kill -9" % (SESSION_MS / 1000.0 + 15))
check(wl.settle(10), "every client gets IDs again after the kill")
time.sleep(1.0)
fig = report(wl, "kill -9", t_fault, time.monotonic(), BATCH)
first = first_answer(fig["records"], t_fault, exclude=old.name)
failover = first.recv - t_fault if first else float("inf")
log("kill -9: first ID from the new primary %s %.1f ms after the kill (bound %.1f s)"
    % (new.name, failover * 1000, SESSION_MS / 1000.0 + 2))
check(failover <= SESSION_MS / 1000.0 + 2.0,
      "after kill -9 a standby serves within session timeout + 2 s (%.3f s)" % failover)
wrong = [e for e in fig["other"] if e.kind not in ("conn", "timeout") or e.node != old.name]
check(not wrong, "after kill -9 only the dead node's connections failed: %s" % wrong[:3])

st = restart_node(env, old)
check(st[0] == 307, "the killed node restarts as a standby that redirects: %s" % (st,))
check(find_primary(nodes) is new, "the new primary keeps its role after the old one returns")
time.sleep(1.0)

# ---- 2. SIGTERM of the primary -----------------------------------------------
old = new
log("SIGTERM %s" % old.name)
t_fault = time.monotonic()
rc = old.stop(signal.SIGTERM)
check(rc == 0, "the primary exits 0 on SIGTERM (rc %s)" % rc)
new = find_primary(nodes, timeout=10, exclude=old)
check(new is not None, "a standby took over after SIGTERM")
check(wl.settle(10), "every client gets IDs again after SIGTERM")
time.sleep(1.0)
fig = report(wl, "SIGTERM", t_fault, time.monotonic(), BATCH)
log("SIGTERM: worst client handover %.1f ms (documented: under 200 ms), longest time without "
    "any answer %.1f ms" % (fig["handover"] * 1000, fig["unavailable"] * 1000))
check(fig["handover"] < 1.0, "after SIGTERM no client waits 1 s or more for its next ID "
      "(%.1f ms)" % (fig["handover"] * 1000))
wrong = [e for e in fig["other"] if e.kind != "conn" or e.node != old.name]
check(not wrong, "after SIGTERM no error but redirects/TRYAGAIN and the stopped node's closed "
      "connections: %s" % wrong[:3])
st = restart_node(env, old)
check(st[0] == 307, "the stopped node restarts as a standby: %s" % (st,))
time.sleep(1.0)

wl.stop()
report(wl, "end", t_fault, time.monotonic(), BATCH)
final_checks(env, wl, nodes, zk)
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
