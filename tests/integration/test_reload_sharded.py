"""In-place binary upgrade of a sharded sequence node (docs/UPGRADING.md, "In place, without a
restart"; docs/cluster.md, "Sharded sequences").

Two sequence nodes with leafd.sequence.sharding under one leaf.name, 6 s sessions, the slot map
in force (each node owns about half the slots). HTTP clients (keep-alive, following 307) and RESP
clients (following MOVED) pull sequences of both nodes' slots, each starting on either node. Then
`kill -USR2` replaces one node's process, twice (the coordinator, the lowest of the line, first;
then the other one):
- the upgraded node keeps its election node (name and ephemeralOwner) and its owner node under
  /leafd/<name>/owners (never "released"), and the slot map keeps its epoch (no rebalance); the
  node owns the same number of slots after, the other node never gained a slot, and the
  coordinator's new process coordinates again;
- 0 failed requests: the HTTP clients see nothing but redirects, the RESP clients nothing but
  redirects and the reconnects the hand-over asks for (no TRYAGAIN, no error, no timeout);
Last, the coordinator is upgraded with sharding turned off: its new process writes "released" on
its owner node and leaves the line, and the other node takes every slot within seconds.
Strict real-time order and no duplicate per sequence across the clients, through all of it.
The gap the new process logs and the longest pause of the upgraded node's sequences are logged.
"""
import os
import re
import signal
import time

from leafdtest import Env, check, http, log, pid_alive, wait_until, zkcli
from reloadload import upgrade_in_place
from seqclients import HttpSeqClient, Recorder, RespSeqClient, Target, check_strict_order
from seqcluster import seq_state, shard_slots
from zkhelpers import zk_props

NAME = "rsh"
# A client waits as long as a hand-over may take by docs/UPGRADING.md: the old process drains for
# at most 10 s, the new one resumes the session (well within the 6 s session timeout) and waits at
# most 3 s for the election to settle. The contract's clients (redis-py, ioredis defaults) wait
# without a timeout at all; the pause each upgrade caused is logged for the record.
CLIENT_TIMEOUT_S = 10 + 6 + 3
SEQS = ["k%d" % i for i in range(12)]


def owner_port(node, seq):
    """The HTTP port that serves seq as node answers it (itself, or its 307's)."""
    st, _, hdr = http(node.port, "/api/sequence/get/%s?count=1" % seq, timeout=3)
    if st == 200:
        return node.port
    m = re.match(r"http://[^:]+:(\d+)/", dict(hdr).get("Location", ""))
    return int(m.group(1)) if st == 307 and m else None


def tree(zk):
    """(election {name: ephemeralOwner}, owner nodes {name: data}, map epoch) in two zkCli runs."""
    base = "/leafd/%s" % NAME
    ls = (zkcli(zk.address(), [("ls", base + "/primary"), ("ls", base + "/owners")])[0] or "")
    lists = [sorted(re.findall(r"n_\d+", l)) for l in ls.splitlines() if l.startswith("[")]
    if len(lists) != 2:
        return {}, {}, None
    elect_names, owner_names = lists
    cmds = [("stat", "%s/primary/%s" % (base, k)) for k in elect_names]
    cmds += [("get", "%s/owners/%s" % (base, k)) for k in owner_names]
    cmds.append(("get", base + "/shards"))
    text = zkcli(zk.address(), cmds)[0] or ""
    blocks = text.split("cZxid = ")
    elect = {}
    for k, b in zip(elect_names, blocks[1:]):
        m = re.search(r"ephemeralOwner = (0x[0-9a-f]+)", b)
        elect[k] = m.group(1) if m else None
    data = re.findall(r"^(applied \d+|released)$", blocks[-1], re.M)
    owners = dict(zip(owner_names, data)) if len(data) == len(owner_names) else {"?": data}
    m = re.search(r"^epoch (\d+)$", blocks[-1], re.M)
    return elect, owners, int(m.group(1)) if m else None


