"""The database killed (kill -9) under load: buffered ranges keep being
served, then requests get 503 with the JSON error in under a second each,
then service resumes by itself within seconds of the database's restart;
no ID is issued twice across it.

Covers segment IDs while the database is down: buffered ranges keep
being served, then 503 within a second, and recovery by itself."""
import http.client as httpclient
import json
import signal
import threading
import time

from leafdtest import Env, check, log, wait_until


def seg_props(db):
    return {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
            "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw",
            "leafd.db.timeout.ms": "1000"}


class Load(threading.Thread):
    """One keep-alive client pulling count IDs per request; records every answer."""

    def __init__(self, port, tag, count):
        super().__init__(daemon=True)
        self.port, self.tag, self.count = port, tag, count
        self.results = []  # (time, status, body, seconds taken)
        self.running = True

    def run(self):
        conn = httpclient.HTTPConnection("127.0.0.1", self.port, timeout=10)
        path = "/api/segment/get/%s?count=%d" % (self.tag, self.count)
        while self.running:
            t0 = time.time()
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read().decode()
                self.results.append((t0, r.status, body, time.time() - t0))
            except Exception as e:  # noqa: BLE001 - recorded as a failure
                self.results.append((t0, 0, repr(e), time.time() - t0))
                conn.close()
                conn = httpclient.HTTPConnection("127.0.0.1", self.port, timeout=10)
            if self.results[-1][1] != 200:
                time.sleep(0.01)
        conn.close()


env = Env()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('busy', 1, 5000), ('idle', 1, 5000)")
node = env.leafd("n1", seg_props(db))

load = Load(node.port, "busy", 20)
load.start()
check(wait_until(lambda: sum(1 for r in load.results if r[1] == 200) > 200, 10), "load running")
time.sleep(0.5)

log("kill -9 the database mid-load")
db.stop(signal.SIGKILL)
t_kill = time.time()

# Requests for a tag with nothing buffered fail fast, and an unknown tag is not a 404.
t0 = time.time()
st, body, _ = node.get("/api/segment/get/idle")
check(st == 503 and json.loads(body)["code"] == "database_unavailable",
      "tag without a buffered range -> 503 database_unavailable: %d %s" % (st, body))
check(time.time() - t0 < 1.0, "... in under a second (%.3f s)" % (time.time() - t0))
st, body, _ = node.get("/api/segment/get/never-seen")
check(st == 503, "unknown tag while the database is down -> 503, not 404: %d" % st)

# Keep pulling until the buffers are used up and 503s have come for a second.
def drained():
    bad = [r for r in load.results if r[0] > t_kill and r[1] != 200]
    return bad and bad[-1][0] - bad[0][0] > 1.0
check(wait_until(drained, 60), "the buffers run dry and 503s follow")
after = [r for r in load.results if r[0] > t_kill]
served = sum(len(r[2].split("\n")) for r in after if r[1] == 200)
first_bad = next(i for i, r in enumerate(after) if r[1] != 200)
log("after the kill: %d IDs served from buffers, then %d errors"
    % (served, sum(1 for r in after if r[1] != 200)))
check(served >= 2000, "thousands of buffered IDs still served after the kill (%d)" % served)
bad = after[first_bad:]
check(all(r[1] == 503 for r in bad), "every failure is a 503: %r" % sorted({r[1] for r in bad}))
check(all(json.loads(r[2]).get("code") == "database_unavailable" for r in bad if r[1] == 503),
      "with the JSON error database_unavailable")
slowest = max(r[3] for r in bad)
check(slowest < 1.0, "each 503 in under a second (slowest %.3f s)" % slowest)
st, body, _ = node.get("/ready")
check(st == 503 and "database unreachable" in body, "/ready 503 with the reason: %d %s" % (st, body))
check(node.get("/health")[0] == 200, "/health still 200")

log("restart the database: service resumes by itself")
db.start()
t_up = time.time()
check(wait_until(lambda: load.results[-1][1] == 200 and load.results[-1][0] > t_up, 30),
      "requests succeed again after the restart")
recovery = next((r[0] for r in load.results if r[0] > t_up and r[1] == 200), time.time()) - t_up
log("recovered %.2f s after the database was back" % recovery)
check(recovery < 10, "recovery within seconds (%.2f s)" % recovery)
time.sleep(0.5)
load.running = False
load.join(15)
st, body, _ = node.get("/api/segment/get/idle?count=2")
check(st == 200, "the idle tag is served again: %d %s" % (st, body))
check(node.get("/ready")[0] == 200, "/ready 200 again")

ids = [int(x) for r in load.results if r[1] == 200 for x in r[2].split("\n")]
check(len(ids) == len(set(ids)), "no duplicate across the outage (%d IDs)" % len(ids))
check(all(a < b for a, b in zip(ids, ids[1:])), "and they ascend")
check(node.stop() == 0, "graceful stop exits 0")
env.finish()
