#!/usr/bin/env python3
"""leafd with 1, 2, 4, 8 event loops against nginx and redis-server, pinned to cores.

For each loop count N: leafd (snowflake, static worker ID, leafd.threads = N)
against nginx with N workers (HTTP single ID, wrk --latency) and against
redis-server with 1 thread and with N io-threads (RESP INCR, redis-benchmark,
-P 1 and -P 16). Servers run on cores 0..N-1 and the load generators on the
upper half of the cores (taskset); a loop count above half the cores is
skipped unless --share-cores (then servers and load share cores: the figure
proves the mode runs, it shows no scaling). Each figure comes with the
server's CPU per request (user+system of all its threads and child
processes, from /proc) and the p99 latency. The order of the servers flips
every round, and it reports medians of per-round ratios (leafd/nginx,
leafd/redis) and leafd(N)/leafd(1).

It runs the programs of this machine (PATH, the leafd of --binary or a
Release build in build-bench/), or those of a bundle (--bundle DIR:
DIR/bin/PROGRAM through the bundled loader DIR/lib/ld-linux-x86-64.so.2
--library-path DIR/lib, as docs/BENCHMARKS.md describes), for a many-core
machine that reaches no package registry.

With --against OTHER_LEAFD (another build, e.g. the previous commit) each
RESP figure also runs OTHER_LEAFD with as many loops, and the report gives
leafd/other. With one loop, HTTP also runs at 1,024 connections (wrk -c1024)
against nginx with one worker.

usage: tools/bench scaling [--bundle DIR | --binary LEAFD] [--against OTHER_LEAFD]
                           [--loops 1,2,4,8] [--rounds N] [--seconds S] [--requests N]
                           [--share-cores] [--out FILE]
Figures and the exact command belong in docs/BENCHMARKS.md ("Scaling with cores").
"""
import argparse
import glob
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Runner:
    """Turns a program name into an argv: from PATH, or through a bundle's loader."""

    def __init__(self, bundle, leafd, against=None):
        self.bundle = os.path.abspath(bundle) if bundle else None
        self.leafd = leafd
        self.against = os.path.abspath(against) if against else None

    def argv(self, prog):
        path = self.against if prog == "against" else None
        if self.bundle:
            lib = os.path.join(self.bundle, "lib")
            return [os.path.join(lib, "ld-linux-x86-64.so.2"), "--library-path", lib,
                    path or os.path.join(self.bundle, "bin", prog)]
        if prog == "leafd":
            return [self.leafd]
        return [path or prog]

    def pinned(self, cpus, prog, args):
        return self.argv("taskset") + ["-c", cpus] + self.argv(prog) + list(args)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def cpu_ticks(pid):
    """User+system ticks of pid's threads and of its child processes (nginx workers)."""
    pids = {str(pid)}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                rest = f.read().rsplit(")", 1)[1].split()
            if rest[1] == str(pid):
                pids.add(stat.split("/")[2])
        except (OSError, IndexError):
            pass
    total = 0
    for p in pids:
        for stat in glob.glob("/proc/%s/task/*/stat" % p):
            try:
                with open(stat) as f:
                    rest = f.read().rsplit(")", 1)[1].split()
                total += int(rest[11]) + int(rest[12])
            except (OSError, IndexError, ValueError):
                pass
    return total


class Server:
    def __init__(self, name, proc, port, resp_port=None, tmp=None):
        self.name, self.proc, self.port, self.resp_port, self.tmp = name, proc, port, resp_port, tmp

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_leafd(run, n, cpus, tmp, prog="leafd"):
    d = tempfile.mkdtemp(prefix="leafd%d-" % n, dir=tmp)
    hp, rp = free_port(), free_port()
    conf = os.path.join(d, "leafd.properties")
    with open(conf, "w") as f:
        f.write("leaf.name = bench\nleaf.snowflake.enable = true\nleafd.snowflake.worker.id = 3\n"
                "leafd.threads = %d\nleafd.listen = 127.0.0.1:%d\nleafd.resp.listen = 127.0.0.1:%d\n"
                "leafd.data.dir = %s\nleafd.http.max.connections = 20000\n" % (n, hp, rp, d))
    log = open(os.path.join(d, "leafd.log"), "w")
    p = subprocess.Popen(run.pinned(cpus, prog, ["-c", conf]), stdout=log, stderr=log)
    end = time.time() + 15
    while time.time() < end:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/ready" % hp, timeout=1) as r:
                if r.status == 200:
                    return Server("leafd", p, hp, rp, d)
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise SystemExit("leafd with %d loops did not become ready; see %s" % (n, log.name))


