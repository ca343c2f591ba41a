"""tools/bench --parked: latency of a request that has to wait for the database.

A request for a tag the node has no IDs for cannot be answered at once: the
node sends a job to its database thread and parks the request. The old
server re-ran a parked request from a 1 ms timer until the result was there;
the new one is woken when the result arrives. This mode times such requests
from the client (request sent to last byte, on a keep-alive connection per
node), the nodes and the samples alternating, one request at a time:

  warm     a tag with IDs buffered: never parks (the HTTP round trip, the floor)
  known    a tag in leaf_alloc when the node started (it loaded the tag list),
           first request: parks once, for one range fetch
  unknown  a tag inserted after the node loaded the list (the next refresh is
           30 s after start), first request: parks for the lookup, then for
           the range fetch

It checks that it measured that: every answer is 200, leafd_segment_lookups_total
grows by exactly --samples on each node during the unknown samples and not at all
during the known ones, the unknown samples end before the first refresh, and
leafd_segment_fetch_latency_seconds gives the mean time a fetch spent in the
database, which is the part of a parked request neither server can avoid.
"""
import http.client
import shutil
import statistics
import tempfile
import time

REFRESH_S = 30.0   # both servers re-read the tag list this long after start
SETTLE_S = 0.002   # between samples: let background prefetches finish


def p90(xs):
    return statistics.quantiles(xs, n=10)[8] if len(xs) >= 10 else max(xs)


def get(conn, path):
    """(status, ms) of one GET on a keep-alive connection."""
    t0 = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    r.read()
    return r.status, (time.perf_counter() - t0) * 1000


def counters(b, port):
    text = b.http_get(port, "/metrics")[1].decode(errors="replace")
    return {"lookups": b.metric(text, "leafd_segment_lookups_total") or 0,
            "fetch_sum": b.metric(text, "leafd_segment_fetch_latency_seconds_sum") or 0,
            "fetch_n": b.metric(text, "leafd_segment_fetch_latency_seconds_count") or 0}


def sample(b, nodes, conns, kind, paths, out):
    """One request per path per node, nodes alternating; latencies appended to out."""
    for i, path in enumerate(paths):
        order = nodes if i % 2 == 0 else list(reversed(nodes))
        for who, _, _ in order:
            st, ms = get(conns[who], path)
            if st != 200:
                raise SystemExit("%s: GET %s answered %d" % (who, path, st))
            out[who][kind].append(ms)
            time.sleep(SETTLE_S)


def start(b, args, binaries, tmp, db, procs):
    n = args.samples
    nodes = []
    for who, binary in binaries:
        props = dict(b.segment_props(db), **{"leafd.log.level": "info"})
        p, port, _ = b.start_leafd(binary, tmp, args.threads, props, name=who, ready_timeout=60)
        procs.append(p)
        nodes.append((who, p, port))
    t_start = time.time()
    for who, p, _ in nodes:
        end = time.time() + 30
        while "loaded %d tag(s)" % (n + 1) not in b.log_text(tmp, who):
            if time.time() > end or p.poll() is not None:
                raise SystemExit("%s did not load the %d tags; see its log" % (who, n + 1))
            time.sleep(0.02)
    return nodes, t_start


def measure(b, args, binaries, tmp, db, procs):
    n = args.samples
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('warm', 1, "
           "1000000, ''), %s" % ",".join("('k%05d', 1, 1000, '')" % i for i in range(n)))
    nodes, t_start = start(b, args, binaries, tmp, db, procs)
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES %s"
           % ",".join("('u%05d', 1, 1000, '')" % i for i in range(n)))
    conns = {who: http.client.HTTPConnection("127.0.0.1", port, timeout=10)
             for who, _, port in nodes}
    out = {who: {"warm": [], "known": [], "unknown": []} for who, _, _ in nodes}
    for _ in range(20):
        for who, _, _ in nodes:
            get(conns[who], "/api/segment/get/warm")
    c0 = {who: counters(b, port) for who, _, port in nodes}
    sample(b, nodes, conns, "unknown", ["/api/segment/get/u%05d" % i for i in range(n)], out)
    unknown_end_s = time.time() - t_start
    c1 = {who: counters(b, port) for who, _, port in nodes}
    sample(b, nodes, conns, "known", ["/api/segment/get/k%05d" % i for i in range(n)], out)
    c2 = {who: counters(b, port) for who, _, port in nodes}
    sample(b, nodes, conns, "warm", ["/api/segment/get/warm"] * n, out)
    for c in conns.values():
        c.close()
    checks = {}
    for who, _, _ in nodes:
        fetches = c2[who]["fetch_n"] - c0[who]["fetch_n"]
        checks[who] = {
            "lookups_unknown": c1[who]["lookups"] - c0[who]["lookups"],
            "lookups_known": c2[who]["lookups"] - c1[who]["lookups"],
            "fetches": fetches,
            "fetch_db_ms": (c2[who]["fetch_sum"] - c0[who]["fetch_sum"]) * 1000 / max(fetches, 1),
        }
    return out, checks, unknown_end_s


def run(args, binaries, b):
    tmp = tempfile.mkdtemp(prefix="leafd-bench-parked-")
    dbenv, procs = None, []
    try:
        dbenv, db = b.start_mariadb(bench_tag=False)
        out, checks, unknown_end_s = measure(b, args, binaries, tmp, db, procs)
    finally:
        for p in procs:
            b.stop(p)
        if dbenv:
            dbenv.close()
        shutil.rmtree(tmp, ignore_errors=True)
    n = args.samples
    print("\nunknown-tag samples ended %.1f s after start (the first tag refresh is at %.0f s)%s"
          % (unknown_end_s, REFRESH_S, "" if unknown_end_s < REFRESH_S - 1 else
             " -- TOO LATE: some 'unknown' tags may have been loaded; figures invalid"))
    print("\n| binary | kind | samples | median ms | p90 ms | mean ms |")
    print("|---|---|---|---|---|---|")
    for who, _ in binaries:
        for kind in ("warm", "known", "unknown"):
            xs = out[who][kind]
            print("| %s | %s | %d | %.3f | %.3f | %.3f |" % (
                who, kind, len(xs), statistics.median(xs), p90(xs), statistics.mean(xs)))
    for who, _ in binaries:
        c = checks[who]
        print("%s: lookups during unknown samples %d (want %d), during known %d (want 0); "
              "%d range fetches, mean %.3f ms each in the database"
              % (who, c["lookups_unknown"], n, c["lookups_known"], c["fetches"], c["fetch_db_ms"]))
    if len(binaries) == 2:
        (a, _), (o, _) = binaries
        for kind in ("warm", "known", "unknown"):
            print("%s - %s, %s: median %+.3f ms, p90 %+.3f ms" % (
                o, a, kind, statistics.median(out[o][kind]) - statistics.median(out[a][kind]),
                p90(out[o][kind]) - p90(out[a][kind])))
