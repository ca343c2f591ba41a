"""An identity rule (docs/IDENTITY.md): the peer clock check uses the median of the
live peers and ZooKeeper's own clock (a write's mtime), so one node with a wrong clock neither
starts alone unnoticed nor locks correct nodes out.

1. alone: the first node of a cluster, its wall clock a day ahead (libfaketime), no peers:
   ZooKeeper's clock is the witness, it exits 1 (today: no peers, no check, it serves).
2. one wrong peer: a peer a day ahead (a fake peer listed under leaf_temporary) must not lock a
   correct new node out: ZooKeeper sides with it (today: refused on the average).
3. the median: three correct peers and one a day off; a correct new node starts (today the
   average is 6 h off: refused).
"""
from identityhelpers import FakePeer
from leafdtest import Env, check
from zkhelpers import faketime_env, start_expect_exit, zk_props

DAY_MS = 86400000
MSG_KEY = "leafd.snowflake.peer.max.offset.ms"
MSG_REFUSE = "refusing to start"

env = Env()
zk = env.zookeeper()

# 1. alone, a day ahead, in a fresh cluster "solo"
solo = env.leafd("solo", zk_props(zk.address(), name="solo"), wait_ready=False)
solo.stop()
rc, text = start_expect_exit(solo, faketime_env("+1d"), timeout=15)
check(rc == 1, "a lone node a day ahead of ZooKeeper's clock is refused (rc %s)" % rc)
check(MSG_REFUSE in text and MSG_KEY in text, "the refusal names the check:\n" + text[-1200:])

# 2. one peer a day ahead, a correct new node in cluster "one"
wrong = FakePeer(zk, "one", DAY_MS)
ok = env.leafd("ok", zk_props(zk.address(), name="one"), wait_ready=False)
started = ok.wait_ready(30)
check(started, "one wrong peer does not lock a correct node out:\n" + ok.log_text()[-1200:])
if started:
    check(ok.get("/api/snowflake/get/w")[0] == 200, "it serves")
ok.stop()
wrong.close(zk)

# 3. three correct peers and a fourth a day behind, cluster "med"
peers = [env.leafd("m%d" % i, zk_props(zk.address(), name="med")) for i in range(3)]
far = FakePeer(zk, "med", -DAY_MS)
c = env.leafd("c", zk_props(zk.address(), name="med"), wait_ready=False)
check(c.wait_ready(30), "the median ignores one peer a day off:\n" + c.log_text()[-1200:])
for n in peers + [c]:
    n.stop()
far.close(zk)
env.finish()
