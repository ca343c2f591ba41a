"""tools/bench --metrics-tags N: /metrics of a node that serves N tags.

Starts a throwaway MariaDB, inserts N rows into leaf_alloc ('t000001'...,
step 1000, 1,000 rows per INSERT), then starts every binary at once with
segment IDs on (log level info) and waits for each to log
"loaded N tag(s) from leaf_alloc" (the tag list is read at start and every
30 s). It asks every node for one ID of each of the first --warm-tags tags,
so those have ranges and runway, then fetches /metrics from the nodes in turn,
--rounds times each, and reports the body's size, the time from sending the
request to the last byte (the scrape as Prometheus sees it), the number of
per-tag series, and `promtool check metrics` on the last body.

The new binary runs twice: with the default leafd.metrics.tags.max (1000) and
with leafd.metrics.tags.max = N, which exports every tag and so shows the
growable buffer at full size. The old binary does not know the key.
"""
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

LOAD_TIMEOUT = 180.0
WARM_TAGS = 2000


def insert_tags(db, n):
    """n rows t000001.. into leaf_alloc, 1,000 per INSERT, 20 INSERTs per client call."""
    stmts = []
    for lo in range(1, n + 1, 1000):
        hi = min(n, lo + 999)
        rows = ",".join("('t%06d',1,1000,'')" % i for i in range(lo, hi + 1))
        stmts.append("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES %s;"
                     % rows)
    for i in range(0, len(stmts), 20):
        db.sql("\n".join(stmts[i:i + 20]))
    got = int(db.sql("SELECT COUNT(*) FROM leaf_alloc").strip())
    if got != n:
        raise SystemExit("leaf_alloc has %d rows, wanted %d" % (got, n))


def wait_loaded(b, tmp, name, p, n):
    """Seconds until the node logs that it loaded the tag list (raises on timeout)."""
    t0 = time.time()
    while time.time() - t0 < LOAD_TIMEOUT:
        m = re.search(r"loaded (\d+) tag\(s\) from leaf_alloc", b.log_text(tmp, name))
        if m:
            if int(m.group(1)) != n:
                raise SystemExit("%s loaded %s tags, not %d" % (name, m.group(1), n))
            return time.time() - t0
        if p.poll() is not None:
            raise SystemExit("%s exited while loading tags; see its log" % name)
        time.sleep(0.05)
    raise SystemExit("%s did not load the tags in %.0f s" % (name, LOAD_TIMEOUT))


def warm(b, port, k):
    """One segment ID from each of the first k tags; returns how many answered 200."""
    ok = 0
    for i in range(1, k + 1):
        st, _ = b.http_get(port, "/api/segment/get/t%06d" % i)
        ok += st == 200
    return ok


def scrape(b, p, port):
    """(status, body, ms from request to last byte, ms of leafd CPU) of one /metrics."""
    c0 = b.cpu_ns(p.pid)
    t0 = time.perf_counter()
    st, body = b.http_get(port, "/metrics")
    ms = (time.perf_counter() - t0) * 1000
    return st, body, ms, (b.cpu_ns(p.pid) - c0) / 1e6


def promtool(body, tmp):
    """(exit code, first lines of output) of `promtool check metrics` on body."""
    if shutil.which("promtool") is None:
        return None, "promtool not installed (apt-get install prometheus)"
    r = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                       timeout=120)
    out = (r.stdout + r.stderr).decode(errors="replace").strip().splitlines()
    return r.returncode, "; ".join(out[:3]) + (" ... (%d lines)" % len(out) if len(out) > 3 else "")