def start_nginx(run, n, cpus, tmp):
    d = tempfile.mkdtemp(prefix="nginx%d-" % n, dir=tmp)
    port = free_port()
    conf = os.path.join(d, "nginx.conf")
    user = "user root;\n" if os.geteuid() == 0 else ""
    with open(conf, "w") as f:
        f.write("%sworker_processes %d;\ndaemon off;\npid %s/nginx.pid;\nerror_log %s/error.log;\n"
                "events { worker_connections 8192; }\nhttp { access_log off; "
                "client_body_temp_path %s/b; proxy_temp_path %s/p; fastcgi_temp_path %s/f; "
                "uwsgi_temp_path %s/u; scgi_temp_path %s/s;\n  server { listen 127.0.0.1:%d; "
                "keepalive_requests 1000000000; location / { default_type text/plain; "
                "return 200 \"1234567890123456789\"; } } }\n"
                % (user, n, d, d, d, d, d, d, d, port))
    log = open(os.path.join(d, "out.log"), "w")
    p = subprocess.Popen(run.pinned(cpus, "nginx", ["-p", d, "-c", conf, "-e",
                                                    os.path.join(d, "error.log")]),
                         stdout=log, stderr=log)
    if not wait_port(port):
        p.kill()
        raise SystemExit("nginx did not start; see %s" % d)
    return Server("nginx", p, port, tmp=d)


def start_redis(run, io_threads, cpus, tmp):
    port = free_port()
    log = open(os.path.join(tmp, "redis-%d.log" % port), "w")
    p = subprocess.Popen(run.pinned(cpus, "redis-server", [
        "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--io-threads", str(io_threads), "--io-threads-do-reads", "yes", "--daemonize", "no"]),
        stdout=log, stderr=log)
    if not wait_port(port):
        p.kill()
        raise SystemExit("redis-server did not start; see %s" % log.name)
    return Server("redis", p, port, resp_port=port)


