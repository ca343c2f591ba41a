"""HEAD on every route of the table spends no ID.

The route table comes from the binary (leafd --print-reference routes), so
a route added later is walked too. A node with every mode (snowflake by
ZooKeeper, segment and opaque on one tag, sequences) answers HEAD on each
route's path, with a key and a count large enough to need a new segment
range. Checked:
- a route that issues IDs answers 405 with an Allow header that names GET
  and not HEAD (HEAD may skip the work of GET; an ID nobody sees is waste);
- a route that does not issue is not refused with 405 when it is a GET;
- after the walk, the ID counters of /metrics (leafd_ids_issued_total,
  leafd_segment_issued_total, leafd_sequence_issued_total) and the tag's
  max_id in leaf_alloc are where they were, and no sequence was created.
"""
import subprocess
import time

from leafdtest import (LEAFD_BIN, Env, check, http, log, seg_props)
from zkhelpers import zk_props

TAG = "head"
KEY = "00112233445566778899aabbccddeeff"
COUNTERS = ("leafd_ids_issued_total", "leafd_segment_issued_total",
            "leafd_sequence_issued_total")


def routes():
    """(method, path, issues) of every row of the binary's route table."""
    out = subprocess.run([LEAFD_BIN, "--print-reference", "routes"], check=True,
                         capture_output=True, text=True, timeout=10).stdout
    rows = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[1].startswith("`"):
            continue
        rows.append((cells[0], cells[1].strip("`"), cells[2] == "yes"))
    return rows


def counters(port):
    """The sum of each ID counter family's samples."""
    st, body = http(port, "/metrics")[:2]
    check(st == 200, "/metrics answers (got %d)" % st)
    sums = {name: 0.0 for name in COUNTERS}
    for line in body.splitlines():
        for name in COUNTERS:
            if line.startswith(name + "{") or line.startswith(name + " "):
                sums[name] += float(line.rsplit(" ", 1)[1])
    return sums


def head(port, target):
    """One HEAD on a fresh connection: (status, headers with lower-case names)."""
    st, _, hdr = http(port, target, method="HEAD")
    return st, {k.lower(): v for k, v in hdr.items()}


def max_id(db):
    return db.sql("SELECT max_id FROM leaf_alloc WHERE biz_tag='%s'" % TAG).strip()


def settled_max_id(db):
    """The tag's max_id once the node's start-up fetch is done (two equal reads 1 s apart)."""
    last = max_id(db)
    for _ in range(10):
        time.sleep(1)
        now = max_id(db)
        if now == last:
            return now
        last = now
    return last


def main():
    table = routes()
    check(len(table) >= 20, "the binary prints the route table (%d rows)" % len(table))
    check(any(issues for _, _, issues in table), "some routes issue IDs")
    with Env() as env:
        zk = env.zookeeper()
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) "
               "VALUES ('%s', 1, 1000, '')" % TAG)
        node = env.leafd("n", zk_props(zk.address(), name="head", **seg_props(db, **{
            "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
            "leafd.opaque.key": KEY})))
        max_before = settled_max_id(db)
        before = counters(node.port)
        for method, path, issues in table:
            target = path.replace("{key}", TAG).replace("{name}", "nobody")
            target += ("&" if "?" in target else "?") + "count=1000000"
            if path == "/api/leaf":
                target = "/api/leaf?biz_tag=%s&count=1000000" % TAG
            st, hdr = head(node.port, target)
            allow = hdr.get("allow", "")
            log("HEAD %s (route %s %s) -> %d %s" % (target, method, path, st, allow))
            if issues:
                check(st == 405 and allow.startswith("GET") and "HEAD" not in allow,
                      "HEAD %s: 405, Allow: GET without HEAD (got %d %r)" % (target, st, allow))
            elif method == "GET":
                check(st != 405, "HEAD %s: answered as GET, not 405 (got %d)" % (target, st))
        after = counters(node.port)
        for name in COUNTERS:
            check(after[name] == before[name], "%s did not move (%s -> %s)"
                  % (name, before[name], after[name]))
        time.sleep(1)  # a range fetch a HEAD started would be written by now
        max_after = max_id(db)
        check(max_after == max_before, "max_id of %s did not move (%s -> %s)"
              % (TAG, max_before, max_after))
        st = http(node.port, "/api/segment/get/%s" % TAG)[0]
        check(st == 200, "GET on the same route still issues (got %d)" % st)
        check(counters(node.port)["leafd_ids_issued_total"] == before["leafd_ids_issued_total"] + 1,
              "and the counter then moves by one")
        check(node.proc.alive(), "leafd alive")
        env.finish()


if __name__ == "__main__":
    main()
