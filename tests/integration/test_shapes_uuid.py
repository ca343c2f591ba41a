"""UUIDv7 (docs/id-shapes.md, "UUIDv7"), two forever-mode nodes on ZooKeeper:

- 100,000 UUIDs from each node (HTTP, count=10000): Python's uuid reads every
  one as version 7 of RFC 9562's variant; ascending per node; none shared;
- /decodeUuid gives back each node's worker ID and a time within the request;
  the worker sits in rand_b below the counter, as documented;
- RESP: LEAF.UUID key (a string), LEAF.UUID key count (an array), INCR uuid:k
  refused with WRONG_MODE, a bad count refused;
- a third node under libfaketime (wall clock only) stepped back 2 s while a
  client asks: not one failed request, its UUIDs ascending throughout, and
  their time runs ahead of the stepped clock (the bounded lead)."""
import json
import os
import time
import uuid

from leafdtest import Env, RespStream, RespError, check, log
from leadhelpers import FakeClock
from zkhelpers import FAKETIME_LIB, faketime_env, ready_json, zk_props

PER_NODE = 100000


def now_ms():
    return int(time.time() * 1000)


def get_uuids(node, count):
    st, body, _ = node.get("/api/uuid/get/orders?count=%d" % count)
    if st != 200:
        raise RuntimeError("uuid GET: %d %s" % (st, body))
    return body.split("\n")


env = Env()
zk = env.zookeeper()
nodes = [env.leafd("n%d" % k, zk_props(zk.address()), resp=True) for k in (0, 1)]
workers = [ready_json(n)[1]["snowflake"]["worker_id"] for n in nodes]
log("workers %s; 100,000 UUIDs from each" % workers)
texts = {}
for n in nodes:
    got = []
    t0 = time.monotonic()
    for _ in range(PER_NODE // 10000):
        got += get_uuids(n, 10000)
    log("%s: %d UUIDs in %.2f s" % (n.name, len(got), time.monotonic() - t0))
    texts[n.name] = got
ok_version = True
for name, got in texts.items():
    us = [uuid.UUID(t) for t in got]
    ok_version &= all(u.version == 7 and u.variant == uuid.RFC_4122 for u in us)
    check(all(str(u) == t for u, t in zip(us, got)), "%s: canonical lowercase text" % name)
    check(all(us[i] < us[i + 1] for i in range(len(us) - 1)),
          "%s: %d UUIDs strictly ascending" % (name, len(us)))
check(ok_version, "Python's uuid reads every one as version 7, RFC 9562 variant")
a, b = set(texts["n0"]), set(texts["n1"])
check(len(a) == PER_NODE and len(b) == PER_NODE and not (a & b),
      "none repeated, none shared between the nodes (%d + %d distinct, %d shared)"
      % (len(a), len(b), len(a & b)))

log("decode: time, worker, counter")
for n, w in zip(nodes, workers):
    before = now_ms()
    u = get_uuids(n, 1)[0]
    after = now_ms()
    st, body, _ = n.get("/decodeUuid?uuid=%s" % u)
    j = json.loads(body) if st == 200 else {}
    check(st == 200 and j.get("workerId") == str(w) and
          before - 10 <= int(j.get("timestamp", 0)) <= after + 10 and j.get("uuid") == u,
          "%s: /decodeUuid gives the worker %d and the time: %s" % (n.name, w, body))
    # the layout of docs/id-shapes.md: 48 bits of ms, the 12-bit counter in rand_a, then the
    # 10-bit worker at the top of rand_b
    v = uuid.UUID(u).int
    check(v >> 80 == int(j.get("timestamp", -1)) and (v >> 64) & 0xFFF == int(j.get("counter", -1))
          and (v >> 52) & 0x3FF == w, "%s: the bits sit where documented" % n.name)
    check(j.get("leafd") is True and "note" not in j, "%s: /decodeUuid says it is leafd's shape" % n.name)
# A UUIDv7 of another generator decodes too, and /decodeUuid says it is not leafd's: its time in
# 2100 is far ahead of the clock (docs/id-shapes.md, "Decoding a UUID").
alien = uuid.UUID(int=(4102444800000 << 80) | (7 << 76) | (0xABC << 64) | (2 << 62) | 12345)
st, body, _ = nodes[0].get("/decodeUuid?uuid=%s" % alien)
j = json.loads(body) if st == 200 else {}
check(st == 200 and j.get("leafd") is False and "ahead of this node's clock" in j.get("note", ""),
      "a UUIDv7 from elsewhere: decoded, with leafd false and a note why: %d %s" % (st, body))
# The choice of version 7 over RFC 9562's UUIDv8 for an embedded node ID is the docs' to explain
# (docs/id-shapes.md, "Why version 7, with a node ID inside").
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                       "id-shapes.md")) as f:
    shapes_doc = f.read()
