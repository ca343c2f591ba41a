#!/usr/bin/env python3
"""Instructions per command, counted by callgrind: leafd's RESP and HTTP paths beside
redis-server INCR, and the symbols the instructions go to.

Wall-clock rates on a shared 2-core VM move by 20% from round to round; instruction counts
do not. Each server runs under `valgrind --tool=callgrind --instr-atstart=no`; after a
warm-up request the counting is switched on (`callgrind_control -i on`), the load runs
(redis-benchmark for RESP, wrk for HTTP), the counts are dumped (`callgrind_control -d`) and
divided by the commands answered. Only user-space instructions are counted: the kernel's
share (loopback TCP, epoll) is not in these figures; see the CPU per command of
tools/benchmarks/bench-resp.py and tools/bench for it.

usage: tools/benchmarks/bench-profile.py [--binary PATH] [--cases LIST] [--requests N] [--top N]
  cases: redis, resp-snowflake-P1, resp-snowflake-P16, resp-segment-P1, resp-segment-P16,
         http-single, http-pipelined16 (default: all; segment cases start a throwaway MariaDB)
Figures and the exact command belong in docs/BENCHMARKS.md ("Per-command cost").
"""
import argparse
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))

ALL_CASES = ["redis", "resp-snowflake-P1", "resp-snowflake-P16", "resp-segment-P1",
             "resp-segment-P16", "http-single", "http-pipelined16"]

