"""A three-server ZooKeeper ensemble on loopback: stopping any one server
(then restarting it before the next) does not disturb the nodes: no client
error, /ready stays 200, worker IDs unchanged."""
import time

from leafdtest import Env, check, log, wait_until
from zkhelpers import Load, cli_list, ready_json, worker_of, zk_props

env = Env()
zks = env.zookeeper_ensemble(3)
address = ",".join(z.address() for z in zks)
nodes = [env.leafd("n%d" % i, zk_props(address, **{"leafd.zk.session.timeout.ms": "6000"}))
         for i in range(2)]
workers = [worker_of(n.get_ids("/api/snowflake/get/z")[0]) for n in nodes]
check(len(set(workers)) == 2, "distinct worker IDs on the ensemble: %s" % workers)

load = Load(nodes, count=20)
load.start()
for z in zks:
    log("stopping %s" % z.name)
    z.stop()
    time.sleep(4)
    for n in nodes:
        st, r = ready_json(n)
        check(st == 200, "node %d ready with %s down: %s" % (n.port, z.name, r))
    z.start(wait=False)
    check(wait_until(z.serving, 60), "%s rejoined the ensemble" % z.name)
    for n in nodes:
        ok = wait_until(lambda: ready_json(n)[1]["snowflake"]["zookeeper"]["session"] ==
                        "connected", 20)
        check(ok, "node %d connected after %s came back" % (n.port, z.name))
errors = load.finish()
check(not errors, "no client error while servers were stopped one at a time: %s" % errors[:3])
for n, w in zip(nodes, workers):
    check(worker_of(n.get_ids("/api/snowflake/get/z")[0]) == w, "worker ID unchanged")
    check(ready_json(n)[1]["snowflake"]["zookeeper"]["expirations"] == 0, "no session expired")
temps = cli_list(zks[0], "/snowflake/it/leaf_temporary")
check(len(temps or []) == 2, "both ephemeral nodes present: %s" % temps)
for n in nodes:
    check(n.stop() == 0, "node stops cleanly")
env.finish()
