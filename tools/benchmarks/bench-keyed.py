#!/usr/bin/env python3
"""Keyed sequences over RESP against one sequence and redis-server INCR, side by side in one run.

One release leafd (sequences on, a throwaway ZooKeeper) with a keyed space `bench` (step
10000) whose 1,000,000 keys are all made resident first (pre-warmed: the first touch of a key
costs an insert; the fill reports that rate and the daemon's RSS per resident key), and one
redis-server (no persistence) whose 1,000,000 keys are filled the same way. redis-benchmark
(50 connections, -P 1 and -P 16) then drives, the order turning every round:
  keyed     `INCR keyed:bench:<random key among 1,000,000>` (redis-benchmark -r: __rand_int__)
  sequence  `INCR sequence:bench` (one sequence)
  redis-1M  redis-server `INCR k:<random key among 1,000,000>`
  redis-1   redis-server `INCR bench` (one key: the usual bar)
It reports medians, and the medians of per-round ratios keyed/sequence (the goal: >= 0.8) and
keyed/redis-1M. Then latency: each target under an open-loop load paced at half of its own
median -P 1 rate (tools/benchmarks/bench-paced.c, 50 connections, the latency of a command
counted from when it was due), p50 / p99 / p99.9, the median of the rounds.

The cost of the bound: a second leafd (its own cluster name, same ZooKeeper) with
leafd.keyed.max.keys = 100,000 takes the same random keys among 1,000,000, so that about nine
calls in ten evict a key and bring one back, in the same rounds as the unbounded node.

An A/B of two builds (--base PATH, a leafd of another commit): a second node on that binary
(its own cluster name, same ZooKeeper), pre-warmed the same, whose keyed and sequence targets run
in the same rounds as the others; the report adds its keyed/sequence and this binary's keyed rate
and server CPU per command over the base's (medians of per-round ratios). The paced and bound
phases are left out then.

usage: tools/bench keyed [--rounds N] [--requests N] [--threads T] [--keys N] [--max-keys N]
                         [--paced-seconds S] [--binary PATH] [--base PATH]
Figures and the exact command belong in docs/BENCHMARKS.md ("Keyed sequences").
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import leafdtest  # noqa: E402

CONNS = 50


def load_resp():
    """tools/benchmarks/bench-resp.py (build, wait_port, free_port, cpu_ns): a dashed file name."""
    path = os.path.join(ROOT, "tools", "benchmarks", "bench-resp.py")
    spec = importlib.util.spec_from_file_location("bench_resp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


resp = load_resp()


def build_paced(binary):
    exe = os.path.join(os.path.dirname(os.path.abspath(binary)), "bench-paced")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(ROOT, "tools", "benchmarks", "bench-paced.c")],
                   check=True)
    return exe


def rbench(port, key, n, pipeline, keyspace, pid):
    """redis-benchmark INCR key (with -r keyspace when key holds __rand_int__):
    (commands/s, server CPU ns per command)."""
    argv = ["redis-benchmark", "-p", str(port), "-n", str(n), "-c", str(CONNS), "-P", str(pipeline),
            "-q"] + (["-r", str(keyspace)] if "__rand_int__" in key else []) + ["INCR", key]
    c0 = resp.cpu_ns(pid)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout
    m = re.findall(r"([\d.]+) requests per second", out.replace("\r", "\n"))
    return (float(m[-1]) if m else 0.0), (resp.cpu_ns(pid) - c0) / n


def fill(port, fmt, keys, batch=10000):
    """INCR every key fmt % i below keys, batch commands per round trip; returns the answers
    that were not integers >= 1."""
    bad = 0
    with socket.create_connection(("127.0.0.1", port)) as s:
        for at in range(0, keys, batch):
            n = min(batch, keys - at)
            cmds = []
            for i in range(at, at + n):
                k = (fmt % i).encode()
                cmds.append(b"*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n" % (len(k), k))
            s.sendall(b"".join(cmds))
            got = b""
            while got.count(b"\r\n") < n:
                chunk = s.recv(1 << 20)
                if not chunk:
                    raise SystemExit("the server closed the connection while filling")
                got += chunk
            bad += sum(1 for line in got.split(b"\r\n")[:n]
                       if not line.startswith(b":") or int(line[1:]) < 1)
    return bad


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))


def metric(node, name, space):
    body = leafdtest.http(node.port, "/metrics")[1]
    m = re.search(r'^%s\{space="%s"\} (\d+)' % (re.escape(name), space), body, re.M)
    return int(m.group(1)) if m else 0


def keyed_node(env, zk, name, threads, extra=None):
    """A leafd with sequences on and the keyed space `bench` created and serving."""
    props = {"leaf.name": name, "leaf.snowflake.enable": "true",
             "leaf.snowflake.zk.address": zk.address(), "leafd.snowflake.advertise.ip": "127.0.0.1",
             "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
             "leafd.threads": str(threads), "leafd.log.level": "warn"}
    props.update(extra or {})
    node = env.leafd(name, props, resp=True, wait_ready=True)
    st, body, _ = leafdtest.http(node.port, "/api/keyed", method="POST",
                                 body='{"name":"bench","step":10000}')
    if not leafdtest.wait_until(lambda: leafdtest.http(node.port, "/api/keyed/get/bench/warm")[0] == 200,
                                30):
        raise SystemExit("%s: keyed space bench not serving (create: %d %s)" % (name, st, body))
    return node


def rounds(args, targets, pipe, label):
    """args.rounds rounds of redis-benchmark over targets [(name, port, key, pid)], the order
    turning every round. Returns {name: [commands/s]} and {name: [CPU ns per command]}."""
    rates = {t[0]: [] for t in targets}
    cpu = {t[0]: [] for t in targets}
    for r in range(args.rounds):
        order = targets[r % len(targets):] + targets[:r % len(targets)]
        for name, port, key, pid in order:
            got, c = rbench(port, key, args.requests * pipe, pipe, args.keys, pid)
            rates[name].append(got)
            cpu[name].append(c)
        print("  %s -P %-2d round %d: %s" % (label, pipe, r + 1, ", ".join(
            "%s %.0f/s (%.0f ns CPU)" % (t[0], rates[t[0]][-1], cpu[t[0]][-1]) for t in targets)),
              flush=True)
    return rates, cpu


def ratio(rates, a, b):
    return [x / y if y else 0.0 for x, y in zip(rates[a], rates[b])]


def paced(args, exe, targets, max_rates):
    """Open-loop latency at half of each target's median -P 1 rate, rounds turning order."""
    out = {t[0]: [] for t in targets}
    for r in range(args.rounds):
        order = targets[r % len(targets):] + targets[:r % len(targets)]
        for name, port, key, _ in order:
            rate = max_rates[name] / 2
            fmt, space = (key.replace("__rand_int__", "%012lld"), args.keys) if "__rand_int__" in key \
                else (key, 0)
            p = subprocess.run([exe, str(port), "%.0f" % rate, str(args.paced_seconds), str(CONNS), fmt,
                                str(space)], capture_output=True, text=True, timeout=args.paced_seconds + 60)
            got = json.loads(p.stdout) if p.stdout.startswith("{") else {}
            if p.returncode != 0 or not got:
                print("  bench-paced %s: rc %d %s %s" % (name, p.returncode, p.stdout, p.stderr))
            out[name].append(got)
            print("  paced %-9s round %d: %.0f/s asked, %s" % (name, r + 1, rate, p.stdout.strip()),
                  flush=True)
    return out


