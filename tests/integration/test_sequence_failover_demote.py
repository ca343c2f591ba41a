"""Sequence handover without a dead process (docs/cluster.md, "Sequences").

Three leafd nodes with sequences, snowflake and RESP on, one ZooKeeper,
session timeout 4 s, batch 1000, six following/retrying clients (HTTP and
RESP) on one sequence the whole time, while in turn:
  1. the primary is demoted (POST /api/cluster/demote from loopback, no
     token): another node takes over at once; the longest time a client sees
     redirects/TRYAGAIN/503 is printed exactly and asserted < 1 s (the
     documented figure is 200 ms); no other error at all; the demoted node
     redirects to the new primary;
  2. the primary is demoted while ZooKeeper stalls (SIGSTOP for 1.2 s: longer
     than the 1 s after which a node lists the line again, shorter than the
     2/3 session timeout after which its client gives up the connection), so
     that a list the demoted node sent before its delete is answered after
     its release: the next node takes over once ZooKeeper answers, the
     demoted node never takes the role back and nobody waits out a lease
     (both once happened: the old primary acted on that list, claimed the
     lease over "released", and the next one waited 4/3 session timeout);
     the handover counted from the end of the stall is printed;
  3. the primary's ZooKeeper session is expired (tests/tools/zk_expire on
     every live session id the node logged, cross-checked with ZooKeeper's
     `cons`; see seqcluster.node_sessions): a standby serves within 4/3 of the
     session timeout + 2 s (a session closed from outside ends before the
     old primary's lease has run out, so the new primary waits that lease out:
     up to 4/3 T, see src/node/sequence/sequence_service_lease.c "The lease node"), and the old
     primary comes back as a standby.
After each fault: IDs unique and in real-time order over all answers so far,
gap at most one batch. At the end the persisted max covers every ID seen.
Fails fast when sequences are absent. About 40 s."""
import signal
import time

from leafdtest import Env, check, http, log, wait_until
from seqclients import first_answer
from seqcluster import (boot, fatal, final_checks, find_primary, node_sessions, probe, report,
                        seq_props)
from zkhelpers import expire_session

SESSION_MS = 4000
BATCH = 1000

env = Env()
zk = env.zookeeper()
props = [seq_props(zk.address(), SESSION_MS, BATCH) for _ in range(3)]
nodes, primary, wl = boot(env, props)
time.sleep(2.0)

# ---- 1. demote --------------------------------------------------------------
old = primary
log("demote %s" % old.name)
t_fault = time.monotonic()
st, body, _ = http(old.port, "/api/cluster/demote", method="POST", body="")
log("POST /api/cluster/demote -> %d %s" % (st, body[:200]))
if st == 404:
    wl.stop()
    fatal(env, "POST /api/cluster/demote answered 404: the demote endpoint is not there")
check(200 <= st < 300, "demote is accepted from loopback (%d %s)" % (st, body[:120]))
new = find_primary(nodes, timeout=10, exclude=old)
check(new is not None, "another node became primary after the demote")
check(wl.settle(10), "every client gets IDs again after the demote")
time.sleep(1.0)
fig = report(wl, "demote", t_fault, time.monotonic(), BATCH)
log("demote: worst client handover %.1f ms (documented: under 200 ms), longest time without any "
    "answer %.1f ms" % (fig["handover"] * 1000, fig["unavailable"] * 1000))
check(fig["handover"] < 1.0, "after demote no client waits 1 s or more for its next ID "
      "(%.1f ms)" % (fig["handover"] * 1000))
check(not fig["other"], "after demote clients saw only redirects/TRYAGAIN/503 no_primary, no "
      "other error: %s" % fig["other"][:3])
pst = probe(old)
check(pst[0] == 307 and new is not None and pst[2] == "127.0.0.1:%d" % new.port,
      "the demoted node redirects to the new primary: %s" % (pst,))
time.sleep(1.0)

