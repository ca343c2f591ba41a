#!/usr/bin/env python3
"""leafd's Redis port against redis-server INCR, side by side in one run.

redis-benchmark drives each server in turn, the order flipping every round:
redis-server `INCR bench` (no persistence: the physical bar), and leafd
`INCR snowflake:bench`, `INCR segment:bench` (a throwaway MariaDB) and, with
--sequence, `INCR sequence:bench` (a throwaway ZooKeeper; the primary
persists ahead, so persistence is included). Single requests (-P 1) and
pipelined ones (-P 16), 50 connections. The machine is noisy: it reports the
median of per-round leafd/redis ratios. With --sequence it also reports the
ZooKeeper writes per second the sequence cost (leafd_sequence_writes_total).

Beside the throughput it reports each server's CPU per command (user+system time of all its
threads from /proc/PID/task/*/schedstat around each run, divided by the commands), and, where
`perf stat -e instructions` counts (not on a VM without a PMU), instructions per command.

usage: tools/benchmarks/bench-resp.py [--rounds N] [--requests N] [--threads T] [--sequence] [--binary PATH]
Figures and the exact command belong in docs/BENCHMARKS.md.
"""
import argparse
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build():
    b = os.path.join(ROOT, "build-bench")
    subprocess.run(["cmake", "-S", ROOT, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DLEAFD_TESTS=OFF"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", b, "-j", str(os.cpu_count() or 2), "--target", "leafd"],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.join(b, "leafd")


def wait_port(port, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def redis_cmd(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port)] + list(args), capture_output=True,
                          text=True, timeout=10).stdout.strip()


CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_ns(pid):
    """User+system CPU of all of a process's threads in ns (schedstat: not tick-rounded)."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # the thread ended
    return total


def perf_stat_supported():
    """True when `perf stat -e instructions` counts here (a VM often has no PMU)."""
    try:
        out = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"],
                             capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return False
    return bool(re.search(r"^\d+,", out, re.M))


def bench(port, key, n, conns, pipeline, pid=None, perf=False):
    """(commands/s, server CPU ns per command, instructions per command or None)."""
    argv = ["redis-benchmark", "-p", str(port), "-n", str(n), "-c", str(conns),
            "-P", str(pipeline), "-q", "INCR", key]
    c0 = cpu_ns(pid) if pid else 0
    stat = None
    if perf and pid:
        stat = subprocess.Popen(["perf", "stat", "-x,", "-e", "instructions", "-p", str(pid)],
                                stderr=subprocess.PIPE, text=True)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout
    cpu = (cpu_ns(pid) - c0) / n if pid else 0.0
    instr = None
    if stat:
        stat.send_signal(signal.SIGINT)
        m = re.search(r"^(\d+),", stat.communicate(timeout=30)[1], re.M)
        instr = int(m.group(1)) / n if m else None
    m = re.findall(r"([\d.]+) requests per second", out.replace("\r", "\n"))
    return (float(m[-1]) if m else 0.0), cpu, instr


def metric(port, name):
    st, body, _ = leafdtest.http(port, "/metrics")
    m = re.search(r"^%s (\d+)" % re.escape(name), body, re.M)
    return int(m.group(1)) if m else 0


def run(args):
    binary = args.binary or build()
    tmp = tempfile.mkdtemp(prefix="leafd-bench-resp-")
    env = leafdtest.Env()
    procs = []
    try:
        rport = free_port()
        perf = perf_stat_supported()
        print("perf stat -e instructions: %s" % ("counts here" if perf else
                                                 "not supported on this machine (no PMU)"))
        procs.append(subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1",
                                       "--save", "", "--appendonly", "no", "--dir", tmp],
                                      stdout=subprocess.DEVNULL))
        if not wait_port(rport):
            raise SystemExit("redis-server did not start")
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('bench', 1, 2000, '')")
        props = {"leaf.name": "bench", "leaf.snowflake.enable": "true",
                 "leafd.threads": str(args.threads), "leafd.log.level": "warn",
                 "leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
                 "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw",
                 "leafd.snowflake.advertise.ip": "127.0.0.1"}
        if args.sequence:
            zk = env.zookeeper()
            props.update({"leaf.snowflake.zk.address": zk.address(),
                          "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true"})
        else:
            props["leafd.snowflake.worker.id"] = "1"
        leafdtest.LEAFD_BIN = binary
        node = env.leafd("bench", props, resp=True)
        lport = node.resp_port
        cases = [("snowflake", "snowflake:bench"), ("segment", "segment:bench")]
        if args.sequence:
            cases.append(("sequence", "sequence:bench"))
        for c in cases:
            redis_cmd(lport, "INCR", c[1])  # warm: the tag's first range, the sequence's first write
        results = []
        for name, key in cases:
            for pipe in (1, 16):
                ratios, lrates, rrates, cpu, ins = [], [], [], {"leafd": [], "redis": []}, {}
                w0, t0 = metric(node.port, "leafd_sequence_writes_total"), time.time()
                for r in range(args.rounds):
                    order = [("redis", rport, "bench", procs[0].pid),
                             ("leafd", lport, key, node.proc.p.pid)]
                    if r % 2:
                        order.reverse()
                    got = {}
                    for who, port, k, pid in order:
                        got[who], c, i = bench(port, k, args.requests * pipe, 50, pipe, pid, perf)
                        cpu[who].append(c)
                        if i is not None:
                            ins.setdefault(who, []).append(i)
                    ratios.append(got["leafd"] / got["redis"] if got["redis"] else 0)
                    lrates.append(got["leafd"])
                    rrates.append(got["redis"])
                    print("  %-9s -P %-2d round %d: leafd %.0f/s (%.0f ns CPU/cmd), redis %.0f/s "
                          "(%.0f ns CPU/cmd), ratio %.3f"
                          % (name, pipe, r + 1, got["leafd"], cpu["leafd"][-1], got["redis"],
                             cpu["redis"][-1], ratios[-1]), flush=True)
                writes = metric(node.port, "leafd_sequence_writes_total") - w0
                results.append((name, pipe, statistics.median(lrates), statistics.median(rrates),
                                statistics.median(ratios), ratios,
                                writes / (time.time() - t0) if name == "sequence" else None,
                                statistics.median(cpu["leafd"]), statistics.median(cpu["redis"]),
                                {w: statistics.median(v) for w, v in ins.items()}))
        print("\n| leafd command | -P | leafd (median) | redis-server INCR (median) | "
              "leafd/redis (median of rounds) | rounds | server CPU per command, leafd / redis "
              "(median) | instructions per command, leafd / redis (perf stat) |")
        print("|---|---|---|---|---|---|---|---|")
        for name, pipe, l, r, ratio, ratios, _, lc, rc, ins in results:
            print("| `INCR %s:bench` | %d | %.0f req/s | %.0f req/s | **%.3f** | %s | %.0f ns / %.0f ns "
                  "| %s |" % (name, pipe, l, r, ratio, ", ".join("%.2f" % x for x in ratios), lc, rc,
                              "%.0f / %.0f" % (ins["leafd"], ins["redis"]) if len(ins) == 2
                              else "n/a (no PMU)"))
        for name, pipe, _, _, _, _, wps, _, _, _ in results:
            if wps is not None:
                print("sequence -P %d: %.1f ZooKeeper writes/s over the case (both servers' time)"
                      % (pipe, wps))
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            p.wait()
        env.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=100000, help="per round at -P 1 (x16 at -P 16)")
    ap.add_argument("--threads", type=int, default=2, help="leafd event loops")
    ap.add_argument("--sequence", action="store_true", help="also INCR sequence:bench (ZooKeeper)")
    ap.add_argument("--binary", help="use this leafd instead of building one")
    run(ap.parse_args())


if __name__ == "__main__":
    main()