def run(args):
    binary = args.binary or resp.build()
    exe = build_paced(binary)
    leafdtest.LEAFD_BIN = binary
    tmp = tempfile.mkdtemp(prefix="leafd-bench-keyed-")
    env = leafdtest.Env()
    redis = None
    try:
        rport = resp.free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                                  "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL)
        if not resp.wait_port(rport):
            raise SystemExit("redis-server did not start")
        zk = env.zookeeper()
        node = keyed_node(env, zk, "bench", args.threads)
        pid = node.proc.p.pid
        resp.redis_cmd(node.resp_port, "INCR", "sequence:bench")

        # Pre-warm: every key resident; the daemon's RSS growth per resident key.
        rss0, t0 = rss_kb(pid), time.monotonic()
        bad = fill(node.resp_port, "keyed:bench:%012d", args.keys)
        took = time.monotonic() - t0
        rss1, resident = rss_kb(pid), metric(node, "leafd_keyed_resident_keys", "bench")
        writes = metric(node, "leafd_keyed_section_writes_total", "bench")
        print("fill: %d keys, first touches %.0f IDs/s (pipelined %d deep, one connection), %d bad "
              "answers; resident %d; RSS %.1f -> %.1f MB: %.1f bytes per resident key; %d section writes"
              % (args.keys, args.keys / took, 10000, bad, resident, rss0 / 1024, rss1 / 1024,
                 (rss1 - rss0) * 1024.0 / max(resident, 1), writes), flush=True)
        fill(rport, "k:%012d", args.keys)

        targets = [("keyed", node.resp_port, "keyed:bench:__rand_int__", pid),
                   ("sequence", node.resp_port, "sequence:bench", pid),
                   ("redis-1M", rport, "k:__rand_int__", redis.pid),
                   ("redis-1", rport, "bench", redis.pid)]
        if args.base:
            targets += base_targets(args, env, zk)
        results = {}
        w0 = metric(node, "leafd_keyed_section_writes_total", "bench")
        for pipe in (1, 16):
            results[pipe] = rounds(args, targets, pipe, "main")
        if args.base:
            report_ab(args, results)
            return
        w1 = metric(node, "leafd_keyed_section_writes_total", "bench")
        max_rates = {t[0]: statistics.median(results[1][0][t[0]]) for t in targets}
        lat = paced(args, exe, targets, max_rates)
        w2 = metric(node, "leafd_keyed_section_writes_total", "bench")
        print("section writes of the keyed space: %d over the throughput rounds, %d over the paced "
              "rounds" % (w1 - w0, w2 - w1), flush=True)

        ev = keyed_node(env, zk, "evict", args.threads, {"leafd.keyed.max.keys": str(args.max_keys)})
        rbench(ev.resp_port, "keyed:bench:__rand_int__", args.requests, 16, args.keys, ev.proc.p.pid)
        e0, i0 = metric(ev, "leafd_keyed_evictions_total", "bench"), metric(ev, "leafd_keyed_issued_total", "bench")
        etargets = [("unbounded", node.resp_port, "keyed:bench:__rand_int__", pid),
                    ("bounded", ev.resp_port, "keyed:bench:__rand_int__", ev.proc.p.pid)]
        evict = {pipe: rounds(args, etargets, pipe, "evict") for pipe in (1, 16)}
        e1, i1 = metric(ev, "leafd_keyed_evictions_total", "bench"), metric(ev, "leafd_keyed_issued_total", "bench")
        report(args, targets, results, lat, max_rates, evict, (e1 - e0) / max(i1 - i0, 1))
    finally:
        if redis:
            redis.send_signal(signal.SIGTERM)
            redis.wait()
        env.close()
        shutil.rmtree(tmp, ignore_errors=True)