def wrk(run, cl, threads, seconds, url, pid, conns=256):
    c0 = cpu_ticks(pid)
    out = subprocess.run(run.pinned(cl, "wrk", ["-t%d" % threads, "-c%d" % conns, "-d%ds" % seconds,
                                                "--latency", url]),
                         capture_output=True, text=True, timeout=seconds + 60).stdout
    c1 = cpu_ticks(pid)
    n = re.search(r"(\d+) requests in", out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    reqs = int(n.group(1)) if n else 0
    ms = 0.0
    if p99:
        ms = float(p99.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    return (float(rate.group(1)) if rate else 0.0,
            (c1 - c0) * 1e6 / os.sysconf("SC_CLK_TCK") / reqs if reqs else 0.0, ms)


def rbench(run, cl, threads, port, requests, pipeline, key, pid):
    c0 = cpu_ticks(pid)
    out = subprocess.run(run.pinned(cl, "redis-benchmark", [
        "-h", "127.0.0.1", "-p", str(port), "--threads", str(threads), "-c", "256",
        "-n", str(requests), "-P", str(pipeline), "--csv", "INCR", key]),
        capture_output=True, text=True, timeout=600).stdout
    c1 = cpu_ticks(pid)
    rows = [line.replace('"', "").split(",") for line in out.splitlines()
            if line.startswith('"INCR')]
    if not rows:
        return 0.0, 0.0, 0.0
    rate, p99 = float(rows[-1][1]), float(rows[-1][6])
    return rate, (c1 - c0) * 1e6 / os.sysconf("SC_CLK_TCK") / requests, p99


def med(xs):
    return statistics.median(xs) if xs else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", help="run the programs of this bundle through its loader")
    ap.add_argument("--binary", help="the leafd to run (default: a Release build in build-bench/)")
    ap.add_argument("--against", help="another leafd build measured beside it on RESP")
    ap.add_argument("--loops", default="1,2,4,8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5, help="per wrk run")
    ap.add_argument("--requests", type=int, default=0,
                    help="per redis-benchmark run (default: 200000 x seconds, x8 for -P 16)")
    ap.add_argument("--share-cores", action="store_true",
                    help="also run loop counts above half the cores (servers share the load's)")
    ap.add_argument("--out", help="also write the report here")
    a = ap.parse_args()
    leafd = a.binary
    if not a.bundle and not leafd:
        b = os.path.join(ROOT, "build-bench")
        subprocess.run(["cmake", "-S", ROOT, "-B", b, "-DCMAKE_BUILD_TYPE=Release",
                        "-DLEAFD_TESTS=OFF"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", b, "-j", str(os.cpu_count() or 2)], check=True,
                       stdout=subprocess.DEVNULL)
        leafd = os.path.join(b, "leafd")
    run = Runner(a.bundle, leafd, a.against)
    ncpu = os.cpu_count() or 2
    half = max(1, ncpu // 2)
    cl = "%d-%d" % (half, ncpu - 1) if ncpu > 1 else "0"
    report = []

    def say(line):
        print(line, flush=True)
        report.append(line)

    say("host: %d cpus; load generators on cpus %s (%d threads); %d rounds, order flipped each"
        % (ncpu, cl, half, a.rounds))
    loops = [int(x) for x in a.loops.split(",")]
    loops = [n for n in loops if n <= half or (a.share_cores and n <= ncpu)]
    reqs = a.requests or 200000 * a.seconds
    tmp = tempfile.mkdtemp(prefix="leafd-scaling-")
    rate1 = {}
    for n in loops:
        cpus = "0-%d" % (n - 1)
        shared = " (servers share the load's cores)" if n > half else ""
        http = {"nginx": [], "leafd": []}
        wide = {"nginx": [], "leafd": []}  # one loop: 1,024 connections
        resp = {}
        for r in range(a.rounds):
            order = ["nginx", "leafd"] if r % 2 == 0 else ["leafd", "nginx"]
            for who in order:
                s = (start_nginx if who == "nginx" else start_leafd)(run, n, cpus, tmp)
                url = "http://127.0.0.1:%d/api/snowflake/get/bench" % s.port
                try:
                    http[who].append(wrk(run, cl, half, a.seconds, url, s.proc.pid))
                    if n == 1:
                        wide[who].append(wrk(run, cl, half, a.seconds, url, s.proc.pid, 1024))
                finally:
                    s.stop()
            for pipe in (1, 16):
                count = reqs * (8 if pipe == 16 else 1)
                kinds = [("redis1", 1), ("redisN", n), ("leafd", n)]
                if a.against:
                    kinds.append(("against", n))
                if r % 2:
                    kinds.reverse()
                for who, k in kinds:
                    if who in ("leafd", "against"):
                        s = start_leafd(run, k, cpus, tmp, "leafd" if who == "leafd" else "against")
                        port, key = s.resp_port, "snowflake:bench"
                    else:
                        s = start_redis(run, k, cpus, tmp)
                        port, key = s.port, "bench"
                    try:
                        got = rbench(run, cl, half, port, count, pipe, key, s.proc.pid)
                    finally:
                        s.stop()
                    resp.setdefault((pipe, who), []).append(got)

        def fig(rows):
            return "%.0f/s cpu %.2f us/req p99 %.2f ms" % (
                med([x[0] for x in rows]), med([x[1] for x in rows]), med([x[2] for x in rows]))

        ratio = med([l[0] / g[0] for l, g in zip(http["leafd"], http["nginx"]) if g[0] > 0])
        say("loops=%d%s" % (n, shared))
        say("  HTTP single ID: nginx(%d workers) %s | leafd %s | leafd/nginx %.3f"
            % (n, fig(http["nginx"]), fig(http["leafd"]), ratio))
        if wide["leafd"]:
            say("  HTTP single ID, 1,024 connections: nginx %s | leafd %s | leafd/nginx %.3f"
                % (fig(wide["nginx"]), fig(wide["leafd"]), med(
                    [l[0] / g[0] for l, g in zip(wide["leafd"], wide["nginx"]) if g[0] > 0])))
        for pipe in (1, 16):
            lf = resp[(pipe, "leafd")]
            r1 = med([l[0] / g[0] for l, g in zip(lf, resp[(pipe, "redis1")]) if g[0] > 0])
            rn = med([l[0] / g[0] for l, g in zip(lf, resp[(pipe, "redisN")]) if g[0] > 0])
            line = ("  RESP INCR P=%d: redis(1 thread) %s | redis(io-threads %d) %s | leafd %s | "
                    "leafd/redis1 %.3f leafd/redisN %.3f" % (
                        pipe, fig(resp[(pipe, "redis1")]), n, fig(resp[(pipe, "redisN")]),
                        fig(lf), r1, rn))
            if a.against:
                line += " | against %s leafd/against %.3f" % (fig(resp[(pipe, "against")]), med(
                    [l[0] / o[0] for l, o in zip(lf, resp[(pipe, "against")]) if o[0] > 0]))
            key = ("resp", pipe)
            if n == loops[0]:
                rate1[key] = [x[0] for x in lf]
            else:
                line += " | leafd(%d)/leafd(%d) %.3f" % (n, loops[0], med(
                    [x[0] / y for x, y in zip(lf, rate1[key]) if y > 0]))
            say(line)
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(report) + "\n")
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
