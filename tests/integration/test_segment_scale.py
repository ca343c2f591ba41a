"""100,000 tags in leaf_alloc (docs/RELIABILITY.md).

leaf_alloc holds TAGS tags. Right after leafd starts (while its first
refresh of 100,000 rows may still be on its way), four clients each ask
for FIRST_TOUCH/4 different tags for the first time. (tools/benchmarks/bench-scale.py
measures first touches across a 30 s refresh too.) Checked:
- every answer is 200 (a valid tag never gets a 503 while the database is
  up: range fetches have their own connection, and a tag known from the
  refresh needs no lookup);
- peak RSS stays under 64 MB: the refresh keeps ~30 bytes a tag, and only
  the tags requests use get a double buffer;
- the refresh itself ran (the log says how many tags it loaded).
"""
import http.client as httpclient
import os
import threading
import time

from leafdtest import Env, check, log, wait_until

TAGS = 100000
FIRST_TOUCH = 4000


def fill(db, n):
    batch = 5000
    for i in range(0, n, batch):
        rows = ",".join("('t%06d',1,1000)" % k for k in range(i, min(n, i + batch)))
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES " + rows)


def hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def touch_all(port, names, out):
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=10)
    for name in names:
        t = time.monotonic()
        conn.request("GET", "/api/segment/get/" + name)
        r = conn.getresponse()
        body = r.read().decode()
        out.append((name, r.status, body[:100], time.monotonic() - t))
    conn.close()


def touch(port, first, n):
    """n tags from t<first> on, by four clients at once; returns the answers."""
    out = []
    names = ["t%06d" % k for k in range(first, first + n)]
    threads = [threading.Thread(target=touch_all, args=(port, names[i::4], out)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def main():
    env = Env()
    db = env.mariadb()
    fill(db, TAGS)
    node = env.leafd("n1", {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
                            "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw"},
                     # AddressSanitizer's quarantine of freed memory would count as RSS.
                     extra_env={"ASAN_OPTIONS": ":".join(filter(None, [
                         os.environ.get("ASAN_OPTIONS", ""), "quarantine_size_mb=1"]))})
    pid = node.proc.p.pid
    out = touch(node.port, 0, FIRST_TOUCH)
    bad = [r for r in out if r[1] != 200]
    lat = sorted(r[3] for r in out)
    log("first touch of %d tags at start: p99 %.1f ms, max %.1f ms, %d not 200"
        % (len(out), lat[int(len(lat) * 0.99)] * 1000, lat[-1] * 1000, len(bad)))
    check(len(out) == FIRST_TOUCH and not bad, "every first touch at start is 200 (%r)" % bad[:3])
    check(wait_until(lambda: "loaded %d tag(s)" % TAGS in node.log_text(), 30),
          "the first refresh loaded %d tags" % TAGS)
    peak = hwm_kb(pid)
    log("peak RSS %.1f MB with %d tags, %d used" % (peak / 1024, TAGS, FIRST_TOUCH))
    if "TSAN_OPTIONS" in os.environ:  # tools/checks/tsan: ThreadSanitizer's shadow memory is no measure
        log("ThreadSanitizer build: the RSS bound is not checked")
    else:
        check(peak < 64 * 1024, "peak RSS under 64 MB (%.1f MB)" % (peak / 1024))
    env.finish()


if __name__ == "__main__":
    main()
