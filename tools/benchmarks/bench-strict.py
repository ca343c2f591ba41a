#!/usr/bin/env python3
"""Strict IDs through libleafd-client's batching client against one call per ID (tools/bench strict).

Modelled on TiDB's pd-tso-bench (callers x processes against one leader, the rate and the
call latency): builds a release leafd and libleafd-client (build-bench), compiles
tools/benchmarks/bench-strict.c against the static library, starts a throwaway ZooKeeper and
  - one primary (one node, sequences on): sequence:s
      - today's path, one HTTP call per ID: --callers threads, each its own keep-alive
        connection, GET /api/sequence/get/s (the baseline);
      - the library in strict mode (docs/man/leafd_client.3, "STRICT KEYS"): the same threads
        calling leafd_client_next(), in 1 and in 2 processes, and with strict.wait.us;
      - one caller alone (the latency of a round trip);
  - sharded owners (two nodes, leafd.sequence.sharding = true): a keyed space, each call on
    keyed:ks:k<random of 16> (hot keys: batches form) and of 10,000 (rarely two calls on one
    key at once: a round trip each), callers split over 2 processes.
Reports IDs/s, the call latency's p50/p99/p99.9 and the library's batches (calls per round
trip: leafd_client_key_waits), the median of --rounds rounds of --seconds each; against one
primary every round runs each case once, and the ratio to the HTTP baseline is the median of the
rounds' ratios (the load of a shared machine moves within seconds).

usage: tools/bench strict [--callers N] [--seconds S] [--rounds N] [--binary LEAFD]
                          [--only primary,sharded]
Figures and the exact command belong in docs/BENCHMARKS.md ("Strict keys").
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import leafdtest  # noqa: E402
from leafdtest import Env, http, wait_until  # noqa: E402
from zkhelpers import zk_props  # noqa: E402


def build(binary):
    """The release leafd and bench-strict, built as tools/bench client builds its program."""
    spec = importlib.util.spec_from_file_location(
        "bench_client", os.path.join(ROOT, "tools", "benchmarks", "bench-client.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build(binary, "bench-strict")


def load(exe, endpoints, options, threads, seconds, key, procs=1, extra=()):
    """procs processes of threads/procs callers each, at once: the summed rate, the merged
    latencies (each process's percentiles, the worst taken), calls per round trip."""
    ps = [subprocess.Popen([exe, endpoints, options, str(threads // procs), str(seconds), key]
                           + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True) for _ in range(procs)]
    outs = []
    for p in ps:
        out, err = p.communicate(timeout=seconds + 120)
        if p.returncode != 0:
            raise RuntimeError("bench-strict failed: %s" % err[-500:])
        outs.append(json.loads(out.splitlines()[-1]))
    calls = sum(o["calls"] for o in outs)
    trips = sum(o["round_trips"] for o in outs)
    return {"ids_per_s": sum(o["ids_per_s"] for o in outs),
            "failed": sum(o["failed"] for o in outs),
            "p50_us": max(o["p50_us"] for o in outs), "p99_us": max(o["p99_us"] for o in outs),
            "p999_us": max(o["p999_us"] for o in outs),
            "batch": calls / trips if trips else 0.0}


def median_of(rounds, fn):
    rs = [fn() for _ in range(rounds)]
    return {k: statistics.median(r[k] for r in rs) for k in rs[0]}


def row(label, r, ratio=None):
    ratio = " (%.1fx)" % ratio if ratio else ""
    print("  %-44s %9.0f IDs/s%-8s p50 %7.0f us  p99 %7.0f us  p99.9 %7.0f us  batch %6.1f%s"
          % (label, r["ids_per_s"], ratio, r["p50_us"], r["p99_us"], r["p999_us"], r["batch"],
             "  FAILED CALLS %d" % r["failed"] if r["failed"] else ""), flush=True)


def nodes_up(env, n, sharded):
    zk = env.zookeeper()
    nodes = [env.leafd("n%d" % i, zk_props(zk.address(), name="bench", **{
        "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
        "leafd.sequence.sharding": "true" if sharded else "false",
        "leafd.zk.session.timeout.ms": "10000"}), wait_ready=False) for i in range(n)]

    def ready():
        for nd in nodes:
            try:
                st, body, _ = nd.get("/ready", timeout=2)
            except OSError:
                return False
            seq = json.loads(body).get("sequence", {}) if st == 200 else {}
            if (seq.get("slots", 0) == 0) if sharded else seq.get("role") != "primary":
                return False
        return True
    if not wait_until(ready, 60, 0.2):
        sys.exit("bench-strict: the nodes did not come up")
    return nodes


def one_primary(exe, a):
    with Env() as env:
        node = nodes_up(env, 1, False)[0]
        ep = "http://127.0.0.1:%d" % node.port
        http(node.port, "/api/sequence/get/s")
        print("one primary, sequence:s, %d callers, median of %d rounds of %g s:"
              % (a.callers, a.rounds, a.seconds))
        opts = "log=0;timeout.ms=5000"
        # Each round runs every case once, the HTTP baseline first: the load of a shared machine
        # moves within seconds, so a ratio is taken within a round and its median reported.
        cases = [("one HTTP call per ID (today)", opts, a.callers, 1, ["--http"]),
                 ("library, strict, 1 process", opts, a.callers, 1, []),
                 ("library, strict, 2 processes", opts, a.callers, 2, []),
                 ("library, strict.wait.us=200, 1 process", opts + ";strict.wait.us=200",
                  a.callers, 1, []),
                 ("library, strict, 1 caller", opts, 1, 1, [])]
        rounds = [[load(exe, ep, o, n, a.seconds, "sequence:s", procs, extra)
                   for _, o, n, procs, extra in cases] for _ in range(a.rounds)]
        for i, (label, _, n, _, _) in enumerate(cases):
            r = {k: statistics.median(rd[i][k] for rd in rounds) for k in rounds[0][i]}
            ratio = statistics.median(rd[i]["ids_per_s"] / rd[0]["ids_per_s"] for rd in rounds)
            row(label, r, ratio if 0 < i and n == a.callers else None)


def sharded(exe, a):
    with Env() as env:
        nodes = nodes_up(env, 2, True)
        st, body, _ = http(nodes[0].port, "/api/keyed", method="POST",
                           body=json.dumps({"name": "ks", "step": 10000}))
        if st != 201:
            sys.exit("bench-strict: creating the keyed space: %d %s" % (st, body))
        ep = ",".join("http://127.0.0.1:%d" % n.port for n in nodes)
        print("two sharded owners, keyed:ks:k<i>, %d callers in 2 processes, median of %d "
              "rounds of %g s:" % (a.callers, a.rounds, a.seconds))
        opts = "log=0;timeout.ms=5000;keys.max=16384"
        for keys in (16, 10000):
            # A first pass learns every key's owner (a 307 each): not counted.
            load(exe, ep, opts, a.callers, 1, "keyed:ks:k", 2, ["--keys", str(keys)])
            r = median_of(a.rounds, lambda: load(exe, ep, opts, a.callers, a.seconds,
                                                 "keyed:ks:k", 2, ["--keys", str(keys)]))
            row("library, strict, %d keys" % keys, r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callers", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--binary")
    ap.add_argument("--only", default="primary,sharded")
    a = ap.parse_args()
    binary, exe = build(a.binary)
    leafdtest.LEAFD_BIN = os.path.abspath(binary)
    with open("/proc/loadavg") as f:
        print("load average before: %s" % " ".join(f.read().split()[:3]))
    t = time.time()
    if "primary" in a.only:
        one_primary(exe, a)
    if "sharded" in a.only:
        sharded(exe, a)
    print("took %.0f s" % (time.time() - t))


if __name__ == "__main__":
    main()