def describe(body):
    """Facts about one exposition: per-tag series, the aggregates, a cut last line."""
    text = body.decode(errors="replace")
    return {
        "tag_series": len(re.findall(r'^leafd_segment_runway_seconds\{tag=', text, re.M)),
        "all_series": sum(1 for line in text.splitlines() if line and line[0] != "#"),
        "families": len(re.findall(r"^# TYPE ", text, re.M)),
        "aggregates": [name for name in ("leafd_segment_runway_min_seconds",
                                         "leafd_segment_tags", "leafd_segment_tags_exported")
                       if re.search(r"^%s[ {]" % name, text, re.M)],
        "ends_with_newline": text.endswith("\n"),
        "last_line": text.rstrip("\n").rsplit("\n", 1)[-1][:100],
        "has_db_up": bool(re.search(r"^leafd_segment_db_up ", text, re.M)),
    }


def start_nodes(b, args, binaries, tmp, db, procs):
    n = args.metrics_tags
    nodes = []
    variants = []
    for who, binary in binaries:
        variants.append((who, binary, {}))
        if who == "new":
            variants.append(("new-all", binary, {"leafd.metrics.tags.max": str(n)}))
    for who, binary, extra in variants:
        props = dict(b.segment_props(db), **{"leafd.log.level": "info"})
        props.update(extra)
        p, port, _ = b.start_leafd(binary, tmp, args.threads, props, name=who, ready_timeout=60)
        procs.append(p)
        nodes.append((who, p, port))
    for who, p, port in nodes:
        print("  %s: loaded %d tags %.1f s after /ready" % (who, n, wait_loaded(b, tmp, who, p, n)),
              flush=True)
    return nodes


def run(args, binaries, b):
    n = args.metrics_tags
    k = min(WARM_TAGS, n)
    tmp = tempfile.mkdtemp(prefix="leafd-bench-metrics-")
    dbenv, procs = None, []
    times, cpu, last = {}, {}, {}
    try:
        dbenv, db = b.start_mariadb(bench_tag=False)
        t0 = time.time()
        insert_tags(db, n)
        print("inserted %d tags in %.1f s" % (n, time.time() - t0), flush=True)
        nodes = start_nodes(b, args, binaries, tmp, db, procs)
        for who, p, port in nodes:
            print("  %s: %d of %d warm-up requests answered 200" % (who, warm(b, port, k), k),
                  flush=True)
        for who, _, _ in nodes:
            times[who], cpu[who] = [], []
        for r in range(args.rounds):
            for who, p, port in (nodes if r % 2 == 0 else list(reversed(nodes))):
                st, body, ms, cpu_ms = scrape(b, p, port)
                times[who].append(ms)
                cpu[who].append(cpu_ms)
                last[who] = (st, body)
                print("  %s round %d: HTTP %d, %d bytes in %.1f ms, leafd CPU %.1f ms"
                      % (who, r + 1, st, len(body), ms, cpu_ms), flush=True)
        alive = {who: p.poll() is None for who, p, _ in nodes}
    finally:
        for p in procs:
            b.stop(p)
        if dbenv:
            dbenv.close()
    try:
        report(args, tmp, times, cpu, last, alive)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(args, tmp, times, cpu, last, alive):
    print("\n| binary | HTTP | /metrics bytes | fetch time (ms, median of %d) | leafd CPU per "
          "scrape (ms, median) | per-tag series (runway) | series | aggregates | "
          "promtool check metrics |" % args.rounds)
    print("|---|---|---|---|---|---|---|---|---|")
    for who in times:
        st, body = last[who]
        d = describe(body)
        rc, out = promtool(body, tmp)
        print("| %s | %d | %d | %s | %.1f | %d | %d | %s | exit %s: %s |" % (
            who, st, len(body), b_med(times[who]), statistics.median(cpu[who]),
            d["tag_series"], d["all_series"],
            ", ".join(d["aggregates"]) or "none", rc, out or "OK"))
        print("    %s: %d families; ends with newline: %s; leafd_segment_db_up present: %s; "
              "still running: %s; last line: %r" % (who, d["families"], d["ends_with_newline"],
                                                    d["has_db_up"], alive[who], d["last_line"]))


def b_med(xs):
    return "%.1f (%s)" % (statistics.median(xs), ", ".join("%.1f" % x for x in xs))
