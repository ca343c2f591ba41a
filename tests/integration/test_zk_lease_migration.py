"""Migration: a cluster running in forever mode restarts in lease mode on the
same ZooKeeper, and no worker ID issues at or below the timestamp its
leaf_forever node recorded (docs/cluster.md, "Worker-ID leases").

Three forever nodes serve, then stop: x and y gracefully, z with kill -9 (its
leaf_forever timestamp is then a reservation up to reserve.ms ahead). They
restart in lease mode with the same data dirs; y's local cache is replaced by
one Leaf would write (workerID only, no timestamp), so its floor can only come
from ZooKeeper's leaf_forever node. A fourth forever node, w, keeps running:
its worker ID is never taken as a slot, even by a lease node whose cache names
it. Checks: each restarted node takes its old worker ID back as its slot, and
every ID it issues is above that worker's leaf_forever timestamp.
"""
import json
import os

from leafdtest import Env, check, log, wait_until
from zkhelpers import cli_get, cli_list, ms_of, ready_json, worker_of, zk_props

FOREVER = "/snowflake/it/leaf_forever"


def forever_stamps(zk):
    out = {}
    for child in cli_list(zk, FOREVER) or []:
        data = cli_get(zk, "%s/%s" % (FOREVER, child))
        out[int(child.rsplit("-", 1)[1])] = json.loads(data)["timestamp"]
    return out


env = Env()
zk = env.zookeeper()
nodes = {name: env.leafd(name, zk_props(zk.address(), **{"leafd.zk.session.timeout.ms": "4000"}))
         for name in ("x", "y", "z", "w")}
worker = {}
for name, n in nodes.items():
    worker[name] = worker_of(n.get_ids("/api/snowflake/get/m?count=100")[0])
log("forever workers: %s" % worker)
check(nodes["x"].stop() == 0 and nodes["y"].stop() == 0, "x and y stop gracefully")
nodes["z"].proc.kill9()
# Until its session expires z's leaf_temporary node says it may still run, and
# no lease node would take its worker ID (the same guard as for w below).
zid = "127.0.0.1:%d" % nodes["z"].port
check(wait_until(lambda: zid not in (cli_list(zk, "/snowflake/it/leaf_temporary") or []), 20,
                 interval=0.5), "z's ephemeral node vanished with its session")
stamps = forever_stamps(zk)
log("leaf_forever timestamps: %s" % stamps)

# y: a cache as Leaf writes it (no timestamp): the floor must come from ZooKeeper.
ycache = os.path.join(nodes["y"].dir, "data", "it", str(nodes["y"].port), "workerID.properties")
with open(ycache, "w") as f:
    f.write("workerID=%d\n" % worker["y"])
# v: a new lease node whose cache names w's worker ID while w still runs in forever mode.
v_dir_port = None

for name in ("x", "y", "z"):
    n = nodes[name]
    n.props["leafd.snowflake.worker.mode"] = "lease"
    n.start(timeout=40)
    ids = n.get_ids("/api/snowflake/get/m?count=200")
    lease = ready_json(n)[1]["snowflake"]["lease"]
    w = worker[name]
    check(lease.get("slot") == w, "%s took its forever worker ID %d back as its slot (%s)"
          % (name, w, lease))
    low = min(ms_of(i) for i in ids if worker_of(i) == w) if ids else 0
    check(low > stamps[w], "%s: its lowest ID's time %d is above leaf_forever's %d"
          % (name, low, stamps[w]))
    res = json.loads(cli_get(zk, "/snowflake/it/leaf_lease/%010d" % w) or "{}").get("reserved", 0)
    check(res > stamps[w], "%s: slot %d's reservation is above the forever timestamp" % (name, w))

# A lease node whose cache names the worker ID of w, still alive in forever mode.
v = env.leafd("v", zk_props(zk.address(), **{"leafd.snowflake.worker.mode": "lease"}),
              wait_ready=False)
v.stop()
vcache = os.path.join(v.dir, "data", "it", str(v.port))
os.makedirs(vcache, exist_ok=True)
with open(os.path.join(vcache, "workerID.properties"), "w") as f:
    f.write("workerID=%d\ntimestamp=0\n" % worker["w"])
v.start(timeout=40)
sv = ready_json(v)[1]["snowflake"]["lease"].get("slot")
check(sv is not None and sv != worker["w"],
      "a lease node never takes the worker ID of a live forever node (%s vs %d)" % (sv, worker["w"]))
ids_w = nodes["w"].get_ids("/api/snowflake/get/m?count=50")
ids_v = v.get_ids("/api/snowflake/get/m?count=50")
check(not (set(ids_w) & set(ids_v)), "the forever node and the lease node issue distinct IDs")
for n in list(nodes.values()) + [v]:
    n.stop()
env.finish()
