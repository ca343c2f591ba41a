"""An identity rule (docs/IDENTITY.md): two processes never share one data dir.

Node A runs on data dir D. Node B, another port and another identity, is configured with the
same leafd.data.dir: it exits 1 naming the dir (a lock held for the process's life), and A keeps
serving. Once A has stopped (also after a kill -9: the lock is the kernel's), B starts on D."""
import os

from leafdtest import Env, check, log
from zkhelpers import start_expect_exit, zk_props

MSG_DIR = "data dir %s"  # % the shared leafd.data.dir
MSG_KEY = "leafd.data.dir"

env = Env()
zk = env.zookeeper()
shared = os.path.join(env.dir, "shared-data")
a = env.leafd("a", zk_props(zk.address(), **{"leafd.data.dir": shared}))
b = env.leafd("b", zk_props(zk.address(), **{"leafd.data.dir": shared}), wait_ready=False)
rc = b.wait_exit(15)
text = b.log_text()
if rc is None:
    b.stop()
check(rc == 1, "a second process on the same data dir exits 1 (rc %s)" % rc)
check(MSG_DIR % shared in text, "its log names the dir:\n" + text[-1200:])
check(MSG_KEY in text, "its log names leafd.data.dir")
check(a.get("/api/snowflake/get/x")[0] == 200, "the first process keeps serving")

a.proc.kill9()
b.start(timeout=30)
check(b.get("/api/snowflake/get/x")[0] == 200,
      "after the holder died (kill -9), another process starts on the dir")
rc, text = start_expect_exit(a, timeout=15)
check(rc == 1 and MSG_DIR % shared in text, "and now the old one is refused (rc %s)" % rc)
check(b.stop() == 0, "graceful stop")
env.finish()
