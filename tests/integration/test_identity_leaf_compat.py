"""An identity rule (docs/IDENTITY.md): Meituan Leaf's own layout.

Three Leaf nodes are registered directly in ZooKeeper as Leaf registers them
(/snowflake/lc/forever/{ip}:{port}-{seq}, PERSISTENT_SEQUENTIAL, {"ip","port","timestamp"} with
the port a string), the third with the identity of leafd node `takeover` and a timestamp a few
seconds ahead (Leaf's last report from a clock slightly ahead).
- Without leafd.snowflake.leaf.compat, leafd exits 1 naming /snowflake/lc/forever.
- With it, a new leafd identity registers exactly as Leaf does: a child of the same sequential
  parent, the next sequence (3), Leaf's JSON; its worker ID is that sequence, distinct from
  every Leaf node's; nothing is created under leaf_forever.
- A leafd node with a Leaf node's ip:port takes over that worker ID and issues only above that
  node's timestamp.
"""
import json
import time

from identityhelpers import leaf_register
from leafdtest import Env, check, free_port, log
from zkhelpers import cli_get, cli_list, ms_of, start_expect_exit, worker_of, zk_props

NAME = "lc"
LEAF_PARENT = "/snowflake/%s/forever" % NAME
LEAFD_PARENT = "/snowflake/%s/leaf_forever" % NAME
MSG_REFUSE = LEAF_PARENT            # the exit-1 line names Leaf's parent
MSG_KEY = "leafd.snowflake.leaf.compat"
AHEAD_MS = 4000                      # the Leaf node's recorded timestamp is this far ahead

env = Env()
zk = env.zookeeper()
now = int(time.time() * 1000)
takeover_port = free_port()
leaf = leaf_register(zk, NAME, [("127.9.9.1", 8080, now - 1000), ("127.9.9.2", 8080, now - 2000),
                                ("127.0.0.1", takeover_port, now + AHEAD_MS)])
log("Leaf nodes: %s" % leaf)
check(sorted(w for _, w in leaf.values()) == [0, 1, 2], "three Leaf nodes hold 0, 1, 2")

plain = env.leafd("plain", zk_props(zk.address(), name=NAME), wait_ready=False)
rc = plain.wait_exit(20)
text = plain.log_text()
if rc is None:
    plain.stop()
check(rc == 1, "without leaf.compat leafd refuses a cluster with Leaf nodes (rc %s)" % rc)
check(MSG_REFUSE in text and MSG_KEY in text, "the refusal names %s and %s:\n%s"
      % (LEAF_PARENT, MSG_KEY, text[-1200:]))

compat = {"leafd.snowflake.leaf.compat": "true"}
new = env.leafd("new", zk_props(zk.address(), name=NAME, **compat), wait_ready=False)
if not new.wait_ready(30):
    check(False, "a new leafd identity starts in compat mode:\n" + new.log_text()[-1500:])
else:
    ids = new.get_ids("/api/snowflake/get/c?count=100")
    kids = cli_list(zk, LEAF_PARENT) or []
    mine = [k for k in kids if k.startswith("127.0.0.1:%d-" % new.port)]
    check(len(mine) == 1, "it registered under Leaf's parent: %s" % kids)
    if mine:
        seq = int(mine[0].rsplit("-", 1)[1])
        check(seq == 3, "with the next sequence of Leaf's parent (%d)" % seq)
        check(all(worker_of(i) == seq for i in ids), "its worker ID is that sequence")
        data = json.loads(cli_get(zk, LEAF_PARENT + "/" + mine[0]) or "{}")
        check(sorted(data) == ["ip", "port", "timestamp"] and data.get("ip") == "127.0.0.1" and
              data.get("port") == str(new.port) and isinstance(data.get("timestamp"), int),
              "Leaf's JSON, port a string: %s" % data)
    check(not set(worker_of(i) for i in ids) & {0, 1, 2}, "no Leaf node's worker ID is reused")
    check(not (cli_list(zk, LEAFD_PARENT) or []), "nothing under leaf_forever")

t = env.leafd("takeover", zk_props(zk.address(), name=NAME, **compat), port=takeover_port,
              wait_ready=False)
if not t.wait_ready(40):
    check(False, "the node with a Leaf node's ip:port starts:\n" + t.log_text()[-1500:])
else:
    ids = t.get_ids("/api/snowflake/get/c?count=200")
    check(all(worker_of(i) == 2 for i in ids), "it took over the Leaf node's worker ID 2")
    low = min(ms_of(i) for i in ids)
    check(low > now + AHEAD_MS, "its first ID's time %d is above the Leaf node's timestamp %d"
          % (low, now + AHEAD_MS))
    kids = cli_list(zk, LEAF_PARENT) or []
    check(len([k for k in kids if k.startswith("127.0.0.1:%d-" % takeover_port)]) == 1,
          "and created no second node for that identity: %s" % kids)
    check(not [k for k in (cli_list(zk, LEAFD_PARENT) or []) if k.startswith("127.0.0.1:%d-"
                                                                             % takeover_port)],
          "nor any node under leaf_forever")
for n in (new, t):
    n.stop()
env.finish()