PIPELINE_LUA = """
init = function(args)
  local r = {}
  for i = 1, %d do r[i] = wrk.format(nil, "%s") end
  req = table.concat(r)
end
request = function() return req end
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def build():
    b = os.path.join(ROOT, "build-bench")
    subprocess.run(["cmake", "-S", ROOT, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DLEAFD_TESTS=OFF"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", b, "-j", str(os.cpu_count() or 2), "--target", "leafd"],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.join(b, "leafd")


def callgrind(argv, out):
    return subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                             "--callgrind-out-file=" + out] + argv,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cg_control(pid, *args):
    subprocess.run(["callgrind_control"] + list(args) + [str(pid)], check=True,
                   stdout=subprocess.DEVNULL, timeout=60)


def clock_calls(dump):
    """Calls to clock_gettime (any variant) recorded in a callgrind dump."""
    names, calls, target = {}, 0, None
    with open(dump, errors="replace") as f:
        for line in f:
            m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                target = names.get(m.group(1), "") if line.startswith("cfn=") else None
            elif line.startswith("calls=") and target and "clock_gettime" in target:
                calls += int(line[6:].split()[0])
    return calls


def summarize(out_prefix, top):
    """(total Ir, [(share, symbol)], dump, clock_gettime calls) of the newest dump.
    The total is the sum of every function's own cost (the dump's summary line is not
    reliable after instrumentation was switched off and on)."""
    dumps = sorted(glob.glob(out_prefix + ".*"), key=os.path.getmtime)
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", dumps[-1]],
                          capture_output=True, text=True).stdout
    rows = []
    for line in text.split("file:function", 1)[-1].splitlines()[2:]:
        mm = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+)", line)
        if not mm:
            break  # the function table ends; source annotation (with -g) follows
        name = mm.group(2).split(":", 1)[-1] if ":" in mm.group(2) else mm.group(2)
        rows.append((int(mm.group(1).replace(",", "")), name))
    total = sum(ir for ir, _ in rows)
    syms = [(100.0 * ir / total, name) for ir, name in rows[:top]] if total else []
    return total, syms, dumps[-1], clock_calls(dumps[-1])


def redis_benchmark(port, key, n, pipe):
    subprocess.run(["redis-benchmark", "-p", str(port), "-n", str(n), "-c", "50", "-P", str(pipe),
                    "-q", "INCR", key], check=True, capture_output=True, timeout=1800)
    return n


def wrk_requests(port, path, seconds, pipe, tmp):
    argv = ["wrk", "-t1", "-c50", "-d%ds" % seconds]
    if pipe:
        lua = os.path.join(tmp, "pipe.lua")
        with open(lua, "w") as f:
            f.write(PIPELINE_LUA % (pipe, path))
        argv += ["-s", lua]
    out = subprocess.run(argv + ["http://127.0.0.1:%d%s" % (port, path)], capture_output=True,
                         text=True, timeout=seconds + 60).stdout
    m = re.search(r"(\d+) requests in", out)
    if re.search(r"Non-2xx|Socket errors", out):
        print("  wrk reported errors:\n" + out, file=sys.stderr)
    return int(m.group(1)) if m else 0


def profile(proc, out, load, top):
    cg_control(proc.pid, "-z")
    cg_control(proc.pid, "-i", "on")
    n = load()
    cg_control(proc.pid, "-i", "off")
    cg_control(proc.pid, "-d")
    total, syms, dump, clocks = summarize(out, top)
    return n, total, syms, dump, clocks


def report(name, n, total, syms, clocks):
    print("\n### %s: %d commands, %.0f instructions per command (user space), "
          "%.2f clock readings per command" % (name, n, total / max(n, 1), clocks / max(n, 1)))
    print("| self share | symbol |\n|---|---|")
    for share, sym in syms:
        print("| %.1f%% | `%s` |" % (share, sym))
    sys.stdout.flush()


def run(args):
    import leafdtest
    binary = args.binary or build()
    cases = args.cases.split(",") if args.cases else ALL_CASES
    tmp = tempfile.mkdtemp(prefix="leafd-bench-profile-")
    env = leafdtest.Env()
    procs = []
    try:
        if "redis" in cases:
            rport = free_port()
            rout = os.path.join(tmp, "cg-redis.out")
            rp = callgrind(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save",
                            "", "--appendonly", "no", "--dir", tmp], rout)
            procs.append(rp)
            if not wait_port(rport):
                raise SystemExit("redis-server did not start")
            for pipe in (1, 16):
                n, total, syms, _, clocks = profile(
                    rp, rout, lambda: redis_benchmark(rport, "bench", args.requests * pipe, pipe),
                    args.top)
                report("redis-server INCR -P %d" % pipe, n, total, syms, clocks)
        lcases = [c for c in cases if c != "redis"]
        if not lcases:
            return
        props = {"leaf.name": "bench", "leaf.snowflake.enable": "true",
                 "leafd.snowflake.worker.id": "1", "leafd.threads": "1",
                 "leafd.log.level": "warn", "leafd.snowflake.advertise.ip": "127.0.0.1",
                 "leafd.resp.listen": "127.0.0.1:%d" % free_port(),
                 "leafd.listen": "127.0.0.1:%d" % free_port(),
                 "leafd.data.dir": os.path.join(tmp, "data")}
        if any("segment" in c for c in lcases):
            db = env.mariadb()
            db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) "
                   "VALUES ('bench', 1, 1000000, '')")
            props.update(leafdtest.seg_props(db))
        conf = os.path.join(tmp, "leafd.properties")
        with open(conf, "w") as f:
            f.writelines("%s = %s\n" % kv for kv in props.items())
        lout = os.path.join(tmp, "cg-leafd.out")
        lp = callgrind([binary, "-c", conf], lout)
        procs.append(lp)
        hport = int(props["leafd.listen"].rsplit(":", 1)[1])
        pport = int(props["leafd.resp.listen"].rsplit(":", 1)[1])
        if not leafdtest.wait_until(lambda: leafdtest.http(hport, "/ready")[0] == 200, 120):
            raise SystemExit("leafd did not become ready under callgrind")
        for mode in ("snowflake", "segment"):
            if any(mode in c for c in lcases):  # warm: the segment tag's first range
                subprocess.run(["redis-cli", "-p", str(pport), "INCR", mode + ":bench"],
                               capture_output=True, timeout=60)
        for c in lcases:
            if c.startswith("resp-"):
                _, mode, p = c.split("-")
                pipe = int(p[1:])
                load = lambda: redis_benchmark(pport, mode + ":bench", args.requests * pipe, pipe)
            else:
                pipe = 16 if c == "http-pipelined16" else 0
                load = lambda: wrk_requests(hport, "/api/snowflake/get/bench", args.seconds,
                                            pipe, tmp)
            n, total, syms, dump, clocks = profile(lp, lout, load, args.top)
            report("leafd " + c, n, total, syms, clocks)
            if args.keep:
                shutil.copy(dump, os.path.join(args.keep, "callgrind.%s.out" % c))
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        env.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", help="use this leafd instead of building one")
    ap.add_argument("--cases", help="comma-separated: " + ",".join(ALL_CASES))
    ap.add_argument("--requests", type=int, default=20000, help="RESP commands at -P 1 (x16 at -P 16)")
    ap.add_argument("--seconds", type=int, default=5, help="HTTP: wrk seconds")
    ap.add_argument("--top", type=int, default=12, help="symbols listed per case")
    ap.add_argument("--keep", help="copy each case's callgrind dump into this directory")
    run(ap.parse_args())


if __name__ == "__main__":
    main()
