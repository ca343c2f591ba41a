"""An identity rule (docs/IDENTITY.md): the cluster's ID shape (layout, epoch, time
unit) is recorded under /snowflake/{leaf.name} at the first start and checked at every start.

A serves with the defaults: the shape is recorded (SHAPE_NODE). A restart of A, or a start of a
new node, with another epoch, layout or time unit exits 1 naming both values. With the shape
record gone (a cluster from before the record), a restart with a later epoch must not issue IDs
whose time field is at or below what A issued before (the stored-time check compares the IDs'
time field, not the wall clock): it exits 1, or issues above.
"""
import json

from leafdtest import Env, check, log
from zkhelpers import cli_get, start_expect_exit, zk_props

NAME = "it"
SHAPE_NODE = "/snowflake/%s/leafd_shape" % NAME  # zk/zk_shape.h ZK_SHAPE_NODE
LAYOUT = "time:41,worker:10,sequence:12"
EPOCH = 1288834974657
MSG_SHAPE = "cluster shape mismatch"
HOUR = 3600000
REFUSE_S = 8  # a refusal comes within a second or two of the session; today none comes

env = Env()
zk = env.zookeeper()
a = env.leafd("a", zk_props(zk.address()))
before = a.get_ids("/api/snowflake/get/s?count=10")
rec = cli_get(zk, SHAPE_NODE)
check(rec is not None and LAYOUT in rec and str(EPOCH) in rec,
      "the shape is recorded in %s: %s" % (SHAPE_NODE, rec))
check(a.stop() == 0, "graceful stop")

cases = [("leafd.snowflake.epoch", str(EPOCH + HOUR), str(EPOCH), str(EPOCH + HOUR)),
         ("leafd.snowflake.layout", "time:41,worker:12,sequence:10", LAYOUT,
          "time:41,worker:12,sequence:10"),
         ("leafd.snowflake.time.unit.ms", "10", "time unit 1 ms", "time unit 10 ms")]
for key, value, recorded, configured in cases:
    a.props[key] = value
    rc, text = start_expect_exit(a, timeout=REFUSE_S)
    check(rc == 1, "a restart with %s = %s is refused (rc %s)" % (key, value, rc))
    check(MSG_SHAPE in text and recorded in text and configured in text,
          "the refusal names both values (%s, %s):\n%s" % (recorded, configured, text[-1200:]))
    del a.props[key]
    new = env.leafd("new_" + key.rsplit(".", 1)[1], zk_props(zk.address(), **{key: value}),
                    wait_ready=False)
    rc = new.wait_exit(REFUSE_S)
    if rc is None:
        new.stop()
    check(rc == 1, "a new node with %s = %s is refused (rc %s)" % (key, value, rc))

a.start(timeout=30)
check(a.get_ids("/api/snowflake/get/s")[0] > before[-1], "with the recorded shape A starts")
high = a.get_ids("/api/snowflake/get/s?count=10")[-1]
check(a.stop() == 0, "graceful stop")

# Without the record (a cluster from before it), a later epoch: compare the IDs' time field.
zk.cli("delete", SHAPE_NODE)
a.props["leafd.snowflake.epoch"] = str(EPOCH + HOUR)
a.start(wait_ready=False)
rc = a.wait_exit(REFUSE_S)
if rc is None:
    ids = []
    if a.wait_ready(10):
        ids = a.get_ids("/api/snowflake/get/s?count=10")
    a.stop()
    old_tick = high >> 22
    check(ids and min(i >> 22 for i in ids) > old_tick,
          "a later epoch never issues a time field at or below the one issued before "
          "(%s vs %d)" % ([i >> 22 for i in ids[:1]], old_tick))
else:
    check(rc == 1, "or it refuses to start (rc %s)" % rc)
env.finish()
