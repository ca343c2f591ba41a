"""An upgrade while ZooKeeper is down (docs/IDENTITY.md, the worker-ID cache): the previous
releases are built from git history (tests/lib/releasebuild.py).

- 0.2.0 (commit 6ac706c) writes a cache that names its identity: this build, started with
  ZooKeeper down, serves snowflake IDs from it (above the old node's) at once.
- 0.1.0 (commit 42e24c4) writes a cache that names no identity, which cannot prove it is not a
  copy: this build, started with ZooKeeper down, stays up (it exited 1 after 5 s before),
  answers /ready 503 with the reason, logs it, serves segment IDs meanwhile and no snowflake
  ID; once ZooKeeper is back it serves snowflake IDs within a few seconds, with the worker ID
  ZooKeeper confirms and above every ID the old node issued.

Skips (77) only when the repository has no history to build them from (a shallow clone).
"""
import json
import time

from leafdtest import LEAFD_BIN, Env, check, log, seg_props, wait_until
from releasebuild import release_binary
from upgradehelpers import VLeafd
from zkhelpers import worker_of, zk_props

V020 = "6ac706c"
V010 = "42e24c4"
REASON = "snowflake identity waits for ZooKeeper"
STAYS_UP_S = 12
SERVE_WITHIN_S = 10

v020 = release_binary(V020)
v010 = release_binary(V010)
env = Env()
zk = env.zookeeper()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('up', 1, 100)")
props = dict(zk_props(zk.address(), name="zd"), **seg_props(db))


def snowflake(node, count=5):
    st, body, _ = node.get("/api/snowflake/get/up?count=%d" % count)
    return [int(x) for x in body.split("\n") if x.strip()] if st == 200 else None


def old_node(name, binary):
    n = VLeafd(env, name, props, binary=binary, wait_ready=False)
    check(n.wait_ready(40), "%s (%s) ready:\n%s" % (name, binary, n.log_text()[-1500:]))
    ids = []
    for _ in range(20):
        ids += snowflake(n, 50) or []
    check(len(ids) == 1000, "%s issued snowflake IDs (%d)" % (name, len(ids)))
    time.sleep(3.5)  # a periodic cache write
    ids += snowflake(n, 50) or []
    n.stop()
    return n, max(ids), worker_of(ids[0])


log("0.2.0's cache names its identity: served from it with ZooKeeper down")
a, a_max, a_worker = old_node("a", v020)
zk.stop()
a.binary = LEAFD_BIN
a.start(wait_ready=False)
check(a.wait_ready(20), "1.0 on 0.2.0's cache is ready with ZooKeeper down:\n" + a.log_text()[-1500:])
got = snowflake(a) or []
check(got and min(got) > a_max and worker_of(got[0]) == a_worker,
      "serves worker %d above the old node's IDs (%s, old max %d)" % (a_worker, got[:1], a_max))
a.stop()
zk.start()

log("0.1.0's cache names no identity: stays up, not ready, until ZooKeeper confirms it")
b, b_max, b_worker = old_node("b", v010)
zk.stop()
b.binary = LEAFD_BIN
b.start(wait_ready=False)
t0 = time.monotonic()
snow_served = seg_served = False
seen_reason = ""
while time.monotonic() - t0 < STAYS_UP_S and b.proc.alive():
    try:
        st, body, _ = b.get("/ready", timeout=2)
        if st == 503 and REASON in body:
            seen_reason = body
        snow_served = snow_served or snowflake(b) is not None
        seg_served = seg_served or b.get("/api/segment/get/up", timeout=2)[0] == 200
    except OSError:
        pass
    time.sleep(0.2)
check(b.proc.alive(), "stays up with ZooKeeper down (exit %s):\n%s"
      % (b.proc.p.returncode, b.log_text()[-1500:]))
check(seen_reason != "", "/ready 503 names the reason ('%s')" % REASON)
check(seg_served, "segment IDs are served meanwhile")
check(not snow_served, "no snowflake ID from a cache that cannot prove it is not a copy")
text = b.log_text()
check("does not name its identity (written by an older leafd): snowflake IDs wait" in text,
      "the log says the snowflake identity waits for ZooKeeper:\n" + text[-1500:])
if seen_reason:
    log("/ready while waiting: %s" % json.dumps(json.loads(seen_reason))[:400])

zk.start()
t1 = time.monotonic()
served = wait_until(lambda: snowflake(b) is not None, SERVE_WITHIN_S + 20, interval=0.1)
took = time.monotonic() - t1
check(served and took < SERVE_WITHIN_S, "snowflake IDs %.1f s after ZooKeeper is back (< %d s):\n%s"
      % (took, SERVE_WITHIN_S, b.log_text()[-1500:]))
got = snowflake(b) or []
check(got and worker_of(got[0]) == b_worker and min(got) > b_max,
      "with the worker ID ZooKeeper confirms (%d) above the old node's IDs (%s, old max %d)"
      % (b_worker, got[:1], b_max))
check(wait_until(lambda: b.get("/ready")[0] == 200, 10), "/ready 200 once confirmed")
log("0.1.0 cache, ZooKeeper down: stayed up %d s not ready; snowflake served %.1f s after "
    "ZooKeeper came back" % (STAYS_UP_S, took))
b.stop()
env.finish()
