"""ZooKeeper forgets this node's worker ID: the node stops issuing snowflake
IDs (another node may be given the same worker ID) instead of carrying on.

- the node's leaf_forever znode is deleted while it runs: within a report
  interval, ID requests get 503 and /ready is 503 with the reason;
- the node starts from its cache while ZooKeeper is down, and ZooKeeper
  comes back with its data lost: same outcome;
- a restart registers afresh and serves again, above every earlier ID."""
import shutil
import time

from leafdtest import Env, check, log, wait_until
from zkhelpers import ready_json, worker_of, zk_props

env = Env()
zk = env.zookeeper()
n = env.leafd("n", zk_props(zk.address()))
ids = n.get_ids("/api/snowflake/get/l?count=100")
w = worker_of(ids[0])
path = "/snowflake/it/leaf_forever/127.0.0.1:%d-%010d" % (n.port, w)
zk.cli("delete", path)
log("deleted " + path)
refused = wait_until(lambda: n.get("/api/snowflake/get/l")[0] == 503, 10, interval=0.2)
check(refused, "ID requests refused once the worker node is gone")
st, r = ready_json(n)
check(st == 503 and r["snowflake"]["worker_id"] == -1, "/ready 503 without a worker: %s" % r)
# The exists-watch on the node's own leaf_forever node says so at once (docs/IDENTITY.md);
# the next report's write would say it too.
text = n.log_text()
check("leaf_forever node vanished" in text or "worker node deleted from ZooKeeper" in text,
      "log says why")

n.stop()
n.start()
again = n.get_ids("/api/snowflake/get/l?count=10")
check(again[0] > ids[-1], "after a restart the node serves again, above earlier IDs")
last = again[-1]

# Start from the cache with ZooKeeper down, then ZooKeeper comes back empty.
n.stop(9)
zk.stop()
shutil.rmtree(zk.dir + "/data/version-2", ignore_errors=True)
n.start(timeout=40)
check(n.get_ids("/api/snowflake/get/l")[0] > last, "started from the cache above earlier IDs")
zk.start()
refused = wait_until(lambda: n.get("/api/snowflake/get/l")[0] == 503, 40, interval=0.5)
check(refused, "ID requests refused when ZooKeeper comes back without this node's worker ID")
check("worker ID not confirmed by ZooKeeper" in n.log_text(), "log says why")
check(n.stop() == 0, "graceful stop")
env.finish()
