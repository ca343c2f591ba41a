"""/metrics passes `promtool check metrics` after traffic; log lines are
logfmt with time, level, component and msg; no per-request lines at info."""
import json
import os
import re
import shutil
import subprocess

from leafdtest import Env, check, http, log, static_props

LOGFMT = re.compile(r'^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(debug|info|warn|error) '
                    r'component=[a-z_]+ msg="([^"\\]|\\.)*"$')

with Env() as env:
    node = env.leafd("n1", static_props(5))
    for path in ["/api/snowflake/get/a", "/api/snowflake/get/a?count=10", "/nope",
                 "/api/snowflake/get/a?count=0", "/decodeSnowflakeId?snowflakeId=1", "/health"]:
        for _ in range(20):
            http(node.port, path)
    http(node.port, "/health", method="POST")
    st, body, hdrs = http(node.port, "/metrics")
    check(st == 200 and hdrs.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
          "metrics served as Prometheus text 0.0.4")
    for needle in ['leafd_http_requests_total{protocol="http",route="snowflake_get",status="200"} 40',
                   'leafd_http_requests_total{protocol="http",route="snowflake_get",status="400"} 20',
                   'leafd_http_requests_total{protocol="http",route="not_found",status="404"} 20',
                   'leafd_http_requests_total{protocol="http",route="health",status="405"} 1',
                   'leafd_http_request_duration_seconds_count{protocol="http",route="snowflake_get"} 60',
                   'leafd_ids_issued_total{mode="snowflake"} 220',
                   "leafd_snowflake_worker_id 5", "leafd_http_connections"]:
        check(needle in body, "metrics contain %s" % needle)
    # Which leafd runs: the version of CMakeLists.txt and the git commit, in /metrics and /ready.
    version = re.search(r"project\(leafd VERSION (\d+\.\d+\.\d+)", open(os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        "CMakeLists.txt")).read()).group(1)
    m = re.search(r'^leafd_build_info\{version="([^"]+)",revision="([^"]+)"\} 1$', body, re.M)
    check(m and m.group(1) == version and re.fullmatch(r"[0-9a-f]{12}(-dirty)?|unknown", m.group(2)),
          "leafd_build_info carries version=%s and the revision: %s" % (version, m and m.group(0)))
    st, ready, _ = http(node.port, "/ready")
    rj = json.loads(ready)
    check(rj.get("version") == version and m and rj.get("revision") == m.group(2),
          "/ready says the same version and revision: %s" % ready)
    if shutil.which("promtool"):
        r = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, text=True)
        check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
              "promtool check metrics is clean: %s %s" % (r.stdout, r.stderr))
    else:
        log("SKIP promtool check: promtool not installed (apt-get install prometheus)")

    # Both modes on: segment metrics (runway, fetches, database) pass promtool too.
    db = env.mariadb()
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('obs', 1, 1000, '')")
    seg = env.leafd("n2", static_props(6, **{"leaf.segment.enable": "true",
                                             "leaf.jdbc.url": db.jdbc_url(),
                                             "leaf.jdbc.username": "leaf",
                                             "leaf.jdbc.password": "leafpw"}))
    for _ in range(30):
        http(seg.port, "/api/segment/get/obs?count=10")
    st, body2, _ = http(seg.port, "/metrics")
    for needle in ['leafd_ids_issued_total{mode="segment"} 300',
                   'leafd_segment_remaining_ids{tag="obs"}', 'leafd_segment_runway_seconds{tag="obs"}',
                   'leafd_segment_range_fetches_total{tag="obs"}', "leafd_segment_db_up 1",
                   "leafd_segment_fetch_latency_seconds_count"]:
        check(needle in body2, "segment metrics contain %s" % needle)
    if shutil.which("promtool"):
        r = subprocess.run(["promtool", "check", "metrics"], input=body2, capture_output=True, text=True)
        check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
              "promtool check metrics is clean with segments on: %s %s" % (r.stdout, r.stderr))

    node.stop()
    lines = [l for l in node.log_text().splitlines() if l.strip()]
    check(len(lines) >= 2, "the node logged its start and stop")
    for l in lines:
        check(LOGFMT.match(l) is not None, "log line is logfmt with time/level/component/msg: %r" % l)
    check(len(lines) < 20, "no per-request log lines at info (%d lines for 200+ requests)" % len(lines))
    # Sentinels are said in words: a fresh worker ID has no recorded time (never "-1 ms").
    serving = [l for l in lines if "serving as" in l]
    check(serving and "no earlier time recorded for this worker ID" in serving[0] and
          "-1 ms" not in serving[0], "the start-up floor says what -1 means (got %r)" % serving[:1])
    # The start-up summary is the first line: what runs, from which file, with which modes.
    check("leafd " in lines[0] and "starting" in lines[0] and node.conf in lines[0] and
          "static worker ID 5" in lines[0] and "segment off" in lines[0],
          "the first line is the start-up summary (got %r)" % lines[0])
    seg.stop()
    seg_lines = [l for l in seg.log_text().splitlines() if l.strip()]
    check(seg_lines and "starting" in seg_lines[0] and "database 127.0.0.1:%d/leaf" % db.port in seg_lines[0],
          "segment node: the first line is the start-up summary (got %r)" % seg_lines[:1])
    stop_at = next((i for i, l in enumerate(seg_lines) if "draining" in l), len(seg_lines))
    warns = [l for l in seg_lines[stop_at:] if "level=warn" in l or "level=error" in l]
    check(not warns, "a clean stop of a segment node logs no warning (got %r)" % warns[:3])
    env.finish()
