"""ZooKeeper as a weak dependency at run time and its absence at start:

- ZooKeeper stopped for longer than the reservation (reserve.ms) and
  restarted, under load: no client sees an error (the local reservation
  keeps advancing), /ready stays 200 and shows the session state, and the
  node reports to ZooKeeper again afterwards.
- ZooKeeper down at start: the node starts from its local cache above every
  ID issued before, and registers (ephemeral node) once ZooKeeper is back."""
import json
import time

from leafdtest import Env, check, log, wait_until
from zkhelpers import Load, cli_get, cli_list, ready_json, worker_of, zk_props

env = Env()
zk = env.zookeeper()
props = zk_props(zk.address(), **{"leafd.zk.session.timeout.ms": "20000",
                                  "leafd.snowflake.reserve.ms": "3000"})
n = env.leafd("n", props)
w = worker_of(n.get_ids("/api/snowflake/get/o")[0])
path = "/snowflake/it/leaf_forever/127.0.0.1:%d-%010d" % (n.port, w)

load = Load([n], count=20)
load.start()
time.sleep(0.5)
mark = len(n.log_text())
zk.stop()
log("ZooKeeper stopped")
time.sleep(7)  # more than reserve.ms (3 s): only the local reservation keeps IDs flowing
st, r = ready_json(n)
log("ready while ZooKeeper is down: %s" % r)
check(st == 200 and r["snowflake"]["zookeeper"]["session"] == "connecting",
      "/ready stays 200 and shows the session connecting: %s" % r)
outage_log = n.log_text()[mark:].splitlines()
client = [l for l in outage_log if "component=zookeeper" in l]
log("log lines during the 7 s outage: %d, of them the ZooKeeper client's: %d"
    % (len(outage_log), len(client)))
# The client writes ~5 lines a second while the server is down; leafd keeps the first,
# then one summary per 30 s (none within 7 s), and logs the state change itself.
check(len(client) <= 2, "the client's own lines are quieted: %d in 7 s (%r)" % (len(client), client[:4]))
check(any("ZooKeeper connection lost" in l for l in outage_log), "the state change is logged")
zk.start()
log("ZooKeeper restarted")
ok = wait_until(lambda: ready_json(n)[1]["snowflake"]["zookeeper"]["session"] == "connected", 30)
check(ok, "session reconnected")
check(any("client lines held back while disconnected" in l for l in n.log_text()[mark:].splitlines()),
      "on reconnection, the count of lines held back is logged once")
time.sleep(4)
errors = load.finish()
check(not errors, "no client error while ZooKeeper was down and back: %s" % errors[:3])
check(len(load.ids[n.port]) > 100, "IDs flowed throughout (%d)" % len(load.ids[n.port]))
# Against the time the read began: zkCli (a JVM) can take seconds to start and exit on a loaded
# machine, longer than the reservation's 3 s lead. A record from before the outage is older than
# that by the outage's 7 s at least.
t_read = time.time()
d = json.loads(cli_get(zk, path))
check(d["timestamp"] > t_read * 1000, "node reports a fresh reservation again: %s (read at %d)"
      % (d, t_read * 1000))
last = n.get_ids("/api/snowflake/get/o?count=100")[-1]

# ZooKeeper down at start: start from the cache.
n.stop(9)
zk.stop()
n.start(timeout=40)
st, r = ready_json(n)
log("started without ZooKeeper: %s" % r)
first = n.get_ids("/api/snowflake/get/o?count=10")
check(worker_of(first[0]) == w and first[0] > last,
      "started from the cache: same worker %d, IDs above the old ones" % w)
check(r["snowflake"]["zookeeper"]["registered"] is False, "/ready says not registered yet")
check("starting from the local cache" in n.log_text(), "log says it started from the cache")
zk.start()
reg = wait_until(lambda: ready_json(n)[1]["snowflake"]["zookeeper"]["ephemeral"], 40, interval=0.5)
check(reg, "registered and ephemeral node created once ZooKeeper is back")
check("127.0.0.1:%d" % n.port in (cli_list(zk, "/snowflake/it/leaf_temporary") or []),
      "ephemeral node visible in ZooKeeper")
check(n.stop() == 0, "graceful stop")
env.finish()
