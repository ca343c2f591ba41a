"""Segment IDs against a real MariaDB: a fresh tag, Leaf's table semantics,
unknown tags, tags added at run time, the monitor pages, /ready and /metrics.

Covers: a fresh tag (max_id 1, step 2000) issues 1, 2, 3 ...; the
table shows 2001 after the first range and 4001 once 10% is used; unknown
tag 404; a row inserted at run time is served on its first request."""
import json

from leafdtest import Env, check, log, wait_until


def seg_props(db, **extra):
    p = {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
         "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw"}
    p.update(extra)
    return p


def max_id(db, tag):
    out = db.sql("SELECT max_id FROM leaf_alloc WHERE biz_tag = '%s'" % tag).strip()
    return int(out) if out else None


env = Env()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) "
       "VALUES ('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')")
node = env.leafd("n1", seg_props(db))

log("fresh tag: 1, 2, 3 ... and the table after the first range")
st, body, hdr = node.get("/api/segment/get/leaf-segment-test")
check(st == 200 and body == "1", "first ID is 1: %d %r" % (st, body))
check(hdr.get("Content-Type", "").startswith("text/plain"), "text/plain body")
ids = [int(node.get("/api/segment/get/leaf-segment-test")[1]) for _ in range(9)]
check(ids == list(range(2, 11)), "then 2..10: %r" % ids)
check(max_id(db, "leaf-segment-test") == 2001, "table shows 2001 after the first range: %r"
      % max_id(db, "leaf-segment-test"))

log("batch across the 10%% mark: the next range is reserved in the background")
batch = node.get_ids("/api/segment/get/leaf-segment-test?count=300")
check(batch == list(range(11, 311)), "count=300 gives 11..310 ascending")
check(wait_until(lambda: max_id(db, "leaf-segment-test") == 4001, 5),
      "table shows 4001 once 10%% is used: %r" % max_id(db, "leaf-segment-test"))
rest = node.get_ids("/api/segment/get/leaf-segment-test?count=10000")
check(rest == list(range(311, 10311)), "count=10000 spans ranges, dense and ascending")

log("errors: bad count, bad tag, unknown tag")
st, body, _ = node.get("/api/segment/get/leaf-segment-test?count=0")
check(st == 400 and json.loads(body)["code"] == "bad_count", "count=0 -> 400 bad_count")
st, body, _ = node.get("/api/segment/get/bad%27tag")
check(st == 400 and json.loads(body)["code"] == "bad_tag", "bad tag -> 400 bad_tag")
st, body, _ = node.get("/api/segment/get/no-such-tag")
check(st == 404 and json.loads(body)["code"] == "unknown_tag", "unknown tag -> 404: %d %s" % (st, body))

log("a row inserted at run time is served on its first request")
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('no-such-tag', 1000, 50)")
st, body, _ = node.get("/api/segment/get/no-such-tag?count=3")
check(st == 200 and body == "1000\n1001\n1002", "new row served at once: %d %r" % (st, body))

log("GET /api/leaf?biz_tag=T answers JSON with the ID as a string")
st, body, _ = node.get("/api/leaf?biz_tag=no-such-tag")
check(st == 200 and json.loads(body) == {"biz_tag": "no-such-tag", "id": "1003"},
      "GET /api/leaf: %d %s" % (st, body))
st, _, _ = node.get("/api/leaf?biz_tag=missing")
check(st == 404, "GET /api/leaf unknown -> 404")

log("monitor pages and probes")
st, body, hdr = node.get("/cache")
check(st == 200 and "leaf-segment-test" in body and hdr.get("Content-Type", "").startswith("text/html"),
      "/cache lists the tag as HTML")
st, body, _ = node.get("/db")
check(st == 200 and "Test leaf Segment Mode Get Id" in body and "<table" in body,
      "/db shows leaf_alloc rows (loopback client, no token)")
st, body, _ = node.get("/ready")
seg = json.loads(body)["segment"]
check(st == 200 and seg["ready"] and seg["database"] == "up", "/ready: segment ready, db up")
st, body, _ = node.get("/metrics")
check('leafd_segment_remaining_ids{tag="leaf-segment-test"}' in body, "metrics: remaining IDs per tag")
check('leafd_segment_range_fetches_total{tag="leaf-segment-test"}' in body, "metrics: fetches")
check("leafd_segment_fetch_latency_seconds_count" in body, "metrics: fetch latency")
check("leafd_segment_db_errors_total 0" in body, "metrics: db errors")

check(node.stop() == 0, "graceful stop exits 0")
env.finish()
