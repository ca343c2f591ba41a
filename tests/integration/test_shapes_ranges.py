"""Ranges for client-side caching (docs/id-shapes.md):
GET /api/segment/range/{tag}?count=N answers {"biz_tag":..,"start":"<id>","end":"<id>"}
with N consecutive IDs (end included, IDs as strings), taken from the node's
buffers like RESP INCRBY.

Two nodes hand out ranges of random sizes and single IDs of one tag at once
(a small step, so ranges are fetched often and some requests skip the short
rest of a range): no range overlaps another range or a single ID, and each
node's ranges ascend. Then the errors, and one range bigger than any step."""
import http.client as httpclient
import json
import random
import threading
import time

from leafdtest import Env, check, log, seg_props


class Client(threading.Thread):
    """Pulls ranges (count > 0: random sizes up to count) or single IDs until stopped."""

    def __init__(self, node, tag, ranges, seed):
        super().__init__(daemon=True)
        self.node, self.tag, self.ranges = node, tag, ranges
        self.rng = random.Random(seed)
        self.got, self.errors, self.bodies = [], [], []
        self.stop_at = 0

    def run(self):
        conn = httpclient.HTTPConnection("127.0.0.1", self.node.port, timeout=10)
        while time.time() < self.stop_at:
            if self.ranges:
                n = self.rng.randint(1, 250)
                path = "/api/segment/range/%s?count=%d" % (self.tag, n)
            else:
                n = self.rng.choice([1, 1, 7])
                path = "/api/segment/get/%s?count=%d" % (self.tag, n)
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read().decode()
            except Exception as e:  # noqa: BLE001 - recorded and reported
                self.errors.append(repr(e))
                conn = httpclient.HTTPConnection("127.0.0.1", self.node.port, timeout=10)
                continue
            if r.status != 200:
                self.errors.append("%d %s" % (r.status, body))
                continue
            if self.ranges:
                j = json.loads(body)
                self.bodies.append(j)
                self.got.append((int(j["start"]), int(j["end"]), n))
            else:
                self.got += [(int(x), int(x), 1) for x in body.split("\n")]
        conn.close()


env = Env()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('rg', 1, 300), ('big', 1, 1000)")
nodes = [env.leafd("n%d" % i, seg_props(db)) for i in (1, 2)]

log("two nodes: ranges of 1..250 IDs and single IDs of one tag (step 300), 4 s")
clients = []
for i, n in enumerate(nodes):
    clients += [Client(n, "rg", True, 10 * i + 1), Client(n, "rg", True, 10 * i + 2),
                Client(n, "rg", False, 10 * i + 3)]
end = time.time() + 4
for c in clients:
    c.stop_at = end
    c.start()
for c in clients:
    c.join(40)
for c in clients:
    check(not c.errors, "%s: no errors: %r" % (c.node.name, c.errors[:3]))
ranges = [g for c in clients if c.ranges for g in c.got]
singles = [g for c in clients if not c.ranges for g in c.got]
check(all(set(j) == {"biz_tag", "start", "end"} and j["biz_tag"] == "rg" and
          isinstance(j["start"], str) and isinstance(j["end"], str)
          for c in clients for j in c.bodies), "every answer is {biz_tag, start, end} with string IDs")
check(all(e - s + 1 == n for s, e, n in ranges), "every range holds exactly count IDs")
intervals = sorted(ranges + singles)
overlaps = [(a, b) for a, b in zip(intervals, intervals[1:]) if b[0] <= a[1]]
check(not overlaps, "no range overlaps another range or a single ID (%d intervals): %r"
      % (len(intervals), overlaps[:3]))
check(intervals[0][0] >= 1, "every ID is positive")
for c in clients:
    starts = [s for s, _, _ in c.got]
    check(starts == sorted(starts), "%s: a client's ranges/IDs ascend" % c.node.name)
ids_in_ranges = sum(n for _, _, n in ranges)
log("%d ranges (%d IDs) and %d single IDs" % (len(ranges), ids_in_ranges, len(singles)))
check(len(ranges) > 100 and len(singles) > 100, "both kinds were issued in numbers")

log("errors and limits")
for q, want in (("?count=0", 400), ("?count=1000001", 400), ("?count=abc", 400),
                ("?count=-5", 400), ("?count=", 400)):
    st, body, _ = nodes[0].get("/api/segment/range/rg" + q)
    check(st == want and '"code":"bad_count"' in body, "%s -> %d bad_count (%d %s)" % (q, want, st, body))
st, body, _ = nodes[0].get("/api/segment/range/nosuchtag?count=5")
check(st == 404 and "unknown_tag" in body, "unknown tag -> 404 (%d %s)" % (st, body))
st, body, _ = nodes[0].get("/api/segment/range/bad%20tag?count=5")
check(st == 400 and "bad_tag" in body, "bad tag -> 400 (%d %s)" % (st, body))
st, body, _ = nodes[0].get("/api/segment/range/big")
j = json.loads(body) if st == 200 else {}
check(st == 200 and j.get("start") == j.get("end") == "1", "no count: a range of one ID (%s)" % body)

log("a range bigger than any step: 1,000,000 IDs at once")
st, body, _ = nodes[1].get("/api/segment/range/big?count=1000000")
j = json.loads(body) if st == 200 else {}
check(st == 200, "count=1000000 -> 200 (%d %s)" % (st, body))
if st == 200:
    s, e = int(j["start"]), int(j["end"])
    check(e - s + 1 == 1000000, "it holds 1,000,000 IDs (%d..%d)" % (s, e))
    after = nodes[0].get_ids("/api/segment/get/big?count=3") + nodes[1].get_ids("/api/segment/get/big?count=3")
    check(all(x < s or x > e for x in after), "single IDs after it fall outside it: %r" % after)
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
