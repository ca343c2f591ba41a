"""Keyed sequences' acceptance on sharded nodes (docs/keyed-sequences.md, "Sections", "Costs"):
two nodes with leafd.sequence.sharding = true, 8 client processes (tests/lib/keyedclients.py:
four over HTTP following 307, four over RESP following -MOVED) hammering HOT keys, and COLD keys
touched through pipelined RESP (tests/lib/keyedload.py, sent to each key's owner): each once
before the faults, a quarter of them again after them. One after the other:
  (1) the node owning half the slots is killed with -9; the other takes its slots over (the
      failover window: from the kill until the survivor owns all 16384 slots); the killed node
      is started again and takes its half back;
  (2) a third node joins: the slot map is rebalanced;
  (3) each node in turn is upgraded in place (SIGUSR2, the same binary).
Every call goes through the order checker (tests/lib/ordercheck.py): 0 violations, 0 repeats.
A failed call (no ID within the client's retry budget, keyedclients.RETRY_S) must overlap the
failover window; outside it none fails. The largest first ID above its section's highest ID
answered before is measured per phase and kept within the documented bound: a step per takeover
in a row (one here) plus a call's count. Runs about 45 s."""
import glob
import json
import os
import signal
import threading
import time

import keyedclients
import keyedload
from leafdtest import Env, check, log, pid_alive, wait_until
from ordercheck import Histories
from reloadload import upgrade_in_place
from seqcluster import shard_slots
from zkhelpers import zk_props

NAME = "ksh"
SPACE = "ks"
STEP = 1000
SESSION_MS = 3000
HOT = ["h%d" % i for i in range(10000)]
COLD = ["c%d" % i for i in range(100000)]
COUNTS = (1, 1, 1, 2, 5)
HAMMER_S = 1.5  # the clients' time between two steps; scale this, not the key counts


def props(zk_address):
    return zk_props(zk_address, name=NAME, **{
        "leafd.sequence.enable": "true", "leafd.sequence.sharding": "true",
        "leafd.zk.session.timeout.ms": str(SESSION_MS)})