# ---- 2. demote while ZooKeeper stalls -------------------------------------------
old = new or find_primary(nodes)
STALL_S = 1.2
elected = old.log_text().count("elected sequence primary")
waited = sum(n.log_text().count("before issuing") for n in nodes)
log("demote %s while ZooKeeper stalls %.1f s" % (old.name, STALL_S))
t_fault = time.monotonic()
zk.proc.p.send_signal(signal.SIGSTOP)
try:
    st, body, _ = http(old.port, "/api/cluster/demote", method="POST", body="")
    time.sleep(max(0.0, STALL_S - (time.monotonic() - t_fault)))
finally:
    zk.proc.p.send_signal(signal.SIGCONT)
t_cont = time.monotonic()
check(200 <= st < 300, "demote is accepted while ZooKeeper stalls (%d %s)" % (st, body[:120]))
new = find_primary(nodes, timeout=10, exclude=old)
check(new is not None, "another node became primary after the stalled demote")
check(wl.settle(10), "every client gets IDs again after the stalled demote")
time.sleep(1.0)
fig = report(wl, "demote during a stall", t_fault, time.monotonic(), BATCH)
first = first_answer(fig["records"], t_cont, exclude=old.name)
log("demote during a stall: first ID from %s %.1f ms after ZooKeeper answered again" % (
    first.node if first else "-", ((first.recv - t_cont) if first else float("inf")) * 1000))
check(old.log_text().count("elected sequence primary") == elected,
      "the demoted node %s did not take the role back" % old.name)
check(sum(n.log_text().count("before issuing") for n in nodes) == waited,
      "no node waited out a lease after the stalled demote (it was released)")
check(not fig["other"], "after the stalled demote clients saw only redirects/TRYAGAIN/503 "
      "no_primary, no other error: %s" % fig["other"][:3])
time.sleep(1.0)

# ---- 3. the primary's ZooKeeper session expires -------------------------------
old = new or find_primary(nodes)
sids, how = node_sessions(old, [zk])
log("%s: ZooKeeper sessions %s (found by %s)" % (old.name, sids, how))
check(sids, "the primary's ZooKeeper session id is known (%s)" % how)
t_fault = time.monotonic()
lost_before = old.log_text().count("no longer the sequence primary")
for sid in sids:
    check(expire_session(zk.address(), sid), "expired session %s of %s" % (sid, old.name))
# The tool ends a session by opening it a second time and closing that; if the
# node's own client raced it (it reconnected in between), the election's
# session can survive. Then expire what the node holds now, once more.
if not wait_until(lambda: old.log_text().count("no longer the sequence primary") > lost_before, 5):
    sids, how = node_sessions(old, [zk])
    log("%s kept its role; expiring its sessions again: %s (%s)" % (old.name, sids, how))
    t_fault = time.monotonic()  # the failover is timed from the expiry that took effect
    for sid in sids:
        expire_session(zk.address(), sid)
check(wait_until(lambda: old.log_text().count("no longer the sequence primary") > lost_before, 10),
      "%s saw its session expire and stopped being primary" % old.name)
new = find_primary(nodes, timeout=SESSION_MS / 1000.0 + 15, exclude=old)
check(new is not None, "a standby became primary after the session expiry")
check(wl.settle(15), "every client gets IDs again after the session expiry")
time.sleep(1.0)
fig = report(wl, "session expiry", t_fault, time.monotonic(), BATCH)
first = first_answer(fig["records"], t_fault, exclude=old.name)
failover = first.recv - t_fault if first else float("inf")
log("session expiry: first ID from another node %.1f ms after the expiry" % (failover * 1000))
check(failover <= SESSION_MS * 4 / 3000.0 + 2.0,
      "after the expiry a standby serves within 4/3 session timeout + 2 s (%.3f s)" % failover)
back = wait_until(lambda: probe(old)[0] == 307, 20)
check(back, "the expired primary rejoins as a standby that redirects: %s" % (probe(old),))
time.sleep(1.0)

wl.stop()
report(wl, "end", t_fault, time.monotonic(), BATCH)
final_checks(env, wl, nodes, zk)
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
