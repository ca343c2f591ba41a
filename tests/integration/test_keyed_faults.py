"""Keyed sequences at the mode's boundaries that it.test_keyed_failover leaves out
(docs/keyed-sequences.md, "Sections", "Costs", "How it is built"): sharded owners, rebalancing,
an in-place upgrade, wall clock steps and ZooKeeper out for longer than the session.

One ZooKeeper, three nodes with leafd.sequence.sharding = true, 3 s sessions, each reaching
ZooKeeper through its own tests/lib/tcpproxy.py proxy; n2 under libfaketime (wall clock only,
DONT_FAKE_MONOTONIC=1). A space with step STEP; client processes (tests/lib/keyedclients.py: a
plain HTTP client following 307 and a plain RESP client following -MOVED) and redis-py's
RedisCluster (a thread here) take IDs of KEYS on every owner, hash-tagged keys included,
while, one after the other:
  (a) a fourth node joins and n1 leaves (SIGTERM): the slot map is rebalanced twice, sections
      straddle owners; every client saw redirects, and RedisCluster kept being answered;
  (b) n0 is upgraded in place (SIGUSR2): the old process gives its sections' maxima back, so
      the new process's first IDs lie less than half a step above their section's highest
      (sections straddling owners left out: the other owner's raises stay);
  (c) n2's wall clock steps back 10 minutes, then forward to 10 minutes ahead, 3 s each: n2
      keeps answering keyed calls through both;
  (d) ZooKeeper is unreachable for every node for 2.5 sessions: once a session may have expired
      (its timeout + 1 s after the cut) no node answers a keyed call until the heal; then
      they answer again.
Every call of every client goes through the order checker (tests/lib/ordercheck.py): 0
violations, 0 repeats; IDs >= 1; no call's first ID lies more than a step (three from (d) on;
plus a count) above its section's highest ID answered before. Runs about 35 s."""
import json
import logging
import os
import random
import signal
import threading
import time

from redis.cluster import ClusterNode, RedisCluster

import keyedclients
from leafdtest import Env, check, free_port, log, pid_alive, wait_until
from ordercheck import Histories, History
from reloadload import upgrade_in_place
from seqcluster import seq_state
from tcpproxy import Proxy
from zkhelpers import faketime_env, zk_props

NAME = "kfl"
SPACE = "kf"
STEP = 1000
SESSION_MS = 3000
KEYS = (["a%d" % i for i in range(200)] + ["{dev%d}:s%d" % (i % 8, i) for i in range(64)])
COUNTS = (1, 1, 1, 2, 5)


def props(zk_port):
    return zk_props("127.0.0.1:%d" % zk_port, name=NAME, **{
        "leafd.sequence.enable": "true", "leafd.sequence.sharding": "true",
        "leafd.zk.session.timeout.ms": str(SESSION_MS)})


def balanced(nodes):
    """Each live node's slot count when they own all 16384 slots, each some; else None."""
    s = [seq_state(n).get("slots", 0) for n in nodes]
    return s if sum(s) == 16384 and min(s) > 0 else None


def cluster_client(ports, hdir, stop_evt, counter):
    """redis-py's RedisCluster: follows MOVED and refreshes its map by itself."""
    hist = History(hdir, "rediscluster")
    rng = random.Random(7)
    rc = None
    while not stop_evt.is_set():
        key, n = rng.choice(KEYS), rng.choice(COUNTS)
        with hist.call("keyed:%s:%s" % (SPACE, key), who="rediscluster") as c:
            try:
                if rc is None:
                    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ports],
                                      socket_timeout=2)
                last = rc.incrby("keyed:%s:%s" % (SPACE, key), n)
                c.values = range(last - n + 1, last + 1)
                counter[0] += 1
            except Exception as e:  # noqa: BLE001 - every failure is a failed call
                c.fail(type(e).__name__)
                if rc is not None:
                    rc.close()
                rc = None
                time.sleep(0.1)
        time.sleep(0.004)
    if rc is not None:
        rc.close()
    hist.close()


