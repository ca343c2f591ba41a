"""libleafd-client's strict mode on a sequence through a kill -9 of the primary
(docs/man/leafd_client.3, "STRICT KEYS"; docs/reference/guarantees.md, "The client library"):
two nodes with sequences on, 64 threads in 2 processes (tools/benchmarks/bench-strict.c) take
IDs of one sequence through the library for about 10 s, the standby listed first (every
process starts with a redirect), while the primary is killed with -9 once and the standby
takes over. Every call is recorded (process, key, start and end on CLOCK_MONOTONIC, value or
failure) and passed through the order checker (tests/lib/ordercheck.py): 0 violations, 0
repeats; a failed call must overlap the failover window (from the kill until the standby
answers as primary), which is printed. About 25 s."""
import os
import signal
import time

import strictload
from leafdtest import Env, check, log
from seqcluster import find_primary, seq_props, start_node

SESSION_MS = 3000
THREADS = 32  # per process
SECONDS = 10
KILL_AFTER_S = 2.5
# A call's budget through a failover: shorter than the takeover, so calls caught in it fail
# (and must lie inside the window), longer than a redirect and a few backoffs.
OPTIONS = "log=0;timeout.ms=1500"


def main():
    env = Env()
    zk = env.zookeeper()
    hdir = os.path.join(env.dir, "history")
    nodes = [start_node(env, "n%d" % i, seq_props(zk.address(), session_ms=SESSION_MS))
             for i in range(2)]
    primary = find_primary(nodes)
    check(primary is not None, "a primary is elected")
    standby = nodes[1 - nodes.index(primary)]
    check(standby.get("/api/sequence/get/s")[0] in (200, 307), "sequence s created on first use")
    endpoints = ",".join("http://127.0.0.1:%d" % n.port for n in (standby, primary))
    t0 = time.monotonic_ns()
    procs = [strictload.start(endpoints, OPTIONS, THREADS, SECONDS, "sequence:s", hdir,
                              "p%d" % i) for i in range(2)]
    time.sleep(KILL_AFTER_S)
    t_kill = time.monotonic_ns()
    primary.stop(signal.SIGKILL)
    check(find_primary([standby], timeout=30) is standby, "the standby takes over")
    t_taken = time.monotonic_ns()
    log("failover window: %.2f s (kill -9 at %.2f s to %s answering as primary at %.2f s)"
        % ((t_taken - t_kill) / 1e9, (t_kill - t0) / 1e9, standby.name, (t_taken - t0) / 1e9))
    strictload.finish(procs, SECONDS)
    strictload.check_history(hdir, t_kill, t_taken)
    env.finish()


if __name__ == "__main__":
    main()
