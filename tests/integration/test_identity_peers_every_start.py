"""An identity rule (docs/IDENTITY.md): every start compares the clock with the live
peers, not only the first registration.

Peers p0 and p1 serve. Node r registers (first start, clock right), stops gracefully, and
restarts with its wall clock one day ahead (libfaketime, monotonic clock untouched): it finds
its own leaf_forever node, so today it skips the peer check and serves IDs a day in the future.
It must exit 1 naming leafd.snowflake.peer.max.offset.ms, issue nothing, and start again once
its clock is right."""
from leafdtest import Env, check
from zkhelpers import faketime_env, start_expect_exit, zk_props

MSG_KEY = "leafd.snowflake.peer.max.offset.ms"
MSG_REFUSE = "refusing to start"

env = Env()
zk = env.zookeeper()
peers = [env.leafd("p%d" % i, zk_props(zk.address())) for i in range(2)]
r = env.leafd("r", zk_props(zk.address()))
before = r.get_ids("/api/snowflake/get/e?count=10")
check(r.stop() == 0, "r stops gracefully")

rc, text = start_expect_exit(r, faketime_env("+1d"), timeout=15)
check(rc == 1, "a restart a day ahead of its peers is refused (rc %s)" % rc)
check(MSG_REFUSE in text and MSG_KEY in text, "the refusal names the peer check:\n" + text[-1200:])

# The refused start must have persisted nothing from its clock (the check comes before any
# reservation is written): today it served a day ahead, and the restart below is refused.
r.start(wait_ready=False)
if r.wait_ready(30):
    after = r.get_ids("/api/snowflake/get/e?count=10")
    check(after[0] > before[-1], "with its clock right it starts again, above its earlier IDs")
else:
    check(False, "with its clock right it starts again:\n" + r.log_text()[-1200:])
for n in peers + [r]:
    check(n.stop() == 0, "graceful stop")
env.finish()
