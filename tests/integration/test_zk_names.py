"""Worker-ID assignment: two nodes started at the same instant on an empty
ZooKeeper get different worker IDs, parsed from the node actually created
(Leaf defect 2: Leaf left them at 0); a leaf.name containing '-' works (Leaf
defect 3: Leaf split the whole path on '-'); a worker ID above 1023 stops
start-up with a clear message; an advertised ip:port that is not the listen
address is warned about at start."""
from leafdtest import Env, check, log, wait_until
from zkhelpers import cli_list, start_expect_exit, worker_of, zk_props

env = Env()
zk = env.zookeeper()

# Defect 2 + 3: two nodes at once, on an empty ZooKeeper, with '-' in leaf.name
# (and a sequence suffix-like part in it, to trip a naive split).
name = "my-leaf-0000000042-x"
a = env.leafd("a", zk_props(zk.address(), name=name), wait_ready=False)
b = env.leafd("b", zk_props(zk.address(), name=name), wait_ready=False)
check(a.wait_ready(30) and b.wait_ready(30), "both nodes ready")
wa = worker_of(a.get_ids("/api/snowflake/get/x")[0])
wb = worker_of(b.get_ids("/api/snowflake/get/x")[0])
kids = cli_list(zk, "/snowflake/%s/leaf_forever" % name)
log("workers a=%d b=%d, nodes %s" % (wa, wb, kids))
check(wa != wb, "defect 2: two nodes started together got different worker IDs (%d, %d)" % (wa, wb))
check(sorted([wa, wb]) == [0, 1], "worker IDs are the sequence suffixes 0 and 1: %d, %d" % (wa, wb))
for n, w in ((a, wa), (b, wb)):
    check("127.0.0.1:%d-%010d" % (n.port, w) in (kids or []),
          "defect 3: worker %d of node %d matches its znode under a '-' leaf.name" % (w, n.port))
    st, body, _ = n.get("/decodeSnowflakeId?snowflakeId=%d" % n.get_ids("/api/snowflake/get/x")[0])
    check(st == 200 and '"workerId":"%d"' % w in body, "decode shows worker %d: %s" % (w, body))

# A node whose znode carries a sequence above 1023 refuses to start.
c = env.leafd("c", zk_props(zk.address(), name=name), wait_ready=False)
c.stop()
zk.cli("create", "/snowflake/%s/leaf_forever/127.0.0.1:%d-0000001024" % (name, c.port),
       '{"ip":"127.0.0.1","port":"%d","timestamp":1}' % c.port)
rc, text = start_expect_exit(c)
check(rc == 1, "worker ID 1024 stops start-up with exit 1 (got %s)" % rc)
check("worker ID 1024" in text and "above 1023" in text, "clear message:\n" + text[-800:])
# The advertised identity is checked against the listen address (docs/getting-started.md).
loud = "IS NOT WHERE THIS NODE LISTENS"
check(not any(loud in n.log_text() for n in (a, b)), "advertised = listen address: no warning")
d = env.leafd("d", zk_props(zk.address(), name=name, **{"leaf.snowflake.port": "1"}))
check(loud in d.log_text() and "leaf.snowflake.port" in d.log_text(),
      "leaf.snowflake.port other than the listen port: a loud warning naming the key")
d.stop()
e = env.leafd("e", zk_props(zk.address(), name=name, **{"leafd.snowflake.advertise.ip": "192.0.2.1"}))
check(loud in e.log_text(), "advertise ip other than the listen host: a loud warning")
e.stop()
for n in (a, b):
    check(n.stop() == 0, "node stops cleanly")
env.finish()
