#!/usr/bin/env python3
"""libleafd-client's IDs in-process against the network path, in one run (tools/bench client).

Builds a release leafd and libleafd-client (build-bench), compiles tools/benchmarks/bench-client.c against
the static library, starts a throwaway MariaDB (tag `bench`, step 1,000,000) and one leafd with
its Redis port, then measures:
  - in-process IDs/s with 1, 2 and 4 threads: leafd_client_next() with the key by name, and
    leafd_client_key_next() with the key looked up once; next_many() of 1000 beside them;
  - the latency of one next() over N calls, refills included: p50, p99, p99.9, p99.99, max;
  - the steady state (--steady-seconds, 1 and 2 threads, by name and by key handle): from the
    key's first use, the first second (the prefetch ramp) is taken but not counted; of the rest,
    the largest latency of a call, the calls over 100 us, 1 ms and 10 ms, and the calls that
    waited for the refill thread, which the library counts (leafd_client_key_waits()): a slow
    call with no wait was preempted, not stalled on the network;
  - the network path beside it: redis-benchmark `LEAF.IDS segment:bench 1` and `... 1000`
    (50 connections, pipeline 16), IDs/s.
Each case runs --rounds times; the median is reported.

usage: tools/bench client [--seconds S] [--rounds N] [--latency-calls N] [--steady-seconds S]
                         [--only throughput,latency,steady,network] [--binary LEAFD]
Figures and the exact command belong in docs/BENCHMARKS.md.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build-bench")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(binary, program="bench-client"):
    """The release leafd (unless binary is given) and libleafd-client, and program
    (tools/benchmarks/<program>.c, also tools/bench strict's) linked against the static library."""
    sh(["cmake", "-S", ROOT, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release", "-DLEAFD_TESTS=OFF"],
       stdout=subprocess.DEVNULL)
    targets = ["leafd_client_static"] + ([] if binary else ["leafd"])
    sh(["cmake", "--build", BUILD, "-j", str(os.cpu_count() or 2), "--target"] + targets,
       stdout=subprocess.DEVNULL)
    exe = os.path.join(BUILD, program)
    sh(["cc", "-O2", "-I" + os.path.join(ROOT, "src", "client", "include"), "-o", exe,
        os.path.join(ROOT, "tools", "benchmarks", program + ".c"), os.path.join(BUILD, "libleafd-client.a"),
        "-lssl", "-lcrypto", "-lpthread"])
    return binary or os.path.join(BUILD, "leafd"), exe


def run(exe, endpoint, *args):
    out = subprocess.run([exe, endpoint, "log=0;wait.ms=30000", "segment:bench"] + [str(a) for a in args],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError("bench-client %s failed: %s" % (args, out.stderr[-500:]))
    return json.loads(out.stdout.splitlines()[-1])


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def throughput(exe, ep, seconds, rounds):
    print("in-process, IDs/s (median of %d rounds of %.0f s):" % (rounds, seconds))
    for label, extra in (("next(c, key)", []), ("key_next(k)", ["key"]),
                         ("next_many(1000)", ["key", "many", 1000])):
        for threads in (1, 2, 4):
            rates = [run(exe, ep, threads, seconds, *extra)["ids_per_s"] for _ in range(rounds)]
            print("  %-16s %d thread(s): %6.1f M/s" % (label, threads,
                                                       statistics.median(rates) / 1e6))


def steady(exe, ep, seconds, rounds):
    print("steady state: %.0f s from the key's first use, the first 1 s not counted; "
          "each round a fresh process and key:" % seconds)
    cases = [(label, extra, threads, 0) for label, extra in (("next(c, key)", []),
                                                             ("key_next(k)", ["key"]))
             for threads in (1, 2)]
    cases += [("key_next(k)", ["key"], 1, rate) for rate in (100000, 1000000, 10000000)]
    for label, extra, threads, rate in cases:
        pace = "at %gM/s" % (rate / 1e6) if rate else "flat out"
        for _ in range(rounds):
            r = run(exe, ep, threads, seconds, *extra, "steady", 1, rate)
            print("  %-12s %d thread(s) %-11s ramp %d waits, max %.2f ms; then %5.1fM calls, "
                  "max %.2f ms, over 100 us/1 ms/10 ms: %d/%d/%d, refill waits %d "
                  "(max %.2f ms), max without a wait %.2f ms" % (
                      label, threads, pace, r["ramp_waits"], r["ramp_max_ns"] / 1e6,
                      r["calls"] / 1e6, r["max_ns"] / 1e6, r["over_100us"], r["over_1ms"],
                      r["over_10ms"], r["waits"], r["max_waited_ns"] / 1e6,
                      r["max_unwaited_ns"] / 1e6))


def leaf_ids(port, n, requests):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-n", str(requests), "-c", "50",
                          "-P", "16", "-q", "LEAF.IDS", "segment:bench", str(n)],
                         capture_output=True, text=True, timeout=600).stdout
    m = re.findall(r"([\d.]+) requests per second", out.replace("\r", "\n"))
    return float(m[-1]) * n if m else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--latency-calls", type=int, default=20000000)
    ap.add_argument("--steady-seconds", type=float, default=10)
    ap.add_argument("--only", default="throughput,latency,steady,network",
                    help="the parts to run, comma-separated")
    ap.add_argument("--binary", help="use this leafd instead of building one")
    args = ap.parse_args()
    only = set(args.only.split(","))
    binary, exe = build(args.binary)
    os.environ["LEAFD_BIN"] = binary
    sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
    import leafdtest  # noqa: E402 - after LEAFD_BIN is set
    with leafdtest.Env() as env:
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('bench', 1, 1000000)")
        node = env.leafd("bench", leafdtest.seg_props(db), resp=True)
        ep = "http://127.0.0.1:%d" % node.port
        print("load average at the start: %s" % loadavg())
        if "throughput" in only:
            throughput(exe, ep, args.seconds, args.rounds)
        if "latency" in only:
            print("latency of one call over %d calls, refills included (ns):" % args.latency_calls)
            for label, extra in (("next(c, key)", []), ("key_next(k)", ["key"])):
                r = run(exe, ep, 1, 0, *extra, "latency", args.latency_calls)
                print("  %-16s p50 %d, p99 %d, p99.9 %d, p99.99 %d, max %d" % (
                    label, r["p50_ns"], r["p99_ns"], r["p999_ns"], r["p9999_ns"], r["max_ns"]))
        if "steady" in only:
            steady(exe, ep, args.steady_seconds, args.rounds)
        if "network" in only:
            print("network path, LEAF.IDS over RESP (50 connections, pipeline 16), IDs/s:")
            for n, requests in ((1, 500000), (1000, 20000)):
                rates = [leaf_ids(node.resp_port, n, requests) for _ in range(args.rounds)]
                print("  LEAF.IDS segment:bench %-5d %8.2f M/s" % (n,
                                                                  statistics.median(rates) / 1e6))
        print("load average at the end: %s" % loadavg())


if __name__ == "__main__":
    main()
