"""Three ZooKeeper-coordinated nodes: distinct worker IDs matching their znodes,
Leaf's znode JSON, the timestamp rewritten every 3 s, the local cache file,
restart reusing the worker ID without a second node, and a graceful stop that
removes the ephemeral node at once and restarts without waiting
(snowflake rules, the ZooKeeper layout and the local cache)."""
import json
import os
import time

from leafdtest import Env, check, log
from zkhelpers import cli_get, cli_list, ms_of, ready_json, wait_ephemeral, worker_of, zk_props

env = Env()
zk = env.zookeeper()
nodes = [env.leafd("n%d" % i, zk_props(zk.address())) for i in range(3)]
forever = "/snowflake/it/leaf_forever"

kids = cli_list(zk, forever)
log("leaf_forever: %s" % kids)
check(kids is not None and len(kids) == 3, "three leaf_forever nodes, got %s" % kids)
workers = {}
for n in nodes:
    ids = n.get_ids("/api/snowflake/get/a?count=5")
    w = worker_of(ids[0])
    workers[n.port] = w
    mine = [k for k in kids or [] if k.startswith("127.0.0.1:%d-" % n.port)]
    check(len(mine) == 1 and int(mine[0].rsplit("-", 1)[1]) == w,
          "worker ID %d of node %d matches its znode %s" % (w, n.port, mine))
    st, r = ready_json(n)
    check(st == 200 and r["snowflake"]["worker_id"] == w and
          r["snowflake"]["zookeeper"]["session"] == "connected",
          "/ready shows worker %d and a connected session: %s" % (w, r))
check(len(set(workers.values())) == 3, "three distinct worker IDs: %s" % workers)

# /ready 200 promises a worker ID held, not the ephemeral node yet (/ready's "ephemeral" says it).
check(wait_ephemeral(nodes), "/ready: every node created its ephemeral node")
temps = cli_list(zk, "/snowflake/it/leaf_temporary")
check(sorted(temps or []) == sorted("127.0.0.1:%d" % n.port for n in nodes),
      "one ephemeral node per live node: %s" % temps)

# Leaf's JSON, with the port as a string, and a timestamp that advances every 3 s.
n0 = nodes[0]
path0 = "%s/127.0.0.1:%d-%010d" % (forever, n0.port, workers[n0.port])
d1 = json.loads(cli_get(zk, path0))
check(d1["ip"] == "127.0.0.1" and d1["port"] == str(n0.port) and isinstance(d1["timestamp"], int),
      "znode data is {ip, port as string, timestamp}: %s" % d1)
check(abs(d1["timestamp"] - (time.time() * 1000 + 5000)) < 6000,
      "the stored timestamp is a reservation a few seconds ahead: %s" % d1)
time.sleep(3.5)
d2 = json.loads(cli_get(zk, path0))
check(d2["timestamp"] > d1["timestamp"], "timestamp advanced within 3.5 s: %s -> %s" % (d1, d2))
eph = json.loads(cli_get(zk, "/snowflake/it/leaf_temporary/127.0.0.1:%d" % n0.port) or "{}")
check(eph.get("port") == str(n0.port), "ephemeral node holds the same JSON: %s" % eph)

cache = os.path.join(n0.dir, "data", "it", str(n0.port), "workerID.properties")
text = open(cache).read()
check("workerID=%d\n" % workers[n0.port] in text and "timestamp=" in text,
      "local cache holds workerID and timestamp: %r" % text)

# Graceful stop: the ephemeral node vanishes at once; the cache holds the last issued time.
before = n0.get_ids("/api/snowflake/get/a?count=100")
check(n0.stop() == 0, "graceful stop exits 0")
temps = cli_list(zk, "/snowflake/it/leaf_temporary")
check("127.0.0.1:%d" % n0.port not in (temps or []), "ephemeral node gone after stop: %s" % temps)
stored = int(open(cache).read().split("timestamp=")[1].split()[0])
check(stored >= ms_of(before[-1]), "cache after stop (%d) >= last issued ms (%d)"
      % (stored, ms_of(before[-1])))

# Restart: same worker ID, no second node, serves at once, IDs above the old ones.
t0 = time.time()
n0.start()
took = time.time() - t0
after = n0.get_ids("/api/snowflake/get/a?count=5")
check(worker_of(after[0]) == workers[n0.port], "restart reuses worker ID %d" % workers[n0.port])
check(after[0] > before[-1], "IDs after restart are above the ones before")
check(took < 8, "graceful restart did not wait out a reservation (%.1f s)" % took)
kids2 = cli_list(zk, forever)
check(kids2 is not None and sorted(kids2) == sorted(kids), "restart created no second node: %s" % kids2)
check(wait_ephemeral([n0]), "/ready: the ephemeral node is created after restart")
check("127.0.0.1:%d" % n0.port in (cli_list(zk, "/snowflake/it/leaf_temporary") or []),
      "ephemeral node back after restart")
for n in nodes:
    check(n.stop() == 0, "node %d stops cleanly" % n.port)
env.finish()
