"""libleafd-client's strict mode on a sequence through a kill -9 of the primary
(docs/man/leafd_client.3, "STRICT KEYS"; docs/reference/guarantees.md, "The client library"):
two nodes with sequences on, 64 threads in 2 processes (tools/benchmarks/bench-strict.c) take
IDs of one sequence through the library for about 10 s, the standby listed first (every
process starts with a redirect), while the primary is killed with -9 once and the standby
takes over. Every call is recorded (process, key, start and end on CLOCK_MONOTONIC, value or
failure) and passed through the order checker (tests/lib/ordercheck.py): 0 violations, 0
repeats; a failed call must overlap the failover window (from the kill until the standby
answers as primary), which is printed. About 25 s."""
import json
import os
import signal
import subprocess
import time

from leafdtest import Env, check, log
from ordercheck import Histories
from seqcluster import find_primary, seq_props, start_node

LOAD = os.environ["STRICT_LOAD_BIN"]
SESSION_MS = 3000
THREADS = 32  # per process
SECONDS = 10
KILL_AFTER_S = 2.5
# A call's budget through a failover: shorter than the takeover, so calls caught in it fail
# (and must lie inside the window), longer than a redirect and a few backoffs.
OPTIONS = "log=0;timeout.ms=1500"


def start_load(endpoints, hdir, name):
    return subprocess.Popen([LOAD, endpoints, OPTIONS, str(THREADS), str(SECONDS), "sequence:s",
                             "--history", hdir, "--process", name],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main():
    env = Env()
    zk = env.zookeeper()
    hdir = os.path.join(env.dir, "history")
    os.makedirs(hdir)
    nodes = [start_node(env, "n%d" % i, seq_props(zk.address(), session_ms=SESSION_MS))
             for i in range(2)]
    primary = find_primary(nodes)
    check(primary is not None, "a primary is elected")
    standby = nodes[1 - nodes.index(primary)]
    check(standby.get("/api/sequence/get/s")[0] in (200, 307), "sequence s created on first use")
    endpoints = ",".join("http://127.0.0.1:%d" % n.port for n in (standby, primary))
    t0 = time.monotonic_ns()
    procs = [start_load(endpoints, hdir, "p%d" % i) for i in range(2)]
    time.sleep(KILL_AFTER_S)
    t_kill = time.monotonic_ns()
    primary.stop(signal.SIGKILL)
    check(find_primary([standby], timeout=30) is standby, "the standby takes over")
    t_taken = time.monotonic_ns()
    log("failover window: %.2f s (kill -9 at %.2f s to %s answering as primary at %.2f s)"
        % ((t_taken - t_kill) / 1e9, (t_kill - t0) / 1e9, standby.name, (t_taken - t0) / 1e9))
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=SECONDS + 60)
        check(p.returncode == 0, "process p%d ended cleanly: rc %s %s" % (i, p.returncode,
                                                                         err[-500:]))
        log("p%d: %s" % (i, out.strip()))
        s = json.loads(out.splitlines()[-1]) if out.strip() else {}
        check(s.get("calls", 0) > s.get("failed", 0) > -1, "p%d took IDs" % i)

    h = Histories().load(hdir)
    bad, text = h.report(20)
    log(text)
    check(not bad, "0 violations and 0 repeats")
    ok = sum(len(kl.start) for kl in h.keys.values())
    fails = [(start, end, who, why) for kl in h.keys.values() for who, start, end, why in kl.failed]
    outside = [f for f in fails if f[1] < t_kill or f[0] > t_taken]
    served_after = sum(1 for kl in h.keys.values() for s in kl.start if s > t_taken)
    log("calls: %s served, %d failed, %d of them outside the failover window; %d served after "
        "the takeover" % (ok, len(fails), len(outside), served_after))
    check(not outside, "no call failed outside the failover window: %s" % outside[:5])
    check(served_after > 0, "calls served after the takeover")
    env.finish()


if __name__ == "__main__":
    main()
