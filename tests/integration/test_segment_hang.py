"""A hung database, three ways, under load on a step-100 tag (docs/RELIABILITY.md).

Each hang lasts HANG_S seconds while four clients take IDs:
- a row lock: another session holds SELECT ... FOR UPDATE on the tag's row;
- a global read lock: FLUSH TABLES WITH READ LOCK;
- the server stopped: SIGSTOP of mariadbd, then SIGCONT.
Checked for each:
- every request is answered (at worst a 503 after leafd.segment.wait.ms),
  and while the database is known to be hung most 503s are immediate (the
  circuit breaker: one request waits for the retry, the others do not);
- service resumes within RESUME_S of the hang's end;
- nothing is repeated, across all three;
- no range is burned unseen: the server's count of updated rows grows by
  at most one more than the ranges leafd installed (a statement leafd gave
  up on dies on the server, by max_statement_time and the lock-wait
  limits; only the one in flight when mariadbd was stopped may still run
  when it continues).
"""
import http.client as httpclient
import os
import re
import signal
import subprocess
import threading
import time

from leafdtest import Env, check, log, wait_until

HANG_S = 6
RESUME_S = 1.5
WAIT_MS = 500


class Load(threading.Thread):
    """One keep-alive client taking count IDs about every 25 ms; records every answer."""

    def __init__(self, port, tag, count):
        super().__init__(daemon=True)
        self.port, self.tag, self.count = port, tag, count
        self.results = []  # (start, end, status, body)
        self.running = True

    def run(self):
        conn = httpclient.HTTPConnection("127.0.0.1", self.port, timeout=10)
        while self.running:
            tag = self.tag
            path = "/api/segment/get/%s?count=%d" % (tag, self.count)
            t0 = time.monotonic()
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read().decode()
                self.results.append((t0, time.monotonic(), r.status, body, tag))
            except Exception as e:  # noqa: BLE001 - recorded as a failure
                self.results.append((t0, time.monotonic(), 0, repr(e), tag))
                conn.close()
                conn = httpclient.HTTPConnection("127.0.0.1", self.port, timeout=10)
            time.sleep(0.025)
        conn.close()


def rows_updated(db):
    out = db.sql("SHOW GLOBAL STATUS LIKE 'Handler_update'")
    return int(out.split()[1])


def fetches(node, tag):
    st, body, _ = node.get("/metrics")
    m = re.search(r'^leafd_segment_range_fetches_total\{[^}]*tag="%s"[^}]*\} (\d+)' % tag, body, re.M)
    return int(m.group(1)) if m else 0