def base_targets(args, env, zk):
    """The A/B's second node, on the --base binary, pre-warmed as the first."""
    this = leafdtest.LEAFD_BIN
    leafdtest.LEAFD_BIN = args.base
    base = keyed_node(env, zk, "base", args.threads)
    leafdtest.LEAFD_BIN = this
    resp.redis_cmd(base.resp_port, "INCR", "sequence:bench")
    bad = fill(base.resp_port, "keyed:bench:%012d", args.keys)
    print("fill of the base node (%s): %d bad answers" % (args.base, bad), flush=True)
    pid = base.proc.p.pid
    return [("keyed-base", base.resp_port, "keyed:bench:__rand_int__", pid),
            ("sequence-base", base.resp_port, "sequence:bench", pid)]


def report_ab(args, results):
    print("\n| -P | keyed/sequence | keyed/sequence, base | keyed rate / base's | server CPU per keyed "
          "command / base's | server CPU per keyed command: this / base |")
    print("|---|---|---|---|---|---|")
    for pipe, (rates, cpu) in results.items():
        print("| %d | %s | %s | %s | %s | %.0f / %.0f ns |" % (
            pipe, med_list(ratio(rates, "keyed", "sequence")),
            med_list(ratio(rates, "keyed-base", "sequence-base")),
            med_list(ratio(rates, "keyed", "keyed-base")), med_list(ratio(cpu, "keyed", "keyed-base")),
            statistics.median(cpu["keyed"]), statistics.median(cpu["keyed-base"])))


