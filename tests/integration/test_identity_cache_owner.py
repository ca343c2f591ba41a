"""An identity rule (docs/IDENTITY.md): the worker-ID cache records the identity and
cluster it belongs to; a cache of another identity is never used to serve.

Node A (127.0.0.1:PA) serves. Its data dir is copied to node B, whose identity is
127.0.0.2:PA (same leaf.snowflake.port, so the same cache path, another advertise ip), and
ZooKeeper is stopped (A keeps serving). B must not serve from A's cache: no snowflake ID in
8 s, and its log names the cache's identity. Once ZooKeeper is back, B registers its own worker
ID, and A and B hammered together issue no ID twice. An old two-key cache (identity unknown) is
not used to serve while ZooKeeper is down either.
"""
import os
import shutil
import time

from identityhelpers import hammer
from leafdtest import Env, check, log, wait_until
from zkhelpers import worker_of, zk_props

MSG_FOREIGN = "belongs to identity 127.0.0.1:%d"  # % A's port
NO_SERVE_S = 8
START_TRIES = 3

env = Env()
zk = env.zookeeper()
a = env.leafd("a", zk_props(zk.address()))
aw = worker_of(a.get_ids("/api/snowflake/get/c?count=10")[0])
a_data = os.path.join(a.dir, "data")
check(os.path.exists(os.path.join(a_data, "it", str(a.port), "workerID.properties")),
      "A wrote its cache")

b = env.leafd("b", zk_props(zk.address(), **{"leafd.snowflake.advertise.ip": "127.0.0.2",
                                             "leaf.snowflake.port": str(a.port)}),
              wait_ready=False)
b.stop()
shutil.rmtree(os.path.join(b.dir, "data"), ignore_errors=True)
shutil.copytree(a_data, os.path.join(b.dir, "data"))
lock = os.path.join(b.dir, "data", "leafd.lock")  # the copy's lock file: harmless, unlocked
if os.path.exists(lock):
    os.remove(lock)
zk.stop()
check(a.get("/api/snowflake/get/c")[0] == 200, "A serves with ZooKeeper down")
b.start(wait_ready=False)
served = wait_until(lambda: b.get("/api/snowflake/get/c")[0] == 200, NO_SERVE_S, interval=0.2)
check(not served, "B does not serve from A's copied cache while ZooKeeper is down")
text = b.log_text()
check(MSG_FOREIGN % a.port in text, "B's log names the cache's identity:\n" + text[-1500:])

# B never serves from it: with ZooKeeper down and no cache of its own it cannot start
# (exit 1, as any node without a cache); started again once ZooKeeper is back, it
# registers as itself.
check(b.wait_exit(20) == 1, "B exits 1 rather than serve from another identity's cache")
zk.start()


def start_b():
    """Starts B as a supervisor would: a node without a cache of its own exits 1 when its
    session is not up within its start-up wait (docs/OPERATIONS.md, "When a node refuses
    to start"), and is started again. At most START_TRIES starts: one is enough unless
    ZooKeeper is slow to answer."""
    for n in range(1, START_TRIES + 1):
        b.start(wait_ready=False)
        wait_until(lambda: not b.proc.alive() or b.get("/ready")[0] == 200, 40)
        if b.proc.alive():
            return b.wait_ready(1)
        if b.wait_exit(1) != 1:
            return False
        log("B exited 1 on start %d (ZooKeeper not answering yet)" % n)
    return False


if start_b():
    bw = worker_of(b.get_ids("/api/snowflake/get/c?count=10")[0])
    check(bw != aw, "B registered a worker ID of its own (%d, A has %d)" % (bw, aw))
    h = hammer([a, b], 10)
    check(h.duplicates() == 0, "A and B issue no ID twice (%d)" % h.duplicates())
else:
    check(False, "B starts once ZooKeeper is back:\n" + b.log_text()[-1500:])
b.stop()

# An old two-key cache (no identity) with ZooKeeper down: not used to serve.
c = env.leafd("c", zk_props(zk.address()), wait_ready=False)
c.stop()
cdir = os.path.join(c.dir, "data", "it", str(c.port))
os.makedirs(cdir, exist_ok=True)
with open(os.path.join(cdir, "workerID.properties"), "w") as fh:
    fh.write("workerID=%d\ntimestamp=%d\n" % (aw, int(time.time() * 1000)))
zk.stop()
c.start(wait_ready=False)
served = wait_until(lambda: c.get("/api/snowflake/get/c")[0] == 200, NO_SERVE_S, interval=0.2)
check(not served, "an old cache without identity is not used to serve until ZooKeeper confirms")
c.stop()
a.stop()
env.finish()
