#!/usr/bin/env python3
"""Sequences through a cluster client: one primary against sharded primaries (docs/cluster.md).

Starts a throwaway ZooKeeper and three leafd nodes (sequences on, autocreate), once
with leafd.sequence.sharding = false (one primary serves every sequence) and once
with true (each node owns about a third of the slots), and drives each as a
cluster client would, each key sent to its slot's owner: six redis-benchmark
processes at once, one per sequence (sharded: two sequences each node owns;
one primary: six sequences, all on the primary), 8 connections each, single
requests and pipelines of 16. (redis-benchmark --cluster routes a command
line's key only when it is one fixed hash tag, and sequence names cannot hold
braces, so it cannot spread keys by itself.) Reports requests per second, each node's share of
the IDs (leafd_sequence_issued_total) and each node's ZooKeeper writes per second
(record writes, leafd_sequence_writes_total, plus the heartbeats: one write every
T/6 by the primary, or by every node when sharded).

usage: tools/benchmarks/bench-shard.py [--requests N] [--binary PATH]
On a 2-core machine the client and three servers share the cores: the run
shows the distribution and the ZooKeeper cost, not a speed-up (see
docs/BENCHMARKS.md).
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import leafdtest  # noqa: E402
from leafdtest import Env, free_port, wait_until  # noqa: E402
from zkhelpers import zk_props  # noqa: E402

SESSION_MS = 10000


def metric(node, name):
    st, text, _ = node.get("/metrics", timeout=5)
    m = re.search(r"^%s (\d+)" % name, text, re.M)
    return int(m.group(1)) if m else 0


def cluster_ready(node, sharded):
    import json
    st, body, _ = node.get("/ready", timeout=2)
    seq = json.loads(body)["sequence"]
    return seq.get("slots", 0) > 0 if sharded else seq.get("role") in ("primary", "standby")


def run(sharded, requests, pipeline):
    with Env() as env:
        zk = env.zookeeper()
        nodes = []
        for i in range(3):
            p = zk_props(zk.address(), name="bench", **{
                "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
                "leafd.sequence.sharding": "true" if sharded else "false",
                "leafd.zk.session.timeout.ms": str(SESSION_MS),
                "leafd.resp.listen": "127.0.0.1:%d" % free_port()})
            n = env.leafd("n%d" % i, p, wait_ready=False)
            n.resp_port = int(p["leafd.resp.listen"].rsplit(":", 1)[1])
            nodes.append(n)
        ok = wait_until(lambda: all(cluster_ready(n, sharded) for n in nodes), 60, 0.2)
        if not ok:
            sys.exit("bench-shard: the cluster did not come up")
        time.sleep(2 if sharded else 1)
        import json
        roles = [json.loads(n.get("/ready")[1])["sequence"].get("role") for n in nodes]
        # What a cluster client does: each key to its slot's owner. Two sequences per node
        # that this node owns (sharded), or six all owned by the primary; one
        # redis-benchmark process per sequence, on its owner.
        procs_for = []
        for i, n in enumerate(nodes):
            want = n if sharded else nodes[roles.index("primary")]
            got = 0
            for k in range(100000):
                name = "b%d.%d" % (i, k)
                r = subprocess.run(["redis-cli", "-p", str(want.resp_port), "INCR",
                                    "sequence:" + name], capture_output=True, text=True)
                if r.stdout.strip().isdigit():
                    procs_for.append((want, name))
                    got += 1
                    if got == 2:
                        break

        def argv(node, name, n):
            return ["redis-benchmark", "-h", "127.0.0.1", "-p", str(node.resp_port), "-c", "8",
                    "-n", str(n), "-P", str(pipeline), "-q", "INCR", "sequence:" + name]
        for node, name in procs_for:  # warm-up: the batch grows with the rate
            subprocess.run(argv(node, name, 20000), capture_output=True, timeout=300)
        before = [(metric(n, "leafd_sequence_issued_total"),
                   metric(n, "leafd_sequence_writes_total")) for n in nodes]
        t = time.time()
        ps = [subprocess.Popen(argv(node, name, requests // len(procs_for)),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
              for node, name in procs_for]
        outs = [p.communicate(timeout=600)[0] for p in ps]
        took = time.time() - t
        after = [(metric(n, "leafd_sequence_issued_total"),
                  metric(n, "leafd_sequence_writes_total")) for n in nodes]
        rps = 0.0
        for o in outs:
            m = re.findall(r"([\d.]+) requests per second", o)
            rps += float(m[-1]) if m else 0.0
        r = subprocess.CompletedProcess([], 0, "\n".join(outs), "")
        hb = 6000.0 / SESSION_MS  # writes/s of one heartbeating node
        per = []
        for i, (b, a) in enumerate(zip(before, after)):
            beats = hb if (sharded or roles[i] == "primary") else 0.0
            per.append((a[0] - b[0], (a[1] - b[1]) / took + beats))
        return rps, per, (r.stdout + r.stderr).strip()[-300:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "leafd"))
    a = ap.parse_args()
    leafdtest.LEAFD_BIN = os.path.abspath(a.binary)
    for pipeline in (1, 16):
        for sharded in (False, True):
            rps, per, tail = run(sharded, a.requests, pipeline)
            print("%-13s -P %-2d %9.0f INCR/s; IDs per node %s; ZooKeeper writes/s per node %s"
                  % ("sharded" if sharded else "one primary", pipeline, rps,
                     [x[0] for x in per], ["%.1f" % x[1] for x in per]), flush=True)
            if rps == 0:
                print("  redis-benchmark said: " + tail)


if __name__ == "__main__":
    main()