env = Env()
zk = env.zookeeper()
props = {"leafd.sequence.enable": "true", "leafd.sequence.batch": "100",
         "leafd.sequence.autocreate": "true", "leafd.sequence.sharding": "true",
         "leafd.zk.session.timeout.ms": "6000"}
nodes = [env.leafd("n%d" % i, zk_props(zk.address(), name=NAME, **props), resp=True,
                   wait_ready=False) for i in range(2)]
pids = [[n.proc.p.pid] for n in nodes]
try:
    s = wait_until(lambda: shard_slots(nodes), 40, 0.2)
    check(bool(s), "two nodes share the 16384 slots: %s" % [seq_state(n) for n in nodes])
    by_port = {n.port: n for n in nodes}
    owner = {q: by_port.get(owner_port(nodes[0], q)) for q in SEQS}
    check(all(owner.values()) and len({o.name for o in owner.values()}) == 2,
          "both nodes own some of %d sequences: %s"
          % (len(SEQS), {q: o.name if o else None for q, o in owner.items()}))
    rec = Recorder()
    targets = [Target(n.name, n.port, n.resp_port) for n in nodes]
    clients = []
    for i, q in enumerate(SEQS):
        kind = HttpSeqClient if i % 3 else RespSeqClient
        clients.append(kind("%s-%s" % (q, "http" if i % 3 else "resp"), rec, targets, q,
                            start=i, pause=0.002, timeout=CLIENT_TIMEOUT_S, max_s=60))
    for c in clients:
        c.start()
    time.sleep(1.5)
    e0, o0, epoch0 = tree(zk)
    log("before: election %s, owner nodes %s, map epoch %s, slots %s" % (e0, o0, epoch0, s))
    check(len(e0) == 2 and set(o0) == set(e0) and epoch0 is not None,
          "two election nodes, their owner nodes and a map")
    coord = [x for x in nodes if "this node coordinates the slot map" in x.log_text()]
    check(len(coord) == 1, "one node coordinates the map: %s" % [x.name for x in coord])
    for label in ("coordinator", "other"):
        n = coord[0] if label == "coordinator" else [x for x in nodes if x is not coord[0]][0]
        other = [x for x in nodes if x is not n][0]
        mine = seq_state(n).get("slots")
        taken = seq_state(other).get("slots_taken")
        coords = n.log_text().count("this node coordinates the slot map")
        t_up = time.monotonic()
        new = upgrade_in_place(n, pids[nodes.index(n)][-1], "%s (%s)" % (n.name, label))
        if new is None:
            break
        pids[nodes.index(n)].append(new)
        time.sleep(1.5)
        e1, o1, epoch1 = tree(zk)
        log("after upgrading %s (%s): election %s, owner nodes %s, map epoch %s"
            % (n.name, label, e1, o1, epoch1))
        check(e1 == e0, "%s: the same election nodes with the same owners (%s -> %s)"
              % (n.name, e0, e1))
        check(set(o1) == set(o0) and "released" not in o1.values(),
              "%s: the same owner nodes, none released (%s)" % (n.name, o1))
        check(epoch1 == epoch0, "%s: the map's epoch is the same (%s -> %s): no rebalance"
              % (n.name, epoch0, epoch1))
        check(seq_state(n).get("slots") == mine, "%s owns the same %s slots after"
              % (n.name, mine))
        check(seq_state(other).get("slots_taken") == taken,
              "%s took no slot meanwhile (slots_taken %s -> %s)"
              % (other.name, taken, seq_state(other).get("slots_taken")))
        check("kept my place in line for sequence primary" in n.log_text() and
              "with its owner node and its slots" in n.log_text(),
              "%s's new process logged that it kept its place and its slots" % n.name)
        # A record below the new process's floor means the old one's write-backs did not reach
        # its floors' file: a skipped rest of a batch (a gap, never a repeat). The stop waits for
        # their answers (sequence_service_heal_giveback_drain); under ThreadSanitizer 4 runs in 9 still
        # skipped when it waited for a synchronous call after them instead.
        below = n.log_text().count("is below this node's floor")
        check(below == 0, "%s: no sequence started above a floor higher than ZooKeeper's max "
              "(%d did)" % (n.name, below))
        if label == "coordinator":
            check(n.log_text().count("this node coordinates the slot map") > coords,
                  "%s's new process coordinates the map again" % n.name)
        gap = re.findall(r"accepting again (\d+) ms after", n.log_text())
        ups = [q for q in SEQS if owner[q] is n]
        recs = [r for r in rec.records if r.client.split("-")[0] in ups and r.recv > t_up]
        recs.sort(key=lambda r: r.recv)
        pause = max([b.recv - a.recv for a, b in zip(recs, recs[1:])] or [0])
        log("%s: gap logged %s ms; the longest pause of its sequences %.0f ms" %
            (n.name, gap[-1:], pause * 1000))
    kinds = {}
    for e in rec.events:
        kinds[(e.client.split("-")[1], e.kind)] = kinds.get((e.client.split("-")[1], e.kind), 0) + 1
    log("%d answers; events %s" % (len(rec.records), kinds))
    failed = [e for e in rec.events if e.kind != "redirect" and
              not (e.kind == "conn" and e.client.endswith("-resp"))]
    check(not failed, "0 failed requests (only redirects, and RESP reconnects): %s" % failed[:5])

    # Upgraded with sharding turned off, a node releases its owner node and leaves the line: the
    # other node takes every slot without waiting out a session, in order.
    n, other = coord[0], [x for x in nodes if x is not coord[0]][0]
    with open(n.conf) as f:
        conf = f.read()
    with open(n.conf, "w") as f:
        f.write(conf.replace("leafd.sequence.sharding = true", "leafd.sequence.sharding = false"))
    t_off = time.monotonic()
    new = upgrade_in_place(n, pids[nodes.index(n)][-1], "%s (sharding off)" % n.name)
    if new is not None:
        pids[nodes.index(n)].append(new)
        check("(its owner node released)" in n.log_text(),
              "%s's new process released its owner node and left the line" % n.name)
        # The member record is the adopted session's: the new process rewrites it.
        check(re.search(r'member record \S+: \{[^}]*sharding\\?":false[^}]*\} \(was [^)]*'
                        r'sharding\\?":true', n.log_text()) is not None,
              "%s's member record now says sharding false (the new process rewrote the adopted "
              "record)" % n.name)
        ok = wait_until(lambda: seq_state(other).get("slots") == 16384, 10, 0.05)
        check(ok, "%s took every slot (%s)" % (other.name, seq_state(other).get("slots")))
        log("%s owns every slot %.2f s after the upgrade of %s began"
            % (other.name, time.monotonic() - t_off, n.name))
        time.sleep(1.0)
        late = {}
        for e in rec.events:
            if e.t > t_off:
                late[e.kind] = late.get(e.kind, 0) + 1
        log("events since (retries allowed here: the slots move): %s" % late)
    for c in clients:
        c.stop()
    for c in clients:
        c.join(10)
    for q in SEQS:
        rs = [r for r in rec.records if r.client.split("-")[0] == q]
        bad = check_strict_order(rs)
        check(not bad and len(rs) > 20, "%s: %d answers, strictly increasing, no duplicate: %s"
              % (q, len(rs), bad))
finally:
    for n, ps in zip(nodes, pids):
        if ps[-1] != n.proc.p.pid and pid_alive(ps[-1]):
            os.kill(ps[-1], signal.SIGTERM)
            check(wait_until(lambda p=ps[-1]: not pid_alive(p), 20, 0.1),
                  "%s: the last process stops" % n.name)
        check("Sanitizer" not in n.log_text(), "%s: no sanitizer report" % n.name)
env.finish()
