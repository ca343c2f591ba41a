"""Conditional writes of a node's time (docs/IDENTITY.md): the node writes its
leaf_forever node only at the version it last wrote. Someone writes it behind the
node's back (zkCli, as an operator or a twin would): the node's next write is
refused, it issues nothing above what ZooKeeper acknowledged while it checks that
the identity is still its own (its EPHEMERAL node is its session's), then reads
the version again and goes on. IDs stay strictly increasing, no client error.
"""
import json
import time

from leafdtest import Env, check, log, wait_until
from zkhelpers import Load, cli_get, cli_list, zk_props

env = Env()
zk = env.zookeeper()
n = env.leafd("n", zk_props(zk.address()))
kids = cli_list(zk, "/snowflake/it/leaf_forever") or []
check(len(kids) == 1, "one leaf_forever node: %s" % kids)
path = "/snowflake/it/leaf_forever/" + kids[0]
load = Load([n], count=20)
load.start()
time.sleep(1.0)
data = json.loads(cli_get(zk, path))
data["timestamp"] = data["timestamp"] - 1  # an older time, written behind the node's back
zk.cli("set", path, json.dumps(data, separators=(",", ":")))
refused = wait_until(lambda: "written by someone else" in n.log_text(), 10, 0.2)
check(refused, "the node's next conditional write is refused, and it says so")
resumed = wait_until(lambda: "writing its time again" in n.log_text(), 10, 0.2)
check(resumed, "the identity is confirmed the node's own, and it writes its time again")
stamp = lambda: json.loads(cli_get(zk, path)).get("timestamp", 0)
check(wait_until(lambda: stamp() > data["timestamp"] + 1000, 10, 0.3),
      "the node's time in ZooKeeper moves on after the re-check")
time.sleep(1.0)
errors = load.finish()
check(not errors, "no client saw an error: %s" % errors[:3])
check(len(load.ids[n.port]) > 100, "IDs kept flowing (%d)" % len(load.ids[n.port]))
check(n.stop() == 0, "graceful stop")
env.finish()
