"""Sequences sharded across primaries (leafd.sequence.sharding; docs/cluster.md).

One ZooKeeper, three leafd nodes (each reaching ZooKeeper through its own
tests/lib/tcpproxy.py proxy), 4 s sessions, batches of 100. Checks:
  - the slots split about evenly (each node ~16384/3), and CLUSTER SLOTS
    reports every range with its owner and the others as replicas;
  - redis-py's RedisCluster INCRs 1,000 sequences by itself, each node serving
    a share (reported), the second round above the first for every sequence;
    ioredis' Cluster (npm, as test_resp_clients installs it; skipped when node
    or npm are missing) does the same on 200;
  - HTTP answers 307 to the owner of the sequence's slot;
  - while HTTP and RESP clients (following 307/MOVED) pull 6 sequences, the
    faults: kill -9 of an owner (restarted), a graceful stop (restarted), a
    fourth node joining, a demotion, and a partition of an owner from ZooKeeper
    (healed): 0 duplicates and strict real-time order per sequence through all
    of them; during the kill -9, the sequences of the other nodes' slots keep
    being served (longest pause reported and bounded);
  - as tools/programs/zk-inspect reads it: the map in /leafd/<name>/shards names every range.
Runs about 75 s. Run by ctest with /usr/bin/python3 (python3-redis).
"""
import json
import os
import re
import shutil
import subprocess
import threading
import time

import redis
from redis.cluster import ClusterNode, RedisCluster

from leafdtest import Env, check, free_port, http, log, wait_until
from seqclients import (HttpSeqClient, Recorder, RespSeqClient, Target, check_strict_order,
                        max_unavailable)
from seqcluster import seq_state
from tcpproxy import Proxy
from zkhelpers import zk_props

NAME = "shard"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SESSION_MS = 4000
SEQS = ["a%d" % i for i in range(6)]


def props(zk_addr):
    return zk_props(zk_addr, name=NAME, **{
        "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
        "leafd.sequence.sharding": "true", "leafd.sequence.batch": "100",
        "leafd.zk.session.timeout.ms": str(SESSION_MS),
        "leafd.resp.listen": "127.0.0.1:%d" % free_port()})

IOREDIS = "ioredis@5"
IOREDIS_CLUSTER_JS = r"""
const Redis = require("ioredis");
const ports = process.argv.slice(2).map(Number);
const c = new Redis.Cluster(ports.map(p => ({host: "127.0.0.1", port: p})),
                            {redisOptions: {stringNumbers: true}, slotsRefreshTimeout: 5000});
(async () => {
  const out = {};
  for (let i = 0; i < 200; i++) out["io" + i] = [await c.incr("sequence:io" + i)];
  for (let i = 0; i < 200; i++) out["io" + i].push(await c.incr("sequence:io" + i));
  console.log(JSON.stringify(out));
  c.disconnect();
})().catch(e => { console.error("fatal: " + e); process.exit(1); });
"""


