#!/usr/bin/env python3
"""leafd with many tags in leaf_alloc: the "Scale" figures of docs/BENCHMARKS.md.

usage: tools/benchmarks/bench-scale.py [--tags 1000,10000,100000] [--touch N] [--idle S] [--bin PATH]

For each number of tags: a throwaway MariaDB (the test harness's), leaf_alloc
filled with that many tags (step 1000), one leafd (segment mode; the binary of
a Release build in build-bench unless --bin), then:
- ready: seconds from the process start to /ready 200;
- first touch: --touch tags (default 5000, capped at the number of tags) asked
  one at a time, each for the first time (a range fetch each): mean, p99 and
  max latency, and any answer other than 200;
- peak RSS (VmHWM) and RSS after the touches;
- during a refresh: first touches of the further tags (while there are any)
  for up to 32 s, so that the 30 s tag refresh runs meanwhile (it starts
  about 30 s after the process): mean, p99, max, non-200s, and the longest
  of those that ran within 1 s of a refresh (a first touch is a range
  fetch, so this is the range-fetch latency during a refresh, plus HTTP);
- idle CPU: the process's CPU time over --idle seconds (default 65) with no
  requests, in percent of one core (it includes the 30 s refreshes).
"""
import argparse
import http.client as httpclient
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import leafdtest  # noqa: E402


def proc_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fill(db, n):
    batch = 2000
    for i in range(0, n, batch):
        rows = ",".join("('t%06d',1,1000)" % k for k in range(i, min(n, i + batch)))
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES " + rows)


def touch(port, names):
    """Asks each tag once on one keep-alive connection; returns (latencies, non-200 answers)."""
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=10)
    lat, bad = [], []
    for name in names:
        t = time.perf_counter()
        conn.request("GET", "/api/segment/get/" + name)
        r = conn.getresponse()
        body = r.read()
        lat.append((time.perf_counter() - t, time.monotonic()))
        if r.status != 200:
            bad.append((name, r.status, body[:80]))
    conn.close()
    return lat, bad


def stats(lat):
    s = sorted(x[0] for x in lat)
    return "mean %.2f ms, p99 %.2f ms, max %.2f ms" % (
        1000 * sum(s) / len(s), 1000 * s[int(len(s) * 0.99)], 1000 * s[-1])


def build():
    b = os.path.join(ROOT, "build-bench")
    subprocess.run(["cmake", "-S", ROOT, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DLEAFD_TESTS=OFF"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", b, "-j2", "--target", "leafd"], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(b, "leafd")


def run(n, args):
    leafdtest.LEAFD_BIN = args.bin
    with leafdtest.Env() as env:
        db = env.mariadb()
        fill(db, n)
        t0 = time.monotonic()
        node = env.leafd("scale", {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
                                   "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw",
                                   "leafd.log.level": "warn"}, wait_ready=False)
        node.wait_ready(60)
        ready = time.monotonic() - t0
        pid = node.proc.p.pid
        time.sleep(1.0)
        k = min(args.touch, n)
        lat, bad = touch(node.port, ["t%06d" % i for i in range(k)])
        print("%7d tags: ready %.2f s; first touch of %d tags: %s; non-200: %d %s"
              % (n, ready, k, stats(lat), len(bad), bad[:3]), flush=True)
        print("%7d tags: RSS peak %.1f MB, now %.1f MB" % (n, proc_status(pid, "VmHWM") / 1024,
                                                          proc_status(pid, "VmRSS") / 1024), flush=True)
        # The refresh timer starts with the process: refreshes at about t0 + 30 s, t0 + 60 s.
        end, i = time.monotonic() + 32, k
        lat2, bad2 = [], []
        while time.monotonic() < end and i < n:
            names = ["t%06d" % j for j in range(i, min(n, i + 200))]
            i += len(names)
            l, b = touch(node.port, names)
            lat2 += l
            bad2 += b
        if lat2:
            near = [x for x in lat2 if any(abs(x[1] - x[0] - (t0 + r)) < 1.0 for r in (30, 60))]
            print("%7d tags: %d more first touches (%s; non-200: %d %s); the %d within 1 s of a refresh:"
                  " max %.2f ms" % (n, len(lat2), stats(lat2), len(bad2), bad2[:3], len(near),
                                    1000 * max((x[0] for x in near), default=0)), flush=True)
        c0, t1 = cpu_seconds(pid), time.monotonic()
        time.sleep(args.idle)
        cpu = (cpu_seconds(pid) - c0) / (time.monotonic() - t1) * 100
        print("%7d tags: idle CPU %.2f%% over %d s; RSS peak %.1f MB, now %.1f MB"
              % (n, cpu, args.idle, proc_status(pid, "VmHWM") / 1024, proc_status(pid, "VmRSS") / 1024),
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tags", default="1000,10000,100000")
    ap.add_argument("--touch", type=int, default=5000)
    ap.add_argument("--idle", type=int, default=65)
    ap.add_argument("--bin")
    args = ap.parse_args()
    args.bin = args.bin or build()
    for n in [int(x) for x in args.tags.split(",")]:
        run(n, args)


if __name__ == "__main__":
    main()