def mariadb_session(db, sql):
    """Runs sql in its own client session in the background (the lock holder)."""
    return subprocess.Popen(["mariadb", "--no-defaults", "-uroot", "--socket=" + db.sock, "leaf",
                             "-e", sql], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def hang(name, tag, db, node, loads, start, stop, burn_allowed):
    """One hang on a fresh tag of step 100, so that its buffers run dry during the hang."""
    for ld in loads:
        ld.tag = tag
    n = lambda: sum(1 for ld in loads for r in ld.results if r[2] == 200 and r[4] == tag)
    base = n()
    check(wait_until(lambda: n() > base + 40, 10), "%s: load running on tag %s" % (name, tag))
    log("%s: hang for %d s" % (name, HANG_S))
    u0, f0 = rows_updated(db), fetches(node, tag)
    t_start = time.monotonic()
    holder = start()
    stop(holder)
    t_end = time.monotonic()
    log("%s: hang over after %.1f s" % (name, t_end - t_start))
    # Resumed: a 200 that started after the hang's end, soon.
    def resumed():
        done = [r for ld in loads for r in ld.results if r[0] >= t_end and r[2] == 200]
        return min((r[1] for r in done), default=None)
    t_ok = wait_until(resumed, 15)
    check(t_ok is not None, "%s: service resumed" % name)
    if t_ok is not None:
        log("%s: resumed %.3f s after the hang" % (name, t_ok - t_end))
        check(t_ok - t_end <= RESUME_S, "%s: resumed within %.1f s of the hang's end (%.3f s)"
              % (name, RESUME_S, t_ok - t_end))
    time.sleep(2.0)  # anything the server still had queued would have run by now
    du, df = rows_updated(db) - u0, fetches(node, tag) - f0
    log("%s: %d rows updated on the server, %d ranges installed by leafd" % (name, du, df))
    check(du <= df + burn_allowed, "%s: no range burned unseen (%d updated <= %d installed + %d)"
          % (name, du, df, burn_allowed))
    errs = [r for ld in loads for r in ld.results if t_start <= r[0] <= t_end and r[2] != 200]
    check(len(errs) > 0, "%s: the hang was felt (%d errors)" % (name, len(errs)))
    bad = [r for r in errs if r[2] != 503 or "database_unavailable" not in r[3]]
    check(not bad, "%s: every error is 503 database_unavailable (%r)" % (name, bad[:3]))
    lat = sorted(r[1] - r[0] for r in errs)
    if lat:
        p50, p90 = lat[len(lat) // 2], lat[int(len(lat) * 0.9)]
        log("%s: %d errors, latency p50 %.1f ms, p90 %.1f ms, max %.1f ms"
            % (name, len(lat), p50 * 1000, p90 * 1000, lat[-1] * 1000))
        check(p90 < 0.1, "%s: circuit breaker: 90%% of the 503s within 100 ms (p90 %.1f ms)" % (name, p90 * 1000))


def main():
    env = Env()
    db = env.mariadb()
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('hang1', 1, 100), ('hang2', 1, 100),"
           " ('hang3', 1, 100)")
    node = env.leafd("n1", {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
                            "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw",
                            "leafd.db.timeout.ms": "2000", "leafd.segment.wait.ms": str(WAIT_MS)})
    loads = [Load(node.port, "hang1", 10) for _ in range(4)]
    for ld in loads:
        ld.start()

    def row_lock():
        return mariadb_session(db, "BEGIN; SELECT * FROM leaf_alloc WHERE biz_tag = 'hang1' FOR UPDATE;"
                                   " DO SLEEP(%d); COMMIT;" % HANG_S)

    def read_lock():
        return mariadb_session(db, "FLUSH TABLES WITH READ LOCK; DO SLEEP(%d); UNLOCK TABLES;" % HANG_S)

    def wait_session(p):
        p.wait(HANG_S + 30)

    def sigstop():
        os.kill(db.proc.p.pid, signal.SIGSTOP)

    def sigcont(_):
        time.sleep(HANG_S)
        os.kill(db.proc.p.pid, signal.SIGCONT)

    hang("row lock", "hang1", db, node, loads, row_lock, wait_session, 0)
    hang("global read lock", "hang2", db, node, loads, read_lock, wait_session, 0)
    hang("SIGSTOP", "hang3", db, node, loads, sigstop, sigcont, 1)

    for ld in loads:
        ld.running = False
    for ld in loads:
        ld.join(15)
    results = [r for ld in loads for r in ld.results]
    check(all(r[2] in (200, 503) for r in results),
          "every request answered 200 or 503 (%r)" % [r for r in results if r[2] not in (200, 503)][:3])
    worst = max(r[1] - r[0] for r in results)
    check(worst < WAIT_MS / 1000 + 0.7, "no request waited much past leafd.segment.wait.ms (worst %.3f s)" % worst)
    ids = [(r[4], int(x)) for r in results if r[2] == 200 for x in r[3].split()]
    check(len(ids) == len(set(ids)), "no ID repeated (%d IDs, %d distinct)" % (len(ids), len(set(ids))))
    for ld in loads:
        for tag in ("hang1", "hang2", "hang3"):
            mine = [int(x) for r in ld.results if r[2] == 200 and r[4] == tag for x in r[3].split()]
            check(mine == sorted(mine), "one client's IDs of %s ascend" % tag)
    log("%d requests, %d IDs" % (len(results), len(ids)))
    env.finish()


if __name__ == "__main__":
    main()