def cold_pass(nodes, hdir, keys):
    """One INCR of every key of keys, sent to its owner (CLUSTER SLOTS) in pipelines, the owners
    at once (a thread each); True when every INCR answered an ID."""
    on = keyedclients.owners(nodes[0].resp_port)
    res = []

    def one(port):
        mine = [k for k in keys if on[keyedclients.slot(SPACE, k)] == port]
        res.append(keyedload.incr_keys(port, os.path.join(hdir, str(port)), SPACE, mine,
                                       procs=2, timeout=120))
    threads = [threading.Thread(target=one, args=(p,)) for p in sorted(set(on.values()))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(res) == len(threads) and all(res)


def main():
    env = Env()
    zk = env.zookeeper()
    hdir, stop_file = os.path.join(env.dir, "history"), os.path.join(env.dir, "stop")
    nodes = [env.leafd("n%d" % i, props(zk.address()), resp=True, wait_ready=False)
             for i in range(2)]
    pids = {}  # node name -> its process's pid after an upgrade in place
    procs, rcs = [], None
    t0 = time.monotonic_ns()
    phases = [("start", t0)]
    try:
        keyedclients.sharded_space(nodes, SPACE, STEP)
        deadline = time.time() + 120
        for i in range(8):
            proto = "http" if i % 2 == 0 else "resp"
            ports = [n.port if proto == "http" else n.resp_port for n in nodes]
            procs.append(keyedclients.start(proto, "%s%d" % (proto, i), SPACE, hdir, stop_file,
                                            deadline, ports, HOT, COUNTS))
        t = time.monotonic()
        check(cold_pass(nodes, os.path.join(env.dir, "cold1"), COLD), "cold keys: first touch")
        log("cold keys' first touch: %.1f s" % (time.monotonic() - t))
        time.sleep(HAMMER_S)

        victim = max(nodes, key=lambda n: shard_slots(nodes)[nodes.index(n)])
        other = nodes[1 - nodes.index(victim)]
        log("(1) kill -9 %s, owner of %d slots" % (victim.name, shard_slots(nodes)[
            nodes.index(victim)]))
        t_kill = time.monotonic_ns()
        phases.append(("1 kill -9", t_kill))
        victim.stop(signal.SIGKILL)
        check(bool(wait_until(lambda: shard_slots([other]), 30, 0.05)),
              "%s takes every slot over" % other.name)
        t_taken = time.monotonic_ns()
        log("(1) failover window: %.2f s (kill to %s owning all 16384 slots)"
            % ((t_taken - t_kill) / 1e9, other.name))
        time.sleep(HAMMER_S)
        victim.start(wait_ready=False)
        check(victim.wait_ready(30), "%s is back" % victim.name)
        check(bool(wait_until(lambda: shard_slots(nodes), 30, 0.2)), "two owners again")
        time.sleep(HAMMER_S)

        phases.append(("2 join", time.monotonic_ns()))
        log("(2) n2 joins")
        nodes.append(env.leafd("n2", props(zk.address()), resp=True, wait_ready=False))
        check(nodes[2].wait_ready(30), "n2 ready")
        check(bool(wait_until(lambda: shard_slots(nodes), 30, 0.2)), "three owners share the slots")
        time.sleep(HAMMER_S)

        phases.append(("3 upgrade", time.monotonic_ns()))
        for n in nodes:
            log("(3) %s upgraded in place" % n.name)
            pids[n.name] = upgrade_in_place(n, n.proc.p.pid, n.name)
            check(bool(wait_until(lambda: shard_slots(nodes), 30, 0.2)), "three owners after "
                  "%s's upgrade" % n.name)
            time.sleep(0.5)
        time.sleep(HAMMER_S)
        t = time.monotonic()
        check(cold_pass(nodes, os.path.join(env.dir, "cold2"), COLD[::4]), "cold keys: second touch")
        log("cold keys' second touch: %.1f s" % (time.monotonic() - t))
    finally:
        t_stop = time.monotonic_ns()
        if procs:
            rcs = keyedclients.stop(procs, stop_file)
        for pid in pids.values():
            if pid and pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
                wait_until(lambda: not pid_alive(pid), 15, 0.1)
    check(rcs == [0] * 8, "client processes ended cleanly: %s" % rcs)

    h = Histories().load(hdir, *glob.glob(os.path.join(env.dir, "cold*", "*")))
    bad, text = h.report(20)
    log(text)
    check(not bad, "0 violations and 0 repeats")
    calls = keyedclients.section_calls(h, SPACE)
    cold = sum(1 for c in calls if c[2].startswith("c"))
    check(cold == len(COLD) + len(COLD[::4]), "every cold key answered, a quarter of them twice: "
          "%d calls" % cold)
    check(all(c[3] >= 1 for c in calls), "%d calls answered, every ID >= 1" % len(calls))
    for i in range(8):
        with open(os.path.join(hdir, "%s%d.json" % ("http" if i % 2 == 0 else "resp", i))) as f:
            log("client %d: %s" % (i, json.load(f)))

    # A call the stop cut short (it ended after the stop) did not run out of its retry budget:
    # not a failure, though the order checker counts it as failed (its outcome is unknown).
    failed = [(start, end, k, who, why) for k, kl in h.keys.items()
              for who, start, end, why in kl.failed if end < t_stop]
    outside = [f for f in failed if f[1] < t_kill or f[0] > t_taken]
    log("failed calls: %d, %d of them outside the failover window %.2f-%.2f s (after the start); "
        "%d more cut short by the stop" % (len(failed), len(outside), (t_kill - t0) / 1e9,
                                          (t_taken - t0) / 1e9, h.counts()[1] - len(failed)))
    check(not outside, "no call failed outside the failover window: %s" % outside[:5])

    for name, n, jump, c in keyedclients.phase_jumps(keyedclients.section_jumps(calls, SPACE),
                                                     phases):
        log("phase %s: %d calls, largest first ID above its section's highest: %d (%s by %s)"
            % (name, n, jump, c[2] if c else "-", c[5] if c else "-"))
    worst, over = keyedclients.jump_bound(calls, SPACE, STEP, max(COUNTS), [(t_kill, t_taken)])
    log("largest jump: %d (%s, %d takeovers between); bound %d" % (
        worst[0], worst[1], worst[2], STEP + max(COUNTS)))
    check(not over, "no call starts more than a step (+ its count) above its section's highest: "
          "%s" % over[:5])
    env.finish()


if __name__ == "__main__":
    main()
