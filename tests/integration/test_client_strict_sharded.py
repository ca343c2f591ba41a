"""libleafd-client's strict mode on a keyed space of 10,000 keys on two sharded owners
(leafd.sequence.sharding = true; docs/man/leafd_client.3, "STRICT KEYS"): 64 threads in 2
processes (tools/benchmarks/bench-strict.c) each call keyed:ks:k<random of 10,000> for about
10 s through the library, both nodes listed, so a call meets 307 to its slot's owner, which the
library remembers per key. The owner of more slots is killed with -9 once and the other takes
its slots over. Every call is recorded and passed through the order checker
(tests/lib/ordercheck.py): 0 violations, 0 repeats over 10,000 keys; a failed call must
overlap the failover window (from the kill until the survivor owns all 16384 slots), which is
printed. About 25 s."""
import os
import signal
import time

import keyedclients
import strictload
from leafdtest import Env, check, log, wait_until
from seqcluster import shard_slots
from zkhelpers import zk_props

NAME = "kst"
SPACE = "ks"
KEYS = 10000
SESSION_MS = 3000
THREADS = 32  # per process
SECONDS = 10
KILL_AFTER_S = 2.5
OPTIONS = "log=0;timeout.ms=1500;keys.max=16384"


def props(zk_address):
    return zk_props(zk_address, name=NAME, **{
        "leafd.sequence.enable": "true", "leafd.sequence.sharding": "true",
        "leafd.zk.session.timeout.ms": str(SESSION_MS)})


def main():
    env = Env()
    zk = env.zookeeper()
    hdir = os.path.join(env.dir, "history")
    nodes = [env.leafd("n%d" % i, props(zk.address()), resp=True, wait_ready=False)
             for i in range(2)]
    keyedclients.sharded_space(nodes, SPACE, 1000)
    endpoints = ",".join("http://127.0.0.1:%d" % n.port for n in nodes)
    t0 = time.monotonic_ns()
    procs = [strictload.start(endpoints, OPTIONS, THREADS, SECONDS, "keyed:%s:k" % SPACE,
                              hdir, "p%d" % i, ["--keys", str(KEYS)]) for i in range(2)]
    time.sleep(KILL_AFTER_S)
    slots = shard_slots(nodes) or [0, 0]
    victim = nodes[0] if slots[0] >= slots[1] else nodes[1]
    other = nodes[1 - nodes.index(victim)]
    t_kill = time.monotonic_ns()
    victim.stop(signal.SIGKILL)
    check(bool(wait_until(lambda: shard_slots([other]), 30, 0.05)),
          "%s takes every slot over" % other.name)
    t_taken = time.monotonic_ns()
    log("failover window: %.2f s (kill -9 of %s, owner of %d slots, at %.2f s, to %s owning all "
        "16384 at %.2f s)" % ((t_taken - t_kill) / 1e9, victim.name, max(slots),
                              (t_kill - t0) / 1e9, other.name, (t_taken - t0) / 1e9))
    strictload.finish(procs, SECONDS)
    strictload.check_history(hdir, t_kill, t_taken, KEYS * 9 // 10)
    env.finish()


if __name__ == "__main__":
    main()