def med_list(xs, fmt="%.2f"):
    return "**%s** (%s)" % (fmt % statistics.median(xs), ", ".join(fmt % x for x in xs))


def report(args, targets, results, lat, max_rates, evict, evictions_per_call):
    print("\n| -P | keyed (1M keys) | sequence (one) | redis-server 1M keys | redis-server one key | "
          "keyed/sequence (median of rounds) | keyed/redis-1M (median of rounds) | "
          "server CPU per command: keyed / sequence / redis-1M |")
    print("|---|---|---|---|---|---|---|---|")
    for pipe, (rates, cpu) in results.items():
        print("| %d | %.0f IDs/s | %.0f IDs/s | %.0f/s | %.0f/s | %s | %s | %.0f / %.0f / %.0f ns |" % (
            pipe, *(statistics.median(rates[t[0]]) for t in targets),
            med_list(ratio(rates, "keyed", "sequence")), med_list(ratio(rates, "keyed", "redis-1M")),
            statistics.median(cpu["keyed"]), statistics.median(cpu["sequence"]),
            statistics.median(cpu["redis-1M"])))
    print("\nOpen loop at half of each target's median -P 1 rate, %d connections, %d s a round "
          "(the first second not counted), median of %d rounds:" % (CONNS, args.paced_seconds, args.rounds))
    print("| target | paced at | p50 | p99 | p99.9 |")
    print("|---|---|---|---|---|")
    for name, _, _, _ in targets:
        got = [g for g in lat[name] if g]
        if not got:
            print("| %s | %.0f/s | failed | | |" % (name, max_rates[name] / 2))
            continue
        print("| %s | %.0f/s | %.0f us | %.0f us | %.0f us |" % (
            name, statistics.median(g["rate"] for g in got),
            *(statistics.median(g[k] for g in got) for k in ("p50_us", "p99_us", "p999_us"))))
    print("\nThe bound (leafd.keyed.max.keys = %d, random keys among %d; %.2f evictions per call):"
          % (args.max_keys, args.keys, evictions_per_call))
    print("| -P | unbounded (all resident) | bounded (evicting) | bounded/unbounded (median of rounds) |")
    print("|---|---|---|---|")
    for pipe, (rates, _) in evict.items():
        print("| %d | %.0f IDs/s | %.0f IDs/s | %s |" % (
            pipe, statistics.median(rates["unbounded"]), statistics.median(rates["bounded"]),
            med_list(ratio(rates, "bounded", "unbounded"))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=100000, help="per round at -P 1 (x16 at -P 16)")
    ap.add_argument("--threads", type=int, default=2, help="leafd event loops")
    ap.add_argument("--keys", type=int, default=1000000, help="keys of the space (default 1,000,000)")
    ap.add_argument("--max-keys", type=int, default=100000,
                    help="leafd.keyed.max.keys of the bounded node (default 100,000)")
    ap.add_argument("--paced-seconds", type=int, default=5, help="seconds of each paced round")
    ap.add_argument("--binary", help="use this leafd instead of building one")
    ap.add_argument("--base", help="an A/B: also this leafd (another build), in the same rounds")
    run(ap.parse_args())


if __name__ == "__main__":
    main()
