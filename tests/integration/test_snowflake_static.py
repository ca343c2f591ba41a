"""Static worker mode, /ready, /metrics and the clock policy at run time
(configuration, the HTTP API and the snowflake rules).

- /ready says mode static, coordinated false, and warns that worker IDs are
  not coordinated; the log says so too.
- /metrics is Prometheus text (0.0.4); leafd_http_requests_total counts by
  route and status (checked by deltas; promtool checks the format if present).
- The wall clock is stepped at run time with libfaketime (the monotonic clock
  is left alone, so the event loop's timers are real), on a node with
  leafd.snowflake.max.lead.ms = 0, the waiting behaviour of docs/reference/guarantees.md
  (the bounded lead is test_zk_lead.py's):
    * 10 s back: 503 clock_backwards at once (no waiting), until stepped forward
      again; then served, IDs above all earlier ones;
    * 1.5 s back: 503 until the clock catches up by itself, then served;
    * 200 ms back: 503 clock_backwards (more than 5 ms);
    * 3 ms back (minus the few hundred microseconds between two requests):
      served after a short wait, counted as "waited" in /metrics.
- Start to /ready in static mode is measured and printed (not asserted).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import time

from leafdtest import (LEAFD_BIN, Env, HttpStream, check, free_port, get_request, http, log,
                       static_props)

FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
WORKER = 77


def metrics(port):
    st, body, hdr = http(port, "/metrics")
    return st, body, hdr


def parse_metrics(text):
    """{(name, frozenset(labels)): value} of the sample lines."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$', line)
        if not m:
            out[("__bad__", line)] = 0
            continue
        labels = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def req_count(samples, route, status):
    return samples.get(("leafd_http_requests_total",
                        frozenset({("protocol", "http"), ("route", route), ("status", str(status))})), 0)


def ready_and_log(node):
    st, body, hdr = http(node.port, "/ready")
    check(st == 200, "/ready -> 200 in static mode (got %d %s)" % (st, body))
    check(hdr.get("Content-Type", "").startswith("application/json"), "/ready is JSON")
    try:
        r = json.loads(body)
    except ValueError:
        check(False, "/ready body is JSON: %r" % body)
        return
    sf = r.get("snowflake", {})
    check(sf.get("mode") == "static", "/ready: snowflake mode static (got %r)" % sf.get("mode"))
    check(sf.get("coordinated") is False, "/ready: coordinated false (got %r)" % sf.get("coordinated"))
    check(sf.get("worker_id") == WORKER, "/ready: worker_id %d (got %r)" % (WORKER, sf.get("worker_id")))
    warn = json.dumps(r).lower()
    check("not coordinated" in warn, "/ready warns that worker IDs are not coordinated: %s" % body)
    text = node.log_text()
    lines = [l for l in text.splitlines() if "not coordinated" in l.lower()]
    check(bool(lines), "the log says worker IDs are not coordinated")
    check(any("static" in l.lower() for l in lines), "the log line names static mode: %s" % lines[:1])
    check(any("warn" in l.lower() for l in lines), "the log line is a warning: %s" % lines[:1])


def check_metrics(node):
    port = node.port
    st, body, hdr = metrics(port)
    check(st == 200, "/metrics -> 200")
    check(hdr.get("Content-Type", "").startswith("text/plain") and "0.0.4" in hdr.get("Content-Type", ""),
          "/metrics Content-Type text/plain; version=0.0.4 (got %r)" % hdr.get("Content-Type"))
    before = parse_metrics(body)
    check(not [k for k in before if k[0] == "__bad__"], "/metrics: every sample line parses: %s"
          % [k[1] for k in before if k[0] == "__bad__"][:3])
    check("# TYPE leafd_http_requests_total counter" in body, "/metrics: leafd_http_requests_total is a counter")
    check("# HELP leafd_http_requests_total " in body, "/metrics: leafd_http_requests_total has HELP")
    for _ in range(7):
        http(port, "/api/snowflake/get/m")
    for _ in range(3):
        http(port, "/api/snowflake/get/bad%2Ftag")
    for _ in range(2):
        http(port, "/api/snowflake/get/m?count=0")
    for _ in range(4):
        http(port, "/no/such")
    http(port, "/api/snowflake/get/m", method="POST")
    for _ in range(5):
        http(port, "/decodeSnowflakeId?snowflakeId=123")
    http(port, "/health")
    st, body, _ = metrics(port)
    after = parse_metrics(body)
    for route, status, n in (("snowflake_get", 200, 7), ("snowflake_get", 400, 5), ("not_found", 404, 4),
                             ("decode", 200, 5), ("health", 200, 1), ("metrics", 200, 1)):
        d = req_count(after, route, status) - req_count(before, route, status)
        check(d == n, "metrics: route=%s status=%d counted +%d (got %+d)" % (route, status, n, d))
    d405 = sum(v for (name, labels), v in after.items()
               if name == "leafd_http_requests_total" and ("status", "405") in labels) - \
        sum(v for (name, labels), v in before.items()
            if name == "leafd_http_requests_total" and ("status", "405") in labels)
    check(d405 == 1, "metrics: one 405 counted (got %+d)" % d405)
    issued = after.get(("leafd_ids_issued_total", frozenset({("mode", "snowflake")})), -1) - \
        before.get(("leafd_ids_issued_total", frozenset({("mode", "snowflake")})), -1)
    check(issued == 7, "metrics: leafd_ids_issued_total{mode=snowflake} +7 (got %+d)" % issued)
    promtool = shutil.which("promtool")
    if promtool:
        r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True)
        # promtool exits 1 on format errors, 3 on lint warnings only.
        check(r.returncode in (0, 3) and "error" not in r.stderr.lower(),
              "promtool check metrics accepts /metrics (rc %d: %s)" % (r.returncode, (r.stdout + r.stderr)[:300]))
    else:
        log("promtool not installed; Prometheus format checked by the line parser only")


