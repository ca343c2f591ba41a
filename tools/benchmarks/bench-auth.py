#!/usr/bin/env python3
"""What users and permissions cost: the same leafd binary with leafd.auth.enable
off and on, side by side in one run (the budget: at most 10% of
single-ID HTTP throughput and of RESP INCR throughput).

One throwaway ZooKeeper; two nodes on it (auth off, auth on with one user
granted snowflake:bench.*). Each round drives both nodes in turn, the order
flipping every round: wrk (1 thread, 50 connections, keep-alive) on
GET /api/snowflake/get/bench.a, with `Authorization: Basic ...` on the auth
node; redis-benchmark (50 connections, -P 1) INCR snowflake:bench.a, with
--user/-a on the auth node. It reports the median of per-round on/off ratios.

usage: tools/benchmarks/bench-auth.py [--rounds N] [--seconds S] [--requests N] [--threads T] [--binary PATH]
Figures and the exact command belong in docs/BENCHMARKS.md.
"""
import argparse
import base64
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import leafdtest  # noqa: E402


def build():
    b = os.path.join(ROOT, "build-bench")
    subprocess.run(["cmake", "-S", ROOT, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DLEAFD_TESTS=OFF"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", b, "-j", str(os.cpu_count() or 2)], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(b, "leafd")


def wrk(port, path, seconds, header=None):
    argv = ["wrk", "-t1", "-c50", "-d%ds" % seconds]
    if header:
        argv += ["-H", header]
    argv.append("http://127.0.0.1:%d%s" % (port, path))
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 30).stdout
    if re.search(r"Non-2xx or 3xx responses|Socket errors", out):
        print("  wrk reported errors:\n" + out, file=sys.stderr)
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    return float(m.group(1)) if m else 0.0


def redis_bench(port, n, auth=None):
    argv = ["redis-benchmark", "-p", str(port), "-n", str(n), "-c", "50", "-P", "1", "-q"]
    if auth:
        argv += ["--user", auth[0], "-a", auth[1]]
    argv += ["INCR", "snowflake:bench.a"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout
    m = re.findall(r"([\d.]+) requests per second", out.replace("\r", "\n"))
    return float(m[-1]) if m else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5, help="wrk seconds per node per round")
    ap.add_argument("--requests", type=int, default=100000, help="redis-benchmark requests")
    ap.add_argument("--threads", type=int, default=2, help="leafd event loops")
    ap.add_argument("--binary", help="use this leafd instead of building one")
    args = ap.parse_args()
    leafdtest.LEAFD_BIN = args.binary or build()
    env = leafdtest.Env()
    try:
        zk = env.zookeeper()
        base = {"leaf.name": "bench", "leaf.snowflake.enable": "true",
                "leaf.snowflake.zk.address": zk.address(), "leafd.threads": str(args.threads),
                "leafd.log.level": "warn", "leafd.snowflake.advertise.ip": "127.0.0.1",
                "leafd.admin.token": "bench-token-0123456789"}
        off = env.leafd("off", dict(base), resp=True)
        on = env.leafd("on", dict(base, **{"leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0"}), resp=True)
        st, body, _ = leafdtest.http(on.port, "/api/users", method="POST",
                                     body='{"name":"bench","grants":["snowflake:bench.*:ids"]}',
                                     headers={"Authorization": "Bearer bench-token-0123456789"})
        if st != 201:
            raise SystemExit("creating the user failed: %d %s" % (st, body))
        secret = json.loads(body)["secret"]
        header = "Authorization: Basic " + base64.b64encode(("bench:" + secret).encode()).decode()
        path = "/api/snowflake/get/bench.a"
        if not leafdtest.wait_until(lambda: leafdtest.http(on.port, path, headers={
                "Authorization": header.split(": ", 1)[1]})[0] == 200, 5):
            raise SystemExit("the user does not work on the auth node")
        cases = {"HTTP single ID": [], "RESP INCR": []}
        for r in range(args.rounds):
            order = [("off", off, None), ("on", on, header)] if r % 2 == 0 else \
                    [("on", on, header), ("off", off, None)]
            http_rate, resp_rate = {}, {}
            for who, node, h in order:
                http_rate[who] = wrk(node.port, path, args.seconds, h)
            for who, node, h in order:
                resp_rate[who] = redis_bench(node.resp_port, args.requests,
                                             ("bench", secret) if h else None)
            for name, rate in (("HTTP single ID", http_rate), ("RESP INCR", resp_rate)):
                ratio = rate["on"] / rate["off"] if rate["off"] else 0
                cases[name].append((rate["off"], rate["on"], ratio))
                print("  %-15s round %d: off %.0f/s, on %.0f/s, on/off %.3f"
                      % (name, r + 1, rate["off"], rate["on"], ratio), flush=True)
        print("\n| case | auth off (median) | auth on (median) | on/off (median of rounds) | rounds |")
        print("|---|---|---|---|---|")
        for name, rows in cases.items():
            print("| %s | %.0f/s | %.0f/s | **%.3f** | %s |" % (
                name, statistics.median(x[0] for x in rows), statistics.median(x[1] for x in rows),
                statistics.median(x[2] for x in rows), ", ".join("%.2f" % x[2] for x in rows)))
    finally:
        env.close()


if __name__ == "__main__":
    main()