def main():
    logging.getLogger("redis").setLevel(logging.CRITICAL)  # its MOVED and TRYAGAIN tracebacks
    env = Env()
    zk = env.zookeeper()
    hdir, stop_file = os.path.join(env.dir, "history"), os.path.join(env.dir, "stop")
    proxies, nodes = [], []
    tsfile = os.path.join(env.dir, "n2-faketime")
    with open(tsfile, "w") as f:
        f.write("+0\n")

    def add(name, extra_env=None):
        px = Proxy(target=("127.0.0.1", zk.port))
        proxies.append(px)
        nodes.append(env.leafd(name, props(px.port), resp=True, extra_env=extra_env,
                               wait_ready=False))
        return nodes[-1]

    for i in range(3):
        add("n%d" % i, faketime_env(timestamp_file=tsfile) if i == 2 else None)
    new_pid = None
    procs, rcs, cthread = [], None, None
    stop_evt = threading.Event()
    phases = [("start", time.monotonic_ns())]  # (name, start): the largest jump of each is logged
    try:
        keyedclients.sharded_space(nodes, SPACE, STEP)
        on = keyedclients.owners(nodes[0].resp_port)
        check(len({on[keyedclients.slot(SPACE, k)] for k in KEYS}) == 3,
              "the keys have all three owners")
        deadline = time.time() + 240
        for proto in ("http", "resp"):
            ports = [n.port if proto == "http" else n.resp_port for n in nodes]
            procs.append(keyedclients.start(proto, proto, SPACE, hdir, stop_file, deadline,
                                            ports, KEYS, COUNTS))
        counter = [0]
        cthread = threading.Thread(target=cluster_client, daemon=True, args=(
            [n.resp_port for n in nodes], hdir, stop_evt, counter))
        cthread.start()
        time.sleep(3)

        phases.append(("a", time.monotonic_ns()))
        log("(a) n3 joins")
        n3 = add("n3")
        check(n3.wait_ready(30), "n3 ready")
        check(bool(wait_until(lambda: balanced(nodes), 30, 0.2)), "four owners share the slots")
        time.sleep(2)
        log("(a) n1 leaves")
        nodes[1].stop(signal.SIGTERM)
        live = [n for n in nodes if n is not nodes[1]]
        check(bool(wait_until(lambda: balanced(live), 30, 0.2)), "three owners again")
        time.sleep(2)
        before = counter[0]
        check(bool(wait_until(lambda: counter[0] > before + 20, 10, 0.1)),
              "RedisCluster is answered after the rebalancing")

        phases.append(("b", time.monotonic_ns()))
        log("(b) n0 upgraded in place")
        straddle = {sec for sec in range(256)
                    if len({o for s, o in keyedclients.owners(nodes[0].resp_port).items()
                            if s // 64 == sec}) > 1}
        t_up = time.monotonic_ns()
        new_pid = upgrade_in_place(nodes[0], nodes[0].proc.p.pid, "n0")
        t_upped = time.monotonic_ns()
        time.sleep(2)

        # Back 10 min, then forward 20 min; the clock stays 10 min ahead (a step back at the end
        # would only hold n2's snowflake IDs back, which this test does not ask for).
        phases.append(("c", time.monotonic_ns()))
        log("(c) n2's wall clock: back 10 min, then 10 min ahead")
        steps = []
        for off in ("-600", "+600"):
            with open(tsfile, "w") as f:
                f.write(off + "\n")
            a = time.monotonic_ns()
            time.sleep(3)
            steps.append((off, a, time.monotonic_ns()))

        phases.append(("d", time.monotonic_ns()))
        log("(d) ZooKeeper unreachable for every node for %.1f s" % (2.5 * SESSION_MS / 1000))
        for px in proxies:
            px.blackhole()
        t_cut = time.monotonic_ns()
        time.sleep(2.5 * SESSION_MS / 1000)
        t_heal = time.monotonic_ns()
        for px in proxies:
            px.heal()
        before = counter[0]
        check(bool(wait_until(lambda: counter[0] > before + 20, 30, 0.1)),
              "keyed calls answered again after the heal")
        time.sleep(2)
    finally:
        stop_evt.set()
        if procs:
            rcs = keyedclients.stop(procs, stop_file)
        if cthread:
            cthread.join(15)
        if new_pid and pid_alive(new_pid):
            os.kill(new_pid, signal.SIGTERM)
            wait_until(lambda: not pid_alive(new_pid), 15, 0.1)
    check(rcs == [0, 0], "client processes ended cleanly: %s" % rcs)

    h = Histories().load(hdir)
    bad, text = h.report(20)
    log(text)
    check(not bad, "0 violations and 0 repeats")
    calls = keyedclients.section_calls(h, SPACE)
    check(len(calls) > 1000 and all(c[3] >= 1 for c in calls),
          "%d calls answered, every ID >= 1" % len(calls))
    for proto in ("http", "resp"):
        with open(os.path.join(hdir, proto + ".json")) as f:
            st = json.load(f)
        log("%s client: %s" % (proto, st))
        check(st["redirects"] > 0, "the plain %s client followed redirects" % proto)
    by_port = {n.port: n.name for n in nodes}
    by_port.update({n.resp_port: n.name for n in nodes})

    def on_node(c):
        """The node that answered a plain client's call (None: RedisCluster's)."""
        return by_port.get(int(c[5].rsplit("@", 1)[1])) if "@" in c[5] else None
    check(len({on_node(c) for c in calls if on_node(c)}) == 4, "the plain clients were answered "
          "by all four nodes: %s" % sorted({on_node(c) for c in calls if on_node(c)}))

    jumps = keyedclients.section_jumps(calls, SPACE)
    for i, (ph, t0) in enumerate(phases):
        t1 = phases[i + 1][1] if i + 1 < len(phases) else float("inf")
        mine = [j for j in jumps if t0 <= j[0][0] < t1]
        w = max(mine, key=lambda j: j[1]) if mine else ((0, 0, "-", 0, 0, "-"), 0, 0)
        log("phase %s: %d calls, largest first ID above its section's highest: %d (%s by %s)"
            % (ph, len(mine), w[1], w[0][2], w[0][5]))
    # The failover cost (docs/keyed-sequences.md, "Costs"): a step per takeover in a row. Through
    # (a)-(c) every move is a hand-over (given back) or a straddling section's: one step at most.
    # After (d) every session expired and the slot map forms again as the nodes come back: a
    # section may be started, moved and started again before a client sees its IDs (measured:
    # up to 1,966 with step 1,000), so three steps there.
    t_d = dict(phases)["d"]
    _, over = keyedclients.jump_bound(calls, SPACE, STEP, max(COUNTS), [(t_d, 2**62)], 3)
    check(not over, "no call starts more than a step above its section's highest (three after "
          "ZooKeeper's outage): %s" % over[:5])

    handed = [j for j in jumps if t_up <= j[0][0] <= t_upped + 2 * 10**9 and
              on_node(j[0]) == "n0" and keyedclients.section(SPACE, j[0][2]) not in straddle]
    gb = max([j[1] for j in handed] or [0])
    log("(b) after the hand-over: %d calls on n0 in sections it owned alone, largest first ID "
        "above the section's highest %d (step %d)" % (len(handed), gb, STEP))
    check(handed and gb < STEP // 2, "(b) the given-back maxima: the new process's first IDs "
          "lie less than half a step above their section's highest: %d" % gb)

    for off, a, b in steps:
        served = [c for c in calls if a <= c[0] and c[1] <= b and on_node(c) == "n2"]
        log("(c) n2's clock %s s: %d keyed calls answered by n2" % (off, len(served)))
        check(len(served) > 0, "(c) n2 answers keyed calls with its wall clock at %s s" % off)

    late = [c for c in calls if t_cut + (SESSION_MS + 1000) * 10**6 <= c[1] <= t_heal]
    check(not late, "(d) no keyed call answered between the sessions' expiry and the heal: %s"
          % ["%s %s" % (c[2], c[5]) for c in late[:5]])
    env.finish()


if __name__ == "__main__":
    main()
