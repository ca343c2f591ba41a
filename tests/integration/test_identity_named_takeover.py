"""A new pod of a named identity takes the name over by itself (docs/IDENTITY.md, "Named
identity", "Taking a name over"), as a StatefulSet replaces leafd-0:

1. A clean stop: leafd-0 serves, a new leafd-0 (another address, its own data dir) starts and
   waits; the old one stops gracefully (its last time written to leaf_forever, its session
   closed). The new one takes the name over, reads the time the old one wrote and serves above
   its IDs: no "bad version", no exit.
2. A late kill: the old leafd-0 still runs for 3 s after the new one starts (a force-deleted
   pod whose container the kubelet stops later), then is killed (-9). The new one waits out
   the old session (longer than a session timeout + 2 s from its start), then serves.
"""
import time

from identityhelpers import named, worker_of
from leafdtest import Env, check, log, wait_until

SESSION_MS = 4000

env = Env()
zk = env.zookeeper()
base = env.dir

# 1. A clean stop of the holder while the new process waits.
old = env.leafd("old", named(zk.address(), "leafd-0", "127.0.0.2", base + "/old", SESSION_MS))
w0 = worker_of(old)
last_old = old.get_ids("/api/snowflake/get/t?count=50")[-1]
new = env.leafd("new", named(zk.address(), "leafd-0", "127.0.0.3", base + "/new", SESSION_MS),
                wait_ready=False)
check(wait_until(lambda: "issuing nothing while waiting" in new.log_text(), 10, 0.1),
      "the new leafd-0 waits for its name")
st, body, _ = new.get("/ready")
check(st == 503 and "named identity held by another ZooKeeper session" in body and "ip:port" not in body,
      "/ready says a named identity waits for the previous pod, not for an ip:port: %s" % body[:400])
last_old = max(last_old, old.get_ids("/api/snowflake/get/t?count=50")[-1])
check(old.stop() == 0, "the old leafd-0 stops gracefully")
t0 = time.monotonic()
ok = new.wait_ready(SESSION_MS / 1000 * 3)
log("clean stop: the new leafd-0 served %.1f s after the old one stopped" % (time.monotonic() - t0))
check(ok and new.proc.alive(), "the new leafd-0 takes the name over by itself:\n%s"
      % new.log_text()[-1500:])
if ok:
    first = new.get_ids("/api/snowflake/get/t?count=5")[0]
    check(worker_of(new) == w0 and first > last_old,
          "same worker ID %d, IDs above the old one's last (%d > %d)" % (w0, first, last_old))
    check("bad version" not in new.log_text(), "no stale-version refusal")

# 2. The holder killed 3 s after the new process started.
holder = new
late = env.leafd("late", named(zk.address(), "leafd-0", "127.0.0.4", base + "/late", SESSION_MS),
                 wait_ready=False)
t0 = time.monotonic()
check(wait_until(lambda: "issuing nothing while waiting" in late.log_text(), 10, 0.1),
      "the next leafd-0 waits for its name")
time.sleep(max(0.0, 3.0 - (time.monotonic() - t0)))
holder.stop(9)
ok = late.wait_ready(SESSION_MS / 1000 * 3 + 5)
log("late kill: the next leafd-0 served %.1f s after it started" % (time.monotonic() - t0))
check(ok and late.proc.alive(), "the next leafd-0 waits the killed holder's session out and "
      "serves (no exit 1):\n%s" % late.log_text()[-1500:])

# /ready and /cluster name the identity, not only ip:port.
st, body, _ = late.get("/ready")
check('"identity":"leafd-0"' in body, "/ready's snowflake member names the identity leafd-0: %s"
      % body[:200])
late.get("/cluster?format=json")  # the first request starts the survey
ok = wait_until(lambda: '"name":"leafd-0"' in late.get("/cluster?format=json")[1].split('"nodes"', 1)[-1], 10, 0.5)
st, body, _ = late.get("/cluster?format=json")
check(ok and body.startswith('{"node":{"identity":') and '"name":"leafd-0"' in body.split('"nodes"', 1)[0],
      "/cluster names leafd-0 for this node and its row: %s" % body[:600])
env.finish()
