"""An identity rule (docs/IDENTITY.md) across a ZooKeeper outage: the data dir's own node
takes its previous process's identity lock back at once; a twin never issues.

Node A serves as 127.0.0.1:PA. ZooKeeper stops (kill -9 of the server) and A is stopped while
it is down, so A's session outlives A: its EPHEMERAL leaf_temporary node stays in ZooKeeper.
A starts again on the same data dir and serves from its own cache (ZooKeeper still down).
ZooKeeper comes back and at once a twin B (another port, leaf.snowflake.port = PA: A's
identity) starts. Both are hammered in parallel:
- A's first contact with ZooKeeper takes its previous session's znode over (the data dir's lock
  proves that process gone), so the twin finds the identity held by a live session, issues
  nothing and exits 1 naming the identity (before: A waited for its old session to expire,
  and whichever created the znode first after the expiry won; in a chaos run the twin won and
  both served worker ID 1 for 19 s);
- no ID is issued twice; A serves throughout and keeps its worker ID.
"""
import time

from identityhelpers import Hammer
from leafdtest import Env, check, http, log, wait_until
from zkhelpers import zk_props

SESSION_MS = 6000
# The twin waits the session timeout + 2 s, then exits; plus start-up slack.
TWIN_EXIT_S = SESSION_MS / 1000 + 2 + 10
MSG_TAKEOVER = "taking it over"

env = Env()
zk = env.zookeeper()
props = zk_props(zk.address(), **{"leafd.zk.session.timeout.ms": str(SESSION_MS)})
a = env.leafd("a", props)
first = a.get_ids("/api/snowflake/get/x")[0]
log("A before: %s" % a.get("/decodeSnowflakeId?snowflakeId=%d" % first)[1].strip())

zk.stop()
rc = a.stop()
check(rc == 0, "A stopped with ZooKeeper down (exit %s)" % rc)
a.start(wait_ready=False)
check(a.wait_ready(20), "A serves from its own cache with ZooKeeper down:\n"
      + a.log_text()[-2000:])

b_props = dict(props)
b_props["leaf.snowflake.port"] = str(a.port)
zk.start()
b = env.leafd("b", b_props, wait_ready=False)
h = Hammer([a, b]).start()
rc = b.wait_exit(TWIN_EXIT_S)
# Keep hammering A past the old session's expiry, when the race used to be decided.
time.sleep(SESSION_MS / 1000 + 3)
h.stop()
log("hammer: %s; duplicates %d" % (h.summary(), h.duplicates()))
check(h.duplicates() == 0, "no ID issued twice (%d duplicates)" % h.duplicates())
check(len(h.ids[b.port]) == 0, "the twin issued no snowflake ID (%d)" % len(h.ids[b.port]))
check(rc == 1, "the twin exited 1 (rc %s); its log's end:\n%s" % (rc, b.log_text()[-1500:]))
if rc is None:
    b.stop()
check("identity 127.0.0.1:%d" % a.port in b.log_text(), "the twin's log names the identity")
text = a.log_text()
check(MSG_TAKEOVER in text, "A took its previous session's znode over:\n" + text[-2500:])
check(wait_until(lambda: http(a.port, "/ready")[0] == 200, 10), "A is ready at the end")
check(len(h.ids[a.port]) > 1000, "A served throughout (%d IDs)" % len(h.ids[a.port]))
check(a.stop() == 0, "A stops gracefully")
env.finish()
