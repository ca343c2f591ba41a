"""An identity rule (docs/IDENTITY.md): coordination data that is wiped never turns
into duplicates.

1. deleteall /snowflake/it under load: A and B are hammered; the tree is deleted. Each node
   sees its own registration vanish and stops issuing at once (a watch: within WATCH_S, not a
   report interval). A new node N started after the wipe is hammered together with them: no ID
   is issued twice. A restart of A is refused (exit 1 naming the recovery steps in
   docs/OPERATIONS.md): its data dir proves a newer state than ZooKeeper's (the cluster marker).
2. emptied ZooKeeper data dir: ZooKeeper is stopped, its data dir emptied, and started again.
   A restart of B is refused the same way.
"""
import shutil
import time

from identityhelpers import Hammer, count_duplicates, hammer
from leafdtest import Env, check, http, log, wait_until
from zkhelpers import start_expect_exit, zk_props

SESSION_MS = 4000
WATCH_S = 1.5
MSG_RECOVERY = "docs/OPERATIONS.md"
MSG_LOST = "lost the cluster's tree"

env = Env()
zk = env.zookeeper()
props = zk_props(zk.address(), **{"leafd.zk.session.timeout.ms": str(SESSION_MS)})
a = env.leafd("a", props)
b = env.leafd("b", props)

h = Hammer([a, b]).start()
time.sleep(2)
zk.cli("deleteall", "/snowflake/it")
t_del = time.time()
log("deleted /snowflake/it")


def refusing(node):
    try:
        return http(node.port, "/api/snowflake/get/x", timeout=2)[0] == 503
    except OSError:
        return False


stopped = wait_until(lambda: refusing(a) and refusing(b), 10, interval=0.05)
took = time.time() - t_del
check(stopped and took <= WATCH_S, "both nodes stopped issuing %.2f s after the deleteall "
      "(at most %.1f s: a watch, not the report interval)" % (took, WATCH_S))
n = env.leafd("n", props, wait_ready=False)
n.wait_ready(20)
time.sleep(8)
h.stop()
h2 = hammer([a, b, n], 5)
dup = count_duplicates(list(h.ids.values()) + list(h2.ids.values()))
check(dup == 0, "no ID issued twice after the wipe (%d duplicates)" % dup)

a.stop()
rc, text = start_expect_exit(a, timeout=12)
check(rc == 1, "a restart after the tree was lost is refused (rc %s)" % rc)
check(MSG_RECOVERY in text and MSG_LOST in text,
      "the refusal names the recovery steps:\n" + text[-1500:])

# 2. ZooKeeper's data dir emptied.
n.stop()
b.stop()
zk.stop()
shutil.rmtree(zk.dir + "/data/version-2", ignore_errors=True)
zk.start()
rc, text = start_expect_exit(b, timeout=12)
check(rc == 1, "a restart on an emptied ZooKeeper is refused (rc %s)" % rc)
check(MSG_RECOVERY in text, "the refusal names the recovery steps:\n" + text[-1500:])
env.finish()
