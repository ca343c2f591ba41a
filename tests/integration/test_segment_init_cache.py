"""PUT /api/leaf/init/cache fetches the tag's first range before it answers
(docs/IDENTITY.md), so the first ID does not wait for
the database.

A tag is added to leaf_alloc by hand (max_id 1, step 1000) after the node
started. init cache answers 200 "loaded": true with the max_id its fetch left
(1001), the table says so too, and with MariaDB then stopped the first GET
of the tag is served from the buffer at once. An unknown tag still answers
404. About 15 s."""
import json
import time

from leafdtest import Env, check, http, log, seg_props

env = Env()
db = env.mariadb()
node = env.leafd("n0", seg_props(db))

db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('warm', 1, 1000)")
st, body, _ = http(node.port, "/api/leaf/init/cache", method="PUT",
                   body=json.dumps({"biz_tag": "warm"}), headers={"Content-Type": "application/json"})
log("PUT /api/leaf/init/cache -> %d %s" % (st, body))
doc = json.loads(body) if st == 200 else {}
check(st == 200 and doc.get("loaded") is True and doc.get("step") == 1000,
      "init cache answers loaded: %d %s" % (st, body))
check(str(doc.get("max_id")) == "1001", "the answer says the first range was reserved (max_id "
      "1001): %s" % body)
row = db.sql("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'warm'").strip()
check(row == "1001", "leaf_alloc.max_id moved from 1 to 1001 before the answer: %s" % row)

st, body, _ = http(node.port, "/api/leaf/init/cache", method="PUT",
                   body=json.dumps({"biz_tag": "nope"}), headers={"Content-Type": "application/json"})
check(st == 404, "init cache of an unknown tag -> 404: %d %s" % (st, body))

db.stop()
t0 = time.monotonic()
st, body, _ = node.get("/api/segment/get/warm", timeout=10)
ms = (time.monotonic() - t0) * 1000
log("first GET with the database down -> %d %s in %.1f ms" % (st, body, ms))
check(st == 200 and body == "1", "the first ID comes from the prefetched range: %d %s" % (st, body))
check(ms < 500, "without waiting for the database (%.1f ms)" % ms)
check(node.stop() == 0, "stops cleanly")
env.finish()
