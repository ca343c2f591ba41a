"""An identity rule (docs/IDENTITY.md; docs/cluster.md, "Worker-ID leases"): a mixed forever/lease cluster.

Forever node F reaches ZooKeeper through a proxy. F serves, then the proxy blackholes: F keeps
serving on its local reservation (ZooKeeper is a weak dependency in forever mode) while its
session expires and its leaf_temporary node vanishes, so F no longer looks live. Lease nodes
start meanwhile, one of them with a local cache naming F's worker ID (the slot it would try
first). All of them are hammered in parallel with F:
- no lease node takes F's worker ID as its slot (a worker ID registered under leaf_forever by
  another identity is out of the lease pool);
- no ID is issued twice.
"""
import os
import subprocess
import time

from identityhelpers import Hammer
from leafdtest import Env, check, log, wait_until
from tcpproxy import Proxy
from zkhelpers import cli_list, ready_json, worker_of, zk_props

SESSION_MS = 4000
HAMMER_S = 10

env = Env()
zk = env.zookeeper()
proxy = Proxy(target=("127.0.0.1", zk.port))
f = env.leafd("f", zk_props("127.0.0.1:%d" % proxy.port,
                            **{"leafd.zk.session.timeout.ms": str(SESSION_MS)}))
# Other forever identities so that F's worker ID is not simply slot 0.
others = [env.leafd("o%d" % i, zk_props(zk.address())) for i in range(2)]
for o in others:
    o.stop()
fw = worker_of(f.get_ids("/api/snowflake/get/m?count=10")[0])
log("F holds worker ID %d" % fw)

# leafd --retire: refused for a live identity, done for a stopped one (its worker ID's
# lease slot then reserved above the forever node's recorded time).
LEAFD = os.environ["LEAFD_BIN"]
r = subprocess.run([LEAFD, "--retire", "127.0.0.1:%d" % f.port, "-c", f.conf], capture_output=True,
                   text=True, timeout=60)
check(r.returncode == 1 and "is live" in r.stderr, "--retire refuses a live identity: %s" % r.stderr)
r = subprocess.run([LEAFD, "--retire", "127.0.0.1:%d" % others[0].port, "-c", f.conf],
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and "retired 127.0.0.1:%d" % others[0].port in r.stdout,
      "--retire retires a stopped identity: %s" % (r.stdout + r.stderr))

h = Hammer([f]).start()
proxy.blackhole()
fid = "127.0.0.1:%d" % f.port
gone = wait_until(lambda: fid not in (cli_list(zk, "/snowflake/it/leaf_temporary") or []),
                  SESSION_MS / 1000 + 15, interval=0.5)
check(gone, "F's session expired on the ZooKeeper side (its ephemeral node is gone)")
check(f.get("/api/snowflake/get/m")[0] == 200, "F still serves, cut off from ZooKeeper")
h.stop()

lease_props = zk_props(zk.address(), **{"leafd.snowflake.worker.mode": "lease"})
tempted = env.leafd("tempted", lease_props, wait_ready=False)
tempted.stop()
cache = os.path.join(tempted.dir, "data", "it", str(tempted.port))
os.makedirs(cache, exist_ok=True)
with open(os.path.join(cache, "workerID.properties"), "w") as fh:
    fh.write("workerID=%d\ntimestamp=0\n" % fw)
tempted.start(timeout=40)
lease = [tempted] + [env.leafd("l%d" % i, lease_props, wait_ready=False) for i in range(3)]
check(all(n.wait_ready(40) for n in lease), "the lease nodes are ready")
slots = [ready_json(n)[1]["snowflake"].get("lease", {}).get("slot") for n in lease]
log("lease slots: %s" % slots)
check(fw not in slots, "no lease node took the worker ID %d of forever node F (%s)" % (fw, slots))

h = Hammer([f] + lease).start()
time.sleep(HAMMER_S)
h.stop()
log("hammer: %s" % h.summary())
check(len(h.ids[f.port]) > 0, "F kept serving during the hammer")
check(h.duplicates() == 0, "no ID issued twice (%d duplicates)" % h.duplicates())
proxy.heal()
for n in [f] + lease:
    n.stop()
proxy.close()
env.finish()
