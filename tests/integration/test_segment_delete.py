"""A tag deleted from leaf_alloc stops being served within 60 s (the tag
refresh), even with IDs still buffered; re-added, it is served again at once.

Covers "a deleted tag stops being served within 60 s". Takes up to ~30 s (the refresh period) by design."""
import time

from leafdtest import Env, check, log


def seg_props(db):
    return {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
            "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw"}


env = Env()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('doomed', 1, 100000), "
       "('kept', 1, 10)")
node = env.leafd("n1", seg_props(db))
check(node.get_ids("/api/segment/get/doomed?count=2") == [1, 2], "served before the delete")
check(node.get("/api/segment/get/kept")[0] == 200, "other tag served")

log("delete the row; the node still holds ~200000 buffered IDs for it")
db.sql("DELETE FROM leaf_alloc WHERE biz_tag = 'doomed'")
t0 = time.time()
status = 200
while time.time() - t0 < 65:
    status = node.get("/api/segment/get/doomed")[0]
    if status != 200:
        break
    time.sleep(0.5)
took = time.time() - t0
log("stopped after %.1f s with %d" % (took, status))
check(status == 404, "deleted tag answers 404 (got %d)" % status)
check(took <= 60, "within 60 s (%.1f s)" % took)
check(node.get("/api/segment/get/kept?count=20")[0] == 200, "the other tag is unaffected")
check("left leaf_alloc" in node.log_text(), "the log says the tag left the table")

log("re-added: served again on its first request")
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('doomed', 500000, 100)")
check(node.get_ids("/api/segment/get/doomed?count=2") == [500000, 500001], "re-added tag served")
check(node.stop() == 0, "graceful stop exits 0")
env.finish()