def ioredis_cluster(env, nodes):
    """ioredis' Cluster INCRs 200 sequences twice; None when node/npm/ioredis are missing."""
    node_dir = os.environ.get("LEAFD_NODE_DIR", os.path.join(env.dir, "node"))
    mods = os.path.join(node_dir, "node_modules")
    if not shutil.which("node") or not shutil.which("npm"):
        log("SKIP ioredis Cluster: node or npm is not installed")
        return None
    if not os.path.exists(os.path.join(mods, "ioredis", "package.json")):
        os.makedirs(node_dir, exist_ok=True)
        try:
            subprocess.run(["npm", "install", "--prefix", node_dir, "--no-audit", "--no-fund",
                            "--fetch-retries=1", IOREDIS], capture_output=True, text=True,
                           timeout=90)
        except subprocess.TimeoutExpired:
            pass
    if not os.path.exists(os.path.join(mods, "ioredis", "package.json")):
        log("SKIP ioredis Cluster: could not install %s into %s" % (IOREDIS, node_dir))
        return None
    script = os.path.join(env.dir, "ioredis_cluster.js")
    with open(script, "w") as f:
        f.write(IOREDIS_CLUSTER_JS)
    r = subprocess.run(["node", script] + [str(n.resp_port) for n in nodes], capture_output=True,
                       text=True, timeout=60, env=dict(os.environ, NODE_PATH=mods))
    if r.returncode != 0:
        return {"error": r.stderr[-500:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def balanced(nodes):
    s = [seq_state(n).get("slots", 0) for n in nodes]
    return sum(s) == 16384 and min(s) >= 16384 // len(nodes) - 1 and s


def owner_of(nodes, seq):
    """The node whose HTTP answers the sequence's requests (following one 307)."""
    for n in nodes:
        if not n.proc or not n.proc.alive():
            continue
        try:
            st, _, hdr = http(n.port, "/api/sequence/get/%s?count=1" % seq, timeout=2)
        except OSError:
            continue
        if st == 200:
            return n
        loc = dict(hdr).get("Location", "")
        m = re.match(r"http://[^:]+:(\d+)/", loc)
        if st == 307 and m:
            for x in nodes:
                if x.port == int(m.group(1)):
                    return x
    return None


def issued(node):
    st, text, _ = node.get("/metrics", timeout=5)
    m = re.search(r"^leafd_sequence_issued_total (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


class Cluster:
    def __init__(self, env):
        self.env = env
        self.zk = env.zookeeper()
        self.nodes, self.proxies = [], {}

    def start(self, name):
        px = Proxy(target=("127.0.0.1", self.zk.port))
        p = props("127.0.0.1:%d" % px.port)
        n = self.env.leafd(name, p, wait_ready=False)
        n.resp_port = int(p["leafd.resp.listen"].rsplit(":", 1)[1])
        self.proxies[name] = px
        self.nodes.append(n)
        return n

    def restart(self, n):
        n.start(wait_ready=False)

    def live(self):
        return [n for n in self.nodes if n.proc and n.proc.alive()]

    def wait_balanced(self, timeout=30):
        return wait_until(lambda: balanced(self.live()), timeout, 0.2)


def redis_cluster_round(nodes, names, threads=8):
    """INCR sequence:<name> once per name through RedisCluster clients (threads of them,
    each on its own share of the names); returns {name: value}."""
    out = {}

    def work(part):
        rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", n.resp_port) for n in nodes],
                          socket_timeout=5)
        for name in part:
            out[name] = rc.incr("sequence:" + name)
        rc.close()
    ts = [threading.Thread(target=work, args=(names[i::threads],)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    return out


def main():
    with Env() as env:
        c = Cluster(env)
        for i in range(3):
            c.start("n%d" % i)
        s = c.wait_balanced(40)
        check(bool(s), "three nodes split the 16384 slots evenly: %s" %
              [seq_state(n).get("slots") for n in c.nodes])
        log("slots per node: %s" % (s,))

        # CLUSTER SLOTS: every range, its owner first and the others as replicas (each node's
        # view of the others' addresses is read every second: wait for it to be complete).
        r = redis.Redis(port=c.nodes[0].resp_port)

        def slots_view():
            sl = r.execute_command("CLUSTER SLOTS")
            return sl if sum(e[1] - e[0] + 1 for e in sl) == 16384 else None
        slots = wait_until(slots_view, 10, 0.2) or r.execute_command("CLUSTER SLOTS")
        covered = sum(e[1] - e[0] + 1 for e in slots)
        owners = {e[2][1] for e in slots}
        check(covered == 16384 and len(owners) == 3 and all(len(e) == 5 for e in slots),
              "CLUSTER SLOTS covers 16384 slots with 3 owners and 2 replicas each: %s" % slots)
        cn = r.execute_command("CLUSTER NODES")  # redis-py parses it: {addr: {flags, slots}}
        spans = [x for v in cn.values() for x in v.get("slots", [])]
        check(sum(int(b) - int(a) + 1 for a, b in spans) == 16384 and len(cn) == 3 and
              all("master" in v["flags"] for v in cn.values()),
              "CLUSTER NODES: three masters with their ranges: %s" % cn)
        shards = r.execute_command("CLUSTER SHARDS")
        check(len(shards) == 3, "CLUSTER SHARDS: a shard per owner: %d" % len(shards))
        r.close()

        # redis-py's cluster client routes each INCR to the slot's owner by itself.
        names = ["c%d" % i for i in range(1000)]
        before = [issued(n) for n in c.nodes]
        t = time.time()
        first = redis_cluster_round(c.nodes, names)
        t1 = time.time()
        second = redis_cluster_round(c.nodes, names)
        t2 = time.time()
        share = [issued(n) - b for n, b in zip(c.nodes, before)]
        check(len(first) == len(second) == len(names) and
              all(second[k] > first[k] for k in names), "every sequence's second INCR is larger")
        check(all(x > 300 for x in share), "every node served a share of 2,000 INCRs: %s" % share)
        text = c.nodes[0].get("/metrics")[1]
        check(re.search(r"^leafd_sequence_slots 546[12]$", text, re.M) is not None and
              'leafd_sequence_slot_moves_total{direction="in"}' in text,
              "/metrics: leafd_sequence_slots and _slot_moves_total")
        log("RedisCluster, 8 clients: 1,000 sequences, first INCR (creates each: ZooKeeper "
            "writes) %.1f s, second %.1f s; IDs per node %s" % (t1 - t, t2 - t1, share))

        # ioredis' Cluster does the same.
        before = [issued(n) for n in c.nodes]
        io = ioredis_cluster(env, c.nodes)
        if io is not None:
            share = [issued(n) - b for n, b in zip(c.nodes, before)]
            check("error" not in io and len(io) == 200 and
                  all(int(v[1]) > int(v[0]) for v in io.values()),
                  "ioredis Cluster: 200 sequences INCRed twice, ascending: %s" % str(io)[:300])
            check(all(x > 50 for x in share), "ioredis Cluster reached every owner: %s" % share)
            log("ioredis Cluster: 400 INCR over 200 sequences; IDs per node %s" % share)

        # HTTP: 307 to the slot's owner.
        o = owner_of(c.nodes, "a0")
        other = [n for n in c.nodes if n is not o][0]
        st, body, hdr = http(other.port, "/api/sequence/get/a0")
        check(st == 307 and ":%d/" % o.port in dict(hdr).get("Location", ""),
              "HTTP 307 to the owner: %d %s" % (st, dict(hdr).get("Location")))

        # Load: HTTP and RESP clients on 6 sequences, following redirects.
        rec = Recorder()
        targets = [Target(n.name, n.port, n.resp_port) for n in c.nodes]
        clients = []
        for i, seq in enumerate(SEQS):
            clients.append(HttpSeqClient("%s-http" % seq, rec, targets, seq, start=i, pause=0.003))
            clients.append(RespSeqClient("%s-resp" % seq, rec, targets, seq, start=i + 1,
                                         pause=0.003))
        for cl in clients:
            cl.start()
        time.sleep(2)

        # 1. kill -9 the owner of a0; the others' sequences keep being served.
        victim = owner_of(c.nodes, "a0")
        theirs = [q for q in SEQS if owner_of(c.nodes, q) is not victim]
        t_kill = time.monotonic()
        victim.stop(9)
        log("kill -9 %s (owner of a0); sequences on other nodes: %s" % (victim.name, theirs))
        ok = wait_until(lambda: owner_of(c.nodes, "a0") not in (None, victim) and
                        http(owner_of(c.nodes, "a0").port, "/api/sequence/get/a0")[0] == 200,
                        SESSION_MS / 1000 + 10, 0.1)
        t_back = time.monotonic()
        check(ok, "a0 served again after its owner's kill -9")
        gap_others = max(max_unavailable([x for x in rec.records if x.client.split("-")[0] == q],
                                         t_kill, t_back)[0] for q in theirs)
        gap_a0 = t_back - t_kill
        log("a0 back after %.2f s; the other nodes' sequences' longest pause meanwhile %.3f s" %
            (gap_a0, gap_others))
        check(gap_others < 1.0, "the other shards kept serving: longest pause %.3f s" % gap_others)
        c.restart(victim)
        check(bool(c.wait_balanced(30)), "balanced again after the killed node rejoined")

        # 2. graceful stop of a node, then it comes back.
        n = c.nodes[1]
        t = time.monotonic()
        check(n.stop() == 0, "%s exits 0 on SIGTERM" % n.name)
        check(bool(c.wait_balanced(20)), "two nodes hold every slot after the stop")
        log("graceful stop of %s: rebalanced in %.2f s" % (n.name, time.monotonic() - t))
        c.restart(n)
        check(bool(c.wait_balanced(30)), "balanced again after the restart")

        # 3. a fourth node joins: it takes slots only from the others, everyone ~4096.
        t = time.monotonic()
        c.start("n3")
        targets.append(Target("n3", c.nodes[3].port, c.nodes[3].resp_port))
        check(bool(c.wait_balanced(30)), "four nodes split the slots: %s" %
              [seq_state(x).get("slots") for x in c.nodes])
        log("n3 joined: balanced in %.2f s: %s" % (time.monotonic() - t,
                                                    [seq_state(x).get("slots") for x in c.nodes]))

        # 4. a demotion: the node gives its slots up and gets back in line.
        d = owner_of(c.nodes, "a1")
        st, _, _ = d.get("/api/cluster/demote", method="POST", body="")
        check(st in (200, 202, 204), "demote %s: %d" % (d.name, st))
        time.sleep(1)
        check(bool(c.wait_balanced(30)), "balanced again after the demotion")

        # 5. an owner cut off from ZooKeeper (blackhole), then healed.
        p = owner_of(c.nodes, "a2")
        t = time.monotonic()
        c.proxies[p.name].blackhole()
        log("partition %s (owner of a2) from ZooKeeper" % p.name)
        ok = wait_until(lambda: owner_of(c.nodes, "a2") not in (None, p), SESSION_MS / 1000 + 10,
                        0.1)
        check(ok, "a2 moved to another node while its owner was cut off")
        log("a2 served by another node after %.2f s" % (time.monotonic() - t))
        c.proxies[p.name].heal()
        check(bool(c.wait_balanced(30)), "balanced again after the partition healed")
        time.sleep(1)

        for cl in clients:
            cl.stop()
        for cl in clients:
            cl.join(10)

        # Strict real-time order and no duplicate, per sequence, through everything.
        total = 0
        for seq in SEQS:
            rs = [x for x in rec.records if x.client.split("-")[0] == seq]
            total += len(rs)
            bad = check_strict_order(rs)
            check(not bad and len(rs) > 100, "%s: %d answers, strictly increasing: %s" %
                  (seq, len(rs), bad))
        kinds = {}
        for e in rec.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        log("%d answers over %d sequences; events %s" % (total, len(SEQS), kinds))
        out = c.zk.cli("get", "/leafd/%s/shards" % NAME)
        check("epoch " in out and "-16383 " in out, "the map is in ZooKeeper: %s" % out[-300:])
        r = subprocess.run([os.path.join(ROOT, "tools", "programs", "zk-inspect"), c.zk.address(), NAME],
                           capture_output=True, text=True, timeout=120)
        shown = re.findall(r"^    slots +(\d+)-(\d+) +(\d+) +owner n_\d+ +http=", r.stdout, re.M)
        check(r.returncode == 0 and sum(int(x[2]) for x in shown) == 16384,
              "tools/programs/zk-inspect shows the assignment:\n%s" % r.stdout[-1500:])
        log("tools/programs/zk-inspect:\n" + "\n".join(l for l in r.stdout.splitlines() if "slots" in l
                                               or "shards" in l))
        for px in c.proxies.values():
            px.close()
    env.finish()


if __name__ == "__main__":
    main()