class FakeClock:
    """The offset file libfaketime reads on every clock_gettime (no cache)."""

    def __init__(self, path):
        self.path = path
        self.set("+0")

    def set(self, spec):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(spec + "\n")
        os.rename(tmp, self.path)  # never a half-written file


def waited_count(port):
    st, body, _ = metrics(port)
    return parse_metrics(body).get(("leafd_snowflake_clock_backwards_total",
                                    frozenset({("outcome", "waited")})), 0)


def clock_steps(env):
    if not os.path.exists(FAKETIME_LIB):
        check(False, "libfaketime is installed at %s (package faketime; tools/deps test)" % FAKETIME_LIB)
        return
    ft_file = os.path.join(env.dir, "faketime.rc")
    clock = FakeClock(ft_file)
    asan = os.environ.get("ASAN_OPTIONS", "")
    fenv = {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME_TIMESTAMP_FILE": ft_file, "FAKETIME_NO_CACHE": "1",
            "DONT_FAKE_MONOTONIC": "1",
            # libfaketime comes before the sanitizer runtime in the preload list
            "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"}
    node = env.leafd("faketime", static_props(WORKER, **{"leafd.snowflake.max.lead.ms": "0"}),
                     extra_env=fenv)
    port = node.port
    ids = []

    def take(conn, path="/api/snowflake/get/ft"):
        conn.send(get_request(path))
        t = time.monotonic()
        r = conn.read_response()
        dt = time.monotonic() - t
        if r and r[0] == 200:
            ids.extend(int(x) for x in r[2].split(b"\n"))
        return r, dt

    c = HttpStream(port)
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    r, _ = take(c, "/api/snowflake/get/ft?count=100")
    check(r is not None and r[0] == 200, "faketime node serves IDs")
    real_now = int(time.time() * 1000)
    if ids:
        ts = (ids[-1] >> 22) + 1288834974657
        check(abs(ts - real_now) < 2000, "faketime '+0': IDs carry the real time (%d vs %d)" % (ts, real_now))

    # 10 s back: refused at once, every time, until stepped forward again.
    clock.set("-10")
    statuses, worst = [], 0.0
    for k in range(10):
        r, dt = take(c, "/api/snowflake/get/ft" + ("?count=50" if k % 2 else ""))
        worst = max(worst, dt)
        statuses.append(r[0] if r else None)
        if r and r[0] == 503 and k == 0:
            err = json.loads(r[2])
            check(err.get("code") == "clock_backwards" and set(err) == {"code", "message"},
                  "10 s back: JSON error code clock_backwards (got %r)" % err)
            check(r[1].get("content-type", "").startswith("application/json"), "10 s back: application/json")
        time.sleep(0.05)
    check(statuses == [503] * 10, "10 s back: every request 503 (got %s)" % statuses)
    check(worst < 0.5, "10 s back: refused without waiting (worst %.3f s)" % worst)
    st, _, _ = http(port, "/health")
    check(st == 200, "10 s back: /health still 200")
    # /ready is 200 only when every enabled mode can issue IDs now.
    st, body, _ = http(port, "/ready")
    check(st == 503, "10 s back: /ready -> 503, snowflake cannot issue IDs now (got %d %s)" % (st, body[:300]))
    st, body, _ = http(port, "/decodeSnowflakeId?snowflakeId=%d" % (ids[-1] if ids else 1))
    check(st == 200, "10 s back: decode still answers")
    clock.set("+0")
    n_before = len(ids)
    r, _ = take(c)
    r2, _ = take(c, "/api/snowflake/get/ft?count=1000")
    check(r is not None and r[0] == 200 and r2 is not None and r2[0] == 200,
          "stepped forward again: served (got %s, %s)" % (r and r[0], r2 and r2[0]))
    check(len(ids) == n_before + 1001, "stepped forward: 1001 new IDs")
    st, body, _ = http(port, "/ready")
    check(st == 200, "stepped forward: /ready -> 200 again (got %d %s)" % (st, body[:200]))

    # 1.5 s back: 503 until the clock catches up by itself.
    clock.set("-1.5")
    t0 = time.monotonic()
    first_ok, seen = None, []
    while time.monotonic() - t0 < 4:
        r, _ = take(c)
        seen.append(r[0] if r else None)
        if r and r[0] == 200:
            first_ok = time.monotonic() - t0
            break
        time.sleep(0.05)
    log("1.5 s back: %d refusals, served again after %s s" % (seen.count(503), first_ok and "%.2f" % first_ok))
    check(seen and seen[0] == 503, "1.5 s back: first request 503 (got %s)" % seen[:1])
    check(set(seen[:-1]) <= {503}, "1.5 s back: only 503 until caught up (got %s)" % sorted(set(map(str, seen))))
    check(first_ok is not None and 1.2 <= first_ok <= 2.5,
          "1.5 s back: served again by itself after ~1.5 s (got %s)" % first_ok)

    # 200 ms back: more than 5 ms, so refused (large enough that a slow
    # machine cannot shrink it below 5 ms between the two requests).
    take(c)
    clock.set("-1.700")
    r, dt = take(c)
    check(r is not None and r[0] == 503 and b"clock_backwards" in r[2],
          "200 ms back: 503 clock_backwards (got %s %r)" % (r and r[0], r and r[2][:100]))
    time.sleep(0.3)  # caught up again

    # 3 ms back: served after a short wait. The step seen by the server is
    # 3 ms minus the time between the two requests, so a few tries may be needed.
    offset_ms = 1700
    waited_before = waited_count(port)
    small_ok, tries, latencies = False, 0, []
    for tries in range(1, 9):
        time.sleep(0.02)
        r, _ = take(c)
        if not (r and r[0] == 200):
            continue
        offset_ms += 3
        clock.set("-%d.%03d" % (offset_ms // 1000, offset_ms % 1000))
        r, dt = take(c)
        latencies.append(round(dt * 1000, 2))
        check(r is not None and r[0] == 200, "3 ms back: 200, never refused (try %d: got %s %r)"
              % (tries, r and r[0], r and r[2][:100]))
        if waited_count(port) > waited_before:
            small_ok = True
            break
    log("3 ms back: %d tries, latencies %s ms, waited %s" % (tries, latencies, small_ok))
    check(small_ok, "3 ms back: the server waited (clock_backwards waited counter rose) and then served")
    check(all(x < 100 for x in latencies), "3 ms back: answered within 100 ms (%s)" % latencies)

    clock.set("+0")
    r, _ = take(c, "/api/snowflake/get/ft?count=10")
    check(r is not None and r[0] == 200, "back at real time: served")
    check(all(a < b for a, b in zip(ids, ids[1:])),
          "every ID through all the steps is above all earlier ones (%d IDs)" % len(ids))
    check(len(ids) == len(set(ids)), "no duplicate IDs through the steps")
    check({(i >> 12) & 0x3FF for i in ids} == {WORKER}, "worker bits through the steps")
    st, body, _ = metrics(port)
    m = parse_metrics(body)
    refused = m.get(("leafd_snowflake_clock_backwards_total", frozenset({("outcome", "refused")})), 0)
    check(refused >= 11, "metrics count the refusals (refused=%d)" % refused)
    c.close()
    rc = node.stop()
    check(rc == 0, "faketime node: SIGTERM exits 0 (got %s)" % rc)


def start_to_ready(env, runs=5):
    """Measures exec -> first /ready 200, polling every millisecond."""
    times = []
    for k in range(runs):
        port = free_port()
        d = os.path.join(env.dir, "startup%d" % k)
        os.makedirs(d)
        conf = os.path.join(d, "leafd.properties")
        props = static_props(WORKER, **{"leafd.listen": "127.0.0.1:%d" % port, "leafd.data.dir": d + "/data"})
        with open(conf, "w") as f:
            f.write("".join("%s = %s\n" % kv for kv in props.items()))
        logf = open(os.path.join(d, "leafd.log"), "wb")
        t0 = time.monotonic()
        p = subprocess.Popen([LEAFD_BIN, "-c", conf], stdout=logf, stderr=subprocess.STDOUT)
        ready = None
        while time.monotonic() - t0 < 10 and p.poll() is None:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=1)
                s.sendall(get_request("/ready", headers={"Connection": "close"}))
                data = s.recv(100)
                s.close()
                if data.startswith(b"HTTP/1.1 200"):
                    ready = time.monotonic() - t0
                    break
            except OSError:
                time.sleep(0.001)
        p.terminate()
        p.wait(10)
        logf.close()
        if ready is not None:
            times.append(ready * 1000)
    times.sort()
    check(len(times) == runs, "static node reached /ready in every start (%d of %d)" % (len(times), runs))
    if times:
        log("start to /ready in static mode (this build, sanitizers on): median %.1f ms, min %.1f, max %.1f"
            % (times[len(times) // 2], times[0], times[-1]))


def main():
    with Env() as env:
        node = env.leafd("static", static_props(WORKER))
        ready_and_log(node)
        check_metrics(node)
        clock_steps(env)
        start_to_ready(env)
        env.finish()


if __name__ == "__main__":
    main()