check("Why version 7, with a node ID inside" in shapes_doc and "section 6.4" in shapes_doc and
      "UUIDv8" in shapes_doc, "docs/id-shapes.md says why UUIDv7 carries the worker ID, not UUIDv8")
st, body, _ = nodes[0].get("/decodeUuid?uuid=%s" % uuid.uuid4())
check(st == 400 and "bad_uuid" in body, "a version 4 UUID: 400 bad_uuid (%d %s)" % (st, body))
st, body, _ = nodes[0].get("/decodeUuid?uuid=nope")
check(st == 400 and "bad_uuid" in body, "not a UUID: 400 bad_uuid")

log("RESP")
r = RespStream(nodes[0].resp_port)
one = r.call("LEAF.UUID", "orders")
many = r.call("LEAF.UUID", "orders", 5)
check(isinstance(one, str) and uuid.UUID(one).version == 7, "LEAF.UUID key: one string %r" % one)
check(isinstance(many, list) and len(many) == 5 and [one] + many == sorted([one] + many),
      "LEAF.UUID key 5: an array of 5, ascending after the first: %r" % many)
e = r.call("INCR", "uuid:orders")
check(isinstance(e, RespError) and e.startswith("WRONG_MODE"), "INCR uuid:k: WRONG_MODE %r" % e)
e = r.call("LEAF.UUID", "orders", 0)
check(isinstance(e, RespError) and e.startswith("BAD_COUNT"), "count 0: BAD_COUNT %r" % e)
e = r.call("LEAF.UUID", "bad key!")
check(isinstance(e, RespError) and e.startswith("BAD_TAG"), "a bad key: BAD_TAG %r" % e)
r.close()
m = nodes[0].get("/metrics")[1]
check('leafd_ids_issued_total{mode="uuid"}' in m, "leafd_ids_issued_total counts mode uuid")
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)

log("a clock step back of 2 s")
if not os.path.exists(FAKETIME_LIB):
    check(False, "libfaketime is installed at %s (package faketime)" % FAKETIME_LIB)
    env.finish()
clock = FakeClock(os.path.join(env.dir, "faketime.rc"))
f = env.leafd("f", zk_props(zk.address()), extra_env=faketime_env(timestamp_file=clock.path))
seen, failures, stepped_at, leads = [], [], None, []
t_end = time.monotonic() + 4.0
while time.monotonic() < t_end:
    if stepped_at is None and time.monotonic() > t_end - 3.0:
        clock.set("-2")
        stepped_at = len(seen)
    st, body, _ = f.get("/api/uuid/get/orders?count=50")
    if st != 200:
        failures.append((st, body))
        continue
    seen += body.split("\n")
    if stepped_at is not None:
        # how far the last UUID's time is ahead of the node's (stepped) clock
        leads.append((uuid.UUID(seen[-1]).int >> 80) - (now_ms() - 2000))
us = [uuid.UUID(t) for t in seen]
check(not failures, "not one failed request through the step (%s)" % failures[:2])
check(stepped_at and len(us) > stepped_at + 100 and
      all(us[i] < us[i + 1] for i in range(len(us) - 1)),
      "%d UUIDs, %d after the step back, strictly ascending throughout"
      % (len(us), len(us) - (stepped_at or 0)))
check(leads and 1500 <= max(leads) <= 2100,
      "after the step their time runs ahead of the stepped clock, by up to %d ms (the bounded lead)"
      % max(leads or [0]))
check(f.stop() == 0, "the stepped node stops cleanly")
env.finish()
