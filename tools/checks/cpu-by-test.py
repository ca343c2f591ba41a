#!/usr/bin/env python3
"""The CPU time each test of a ctest run takes, sampled from /proc while the run goes on.

usage: tools/checks/cpu-by-test.py OUT_FILE [--interval S]    (runs until killed, or until
                                                               OUT_FILE.stop exists)

Every S seconds (1) it reads every process's /proc/PID/stat and charges each process to the
test it belongs to: the child of a `ctest` process it descends from, named by that child's
command line (a test's script or program). A test's CPU is its own process's user + system time
plus that of its waited-for descendants (the kernel adds a child's time to its parent when the
parent waits for it) plus that of its live descendants: the sum at the last sample before the
test ended. What it misses: the last interval of each test, and processes that left the tree
(a daemon that detached, a container started through podman's service). On exit (SIGTERM, or the
stop file) it writes OUT_FILE: one line per test, the CPU seconds and the name, most first.
tools/test runs it when LEAFD_TEST_CPU=FILE is set.
"""
import os
import signal
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def read_procs():
    procs = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid, "rb") as f:
                s = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        comm = s[s.index("(") + 1:s.rindex(")")]
        f = s[s.rindex(")") + 2:].split()
        # fields after comm: state ppid ... utime(12) stime(13) cutime(14) cstime(15) ... starttime(20)
        procs[int(pid)] = (comm, int(f[1]), (int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / TICK,
                           int(f[19]))
    return procs


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None
    for a in argv:  # the script or program that names the test
        base = os.path.basename(a)
        if base.startswith("test_") or base.startswith("fuzz_") or "/tools/" in a or "chaos" in base:
            return " ".join([base] + [x for x in argv[argv.index(a) + 1:] if not x.startswith("/")][:2])
    return " ".join(os.path.basename(a) for a in argv[:3])


def main():
    if len(sys.argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--interval" else 1.0
    totals = {}   # (pid, starttime) of a test's root -> [name, cpu]
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    while not stop and not os.path.exists(out + ".stop"):
        procs = read_procs()
        roots = {}
        for pid, (comm, ppid, _, _) in procs.items():
            if ppid in procs and procs[ppid][0] == "ctest" and comm != "ctest":
                roots[pid] = 0.0
        for pid, (comm, ppid, cpu, _) in procs.items():
            p, seen = pid, 0
            while p in procs and p not in roots and seen < 64:
                p, seen = procs[p][1], seen + 1
            if p in roots:
                roots[p] += cpu
        for pid, cpu in roots.items():
            key = (pid, procs[pid][3])
            if key not in totals:
                totals[key] = [cmdline(pid) or procs[pid][0], 0.0]
            totals[key][1] = max(totals[key][1], cpu)
        time.sleep(interval)
    rows = sorted(totals.values(), key=lambda r: -r[1])
    with open(out, "w") as f:
        f.write("# CPU seconds by test (tools/checks/cpu-by-test.py); %.0f s in all\n"
                % sum(r[1] for r in rows))
        for name, cpu in rows:
            f.write("%8.1f  %s\n" % (cpu, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
