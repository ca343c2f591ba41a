"""A node with sequences on whose snowflake side starts from the local cache
while ZooKeeper is unreachable: the sequence service cannot start, and the
node must exit 1, not hang. The sequence service's handles were referenced
on the control loop until a successful start, so the shutdown's uv_run()
waited forever (seen in the chaos run: a node killed and restarted during a
whole-ensemble outage never became ready nor exited)."""
import time

from leafdtest import Env, check, log
from zkhelpers import zk_props

env = Env()
zk = env.zookeeper()
n = env.leafd("n", zk_props(zk.address(), **{"leafd.sequence.enable": "true",
                                             "leafd.zk.session.timeout.ms": "3000"}))
check(n.stop() == 0, "the node stops cleanly (its worker ID and time are in the local cache)")
zk.stop()
t = time.time()
n.start(wait_ready=False)
rc = n.wait_exit(40)
log("exit code %r after %.1f s" % (rc, time.time() - t))
check(rc == 1, "with ZooKeeper unreachable the node exits 1 (got %r)" % rc)
check("cannot reach ZooKeeper" in n.log_text(), "and says why")
env.finish()
