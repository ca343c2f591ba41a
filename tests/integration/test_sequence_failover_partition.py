"""The primary cut off from ZooKeeper but not from its clients (docs/cluster.md,
"Sequences": two primaries never issue at once; the partition case).

One ZooKeeper; three leafd nodes with sequences, snowflake and RESP on,
session timeout 4 s, batch 1000. Node n0 reaches ZooKeeper only through
tests/lib/tcpproxy.py (its leaf.snowflake.zk.address is the proxy's port);
its clients reach it directly. n0 starts first and must be the primary.
Six following/retrying clients use the whole cluster, and two pinned probes
(HTTP and RESP, never following redirects) ask n0 only, all the time.

The proxy is blackholed (a partition: sockets stay open, nothing arrives)
for twice the session timeout, then healed. Checks, from the recorded times:
  - the old primary's last ID was received before the new primary's first
    ID was requested (no overlap, so no two primaries issued at once);
  - the old primary stopped answering with IDs before its session could
    expire (last ID < blackhole + session timeout), and said so: errors or
    redirects from n0 between its last ID and the new primary's first;
  - a standby serves within the session timeout + 3 s of the blackhole;
  - IDs unique and in real-time order over all answers, gap at most a batch;
  - after the heal n0 rejoins as a standby and redirects to the new primary.
Fails fast when sequences are absent. About 35 s."""
import time

from leafdtest import Env, check, log, wait_until
from seqclients import first_answer, last_answer
from seqcluster import (boot, fatal, final_checks, find_primary, probe, report, seq_props)
from tcpproxy import Proxy

SESSION_MS = 4000
BATCH = 1000
SESSION = SESSION_MS / 1000.0

env = Env()
zk = env.zookeeper()
proxy = Proxy(target=("127.0.0.1", zk.port))
props = [seq_props("127.0.0.1:%d" % proxy.port, SESSION_MS, BATCH)] + \
    [seq_props(zk.address(), SESSION_MS, BATCH) for _ in range(2)]
nodes, primary, wl = boot(env, props, pins=((0, "http"), (0, "resp")))
n0 = nodes[0]
if primary is not n0:
    wl.stop()
    fatal(env, "n0 (behind the proxy) started first but %s is primary" % primary.name)
check(proxy.connections() >= 1, "n0's ZooKeeper connection goes through the proxy (%d)"
      % proxy.connections())
time.sleep(2.0)

log("blackholing n0's ZooKeeper traffic for %.0f s" % (2 * SESSION))
t_bh = time.monotonic()
proxy.blackhole()
new = find_primary(nodes[1:], timeout=SESSION + 15)
if new is None:
    proxy.heal()
    wl.stop()
    fatal(env, "no other node became primary within %.0f s of the partition" % (SESSION + 15))
time.sleep(max(0.0, t_bh + 2 * SESSION - time.monotonic()))
t_heal = time.monotonic()
proxy.heal()
log("healed after %.1f s" % (t_heal - t_bh))
check(wl.settle(10), "every following client gets IDs during/after the partition")
back = wait_until(lambda: probe(n0)[0] == 307, 30)
check(back, "n0 rejoins as a standby that redirects after the heal: %s" % (probe(n0),))
time.sleep(1.0)
fig = report(wl, "partition", t_bh, time.monotonic(), BATCH)
records, events = fig["records"], fig["events"]

last_old = last_answer(records, n0.name, before=t_heal)
first_new = first_answer(records, t_bh, exclude=n0.name)
if last_old is None or first_new is None:
    fatal(env, "partition: no answer to compare (old %s, new %s)" % (last_old, first_new))
log("partition: n0's last ID %d received at +%.1f ms; %s's first ID %d requested at +%.1f ms, "
    "received at +%.1f ms (times after the blackhole)" % (
        last_old.hi, (last_old.recv - t_bh) * 1000, first_new.node, first_new.lo,
        (first_new.send - t_bh) * 1000, (first_new.recv - t_bh) * 1000))
check(last_old.recv < first_new.send,
      "the old primary's last ID came before the new primary's first was requested "
      "(margin %.1f ms)" % ((first_new.send - last_old.recv) * 1000))
check(last_old.recv - t_bh < SESSION,
      "the old primary stopped issuing before its session could expire (%.1f ms < %d ms)"
      % ((last_old.recv - t_bh) * 1000, SESSION_MS))
check(first_new.lo > last_old.hi, "the new primary's first ID %d is above the old's last %d"
      % (first_new.lo, last_old.hi))
said = [e for e in events if e.node == n0.name and e.kind != "timeout" and
        last_old.recv <= e.t <= first_new.recv]
kinds = sorted({e.kind for e in said})
log("partition: n0 answered %d times without an ID between its last ID and the new "
    "primary's first (%s); sample %s" % (len(said), kinds, [e.detail for e in said[:2]]))
check(said, "the old primary answered errors/redirects (not IDs, not silence) once it stopped")
hung = [e for e in events if e.node == n0.name and e.kind == "timeout" and t_bh <= e.t <= t_heal]
log("partition: %d requests to n0 timed out (1 s) during the blackhole" % len(hung))
failover = first_new.recv - t_bh
log("partition: a standby served %.1f ms after the blackhole (session timeout %d ms)"
    % (failover * 1000, SESSION_MS))
check(failover <= SESSION + 3.0, "a standby serves within session timeout + 3 s (%.3f s)"
      % failover)
late = [r for r in records if r.node == n0.name and first_new.recv <= r.recv <= t_heal]
check(not late, "n0 issued nothing while the new primary served: %s" % late[:2])

wl.stop()
final_checks(env, wl, nodes, zk)
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)
proxy.close()
env.finish()
