"""An identity rule (docs/IDENTITY.md): two live nodes with one identity.

Node A serves as 127.0.0.1:PA. Node B listens on another port but has leaf.snowflake.port = PA,
so its identity is A's. Both are hammered in parallel for 12 s while B starts:
- no ID is issued twice (today B "still belongs to a previous session", then serves as A's
  worker: duplicates);
- while B waits for the identity, /health is 200 and /ready 503;
- B exits 1 within leafd.zk.session.timeout.ms + 2 s (+ slack), naming the identity and the keys
  leafd.snowflake.advertise.ip and leaf.snowflake.port;
- A keeps serving throughout;
- a kill -9 of A followed by an immediate restart on the same data dir is not slowed by the
  identity rule (it takes over its own previous session's znode): ready well before the
  session timeout.
"""
import time

from identityhelpers import Hammer
from leafdtest import Env, check, http, log, wait_until
from zkhelpers import zk_props

SESSION_MS = 6000
EXIT_WITHIN_S = SESSION_MS / 1000 + 2 + 8  # session timeout + 2 s, plus start-up slack
MSG_IDENTITY = "identity 127.0.0.1:%d"     # % A's port
MSG_KEYS = ("leafd.snowflake.advertise.ip", "leaf.snowflake.port")
HAMMER_S = 12

env = Env()
zk = env.zookeeper()
props = zk_props(zk.address(), **{"leafd.zk.session.timeout.ms": str(SESSION_MS)})
a = env.leafd("a", props)
b_props = dict(props)
b_props["leaf.snowflake.port"] = str(a.port)
b = env.leafd("b", b_props, wait_ready=False)

h = Hammer([a, b]).start()
t0 = time.time()
health, ready = set(), set()
while time.time() - t0 < HAMMER_S:
    if b.proc.alive():
        try:
            health.add(http(b.port, "/health", timeout=2)[0])
            ready.add(http(b.port, "/ready", timeout=2)[0])
        except OSError:
            pass
    time.sleep(0.2)
rc = b.wait_exit(max(1, EXIT_WITHIN_S - (time.time() - t0)))
h.stop()
log("hammer: %s; duplicates %d" % (h.summary(), h.duplicates()))
check(h.total() > 1000, "the hammer got IDs (%d)" % h.total())
check(h.duplicates() == 0, "no ID issued twice by two nodes of one identity (%d duplicates)"
      % h.duplicates())
check(len(h.ids[b.port]) == 0, "the twin issued no snowflake ID (%d)" % len(h.ids[b.port]))
check(200 in health, "/health of the waiting twin answered 200 (%s)" % health)
check(ready == {503} or not ready, "/ready of the waiting twin was 503 only (%s)" % ready)
check(rc == 1, "the twin exited 1 within the session timeout + 2 s (rc %s)" % rc)
text = b.log_text()
check(MSG_IDENTITY % a.port in text, "the twin's log names the identity:\n" + text[-1500:])
for key in MSG_KEYS:
    check(key in text, "the twin's log names %s" % key)
if rc is None:
    b.stop()
check(a.get("/ready")[0] == 200 and a.get("/api/snowflake/get/x")[0] == 200,
      "A serves throughout")

# A kill -9 and an immediate restart on the same data dir is not slowed by the rule.
a.proc.kill9()
t = time.time()
a.start(wait_ready=False)
ok = a.wait_ready(SESSION_MS / 1000 + 5)
took = time.time() - t
check(ok and took < SESSION_MS / 1000, "A restarted after kill -9 in %.1f s (< the %d ms session "
      "timeout): its own previous session is not waited for" % (took, SESSION_MS))
rc = a.stop()
check(rc == 0, "A stops gracefully (exit %s); its log's end:\n%s" % (rc, a.log_text()[-2000:]))
env.finish()
