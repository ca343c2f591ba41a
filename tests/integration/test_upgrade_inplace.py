"""In-place upgrades from the previous release (docs/UPGRADING.md, "In place, without a restart";
docs/OPERATIONS.md, "Upgrading a cluster"): the previous release, 1.0.0 (commit 209a81c), is
built from git history (tests/lib/releasebuild.py) and copied to a path of the test's own; the
node is started from that path, this build is installed at it (a rename, as a package does) and
`kill -USR2` makes the 1.0.0 process hand over to it. Then back (a downgrade in place) and up
again: the hand-over is a protocol between two versions, both ways.

  single   one node, forever mode with sequences and RESP, under the in-place clients of
           tests/lib/reloadload.py (HTTP keep-alive, the sequence over HTTP, redis-py, a RESP
           pipeline of 10): 1.0.0 -> this build -> 1.0.0 -> this build. Each step: the old
           process hands over and exits 0, the new pid runs the binary just installed (its
           /proc/PID/exe is that file), 0 failed requests, 0 refused connections, 0 duplicates,
           IDs rising per client, the sequence strictly increasing, the same worker ID and one
           ZooKeeper session throughout; 0 short pipelines where this build drains, at most one
           where 1.0.0 does (its drain closes a RESP connection after one reply, fixed since).
  sharded  two nodes with leafd.sequence.sharding on 1.0.0, HTTP and RESP sequence clients on
           both nodes' slots; each node upgraded in place, the coordinator first: the same
           election nodes, owner nodes and map epoch (no rebalance), the same slots per node,
           nothing but redirects (and RESP reconnects) to the clients, strict order per sequence.

Labelled "upgrade": the full suite runs it, the TSan subset does not (the old binary is a
Release build). Skips (77) only when the repository has no history to build 1.0.0 from.
"""
import os
import re
import shutil
import signal
import time

import reloadload
from leafdtest import LEAFD_BIN, Env, check, log, pid_alive, wait_until, zkcli
from releasebuild import release_binary
from seqcluster import seq_state, shard_slots
from seqclients import HttpSeqClient, Recorder, RespSeqClient, Target, check_strict_order
from upgradehelpers import VLeafd
from zkhelpers import worker_of, zk_props

PREVIOUS = "209a81c"  # 1.0.0
# A client waits as long as a hand-over may take by docs/UPGRADING.md: the old process drains for
# at most 10 s, the new one resumes the session (within the 6 s session timeout) and waits at most
# 3 s for the election to settle (as test_reload_sharded.py).
CLIENT_TIMEOUT_S = 10 + 6 + 3
SEQS = ["k%d" % i for i in range(8)]

old = release_binary(PREVIOUS)
env = Env()
zk = env.zookeeper()
SEQ_PROPS = {"leafd.sequence.enable": "true", "leafd.sequence.batch": "100",
             "leafd.sequence.autocreate": "true", "leafd.zk.session.timeout.ms": "6000"}


def install(path, binary):
    """Puts a copy of binary at path as a package does (a new file renamed over the old one, so
    the running process keeps its own); returns the inode the next process will run."""
    shutil.copy2(binary, path + ".new")
    os.replace(path + ".new", path)
    return os.stat(path).st_ino


def node_binary(name):
    """A path of the node's own holding 1.0.0's binary: the path the process restarts."""
    d = os.path.join(env.dir, "bin-" + name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "leafd")
    install(path, old)
    return path


def runs(pid, ino):
    try:
        return os.stat("/proc/%d/exe" % pid).st_ino == ino
    except OSError:
        return False


def single():
    path = node_binary("n0")
    node = VLeafd(env, "n0", zk_props(zk.address(), name="ip", **SEQ_PROPS), binary=path,
                  resp=True, wait_ready=False)
    check(node.wait_sequence("rs", 40) == 200, "n0 (1.0.0) serves the sequence rs:\n%s"
          % node.log_text()[-1500:])
    w0 = worker_of(node.get_ids("/api/snowflake/get/ip")[0])
    pids = [node.proc.p.pid]
    # (label, binary, short pipelines allowed): 1.0.0's drain closes a RESP connection after one
    # reply, so the pipelining client (10 in flight) loses the rest once per upgrade from 1.0.0
    # (docs/UPGRADING.md, "In place from 1.0.0"); this build's drain answers them all.
    steps = [("1.0.0 -> this build", LEAFD_BIN, 1), ("this build -> 1.0.0", old, 0),
             ("1.0.0 -> this build again", LEAFD_BIN, 1)]
    try:
        for label, binary, short_ok in steps:
            ino = install(path, binary)
            st, cl = reloadload.start(node.port, node.resp_port, "ip",
                                      ("http", "http", "seq", "redis", "pipe"))
            time.sleep(1.0)
            t0 = time.monotonic()
            new = reloadload.upgrade_in_place(node, pids[-1], label)
            took = time.monotonic() - t0
            time.sleep(1.0)
            workers = reloadload.stop(st, cl, label, short_ok=short_ok)
            if new is None:
                break
            check(node.proc.p.wait(10) == 0 if len(pids) == 1 else not pid_alive(pids[-1]),
                  "%s: the old process exited (0)" % label)
            check(runs(new, ino), "%s: the new pid %d runs the binary just installed"
                  % (label, new))
            pids.append(new)
            w = worker_of(node.get_ids("/api/snowflake/get/ip")[0])
            check(workers <= {w0} and w == w0, "%s: the same worker ID (%s; during %s; now %s)"
                  % (label, w0, workers, w))
            gap = re.findall(r"accepting again (\d+) ms after", node.log_text())
            log("%s: hand-over to /ready 200 in %.2f s; gap logged by the new process %s ms"
                % (label, took, gap[-1:]))
        sessions = set(re.findall(r"handed over to pid \d+ \(ZooKeeper session (0x[0-9a-f]+)",
                                  node.log_text()))
        check(len(sessions) == 1, "one ZooKeeper session through both versions (%s)" % sessions)
    finally:
        stop_last(node, pids[-1])


def shard_tree(name):
    """(election node names, owner node {name: data}, map epoch) in one zkCli run."""
    base = "/leafd/%s" % name
    ls = (zkcli(zk.address(), [("ls", base + "/primary"), ("ls", base + "/owners")])[0] or "")
    lists = [sorted(re.findall(r"n_\d+", x)) for x in ls.splitlines() if x.startswith("[")]
    if len(lists) != 2:
        return [], {}, None
    text = zkcli(zk.address(), [("get", "%s/owners/%s" % (base, k)) for k in lists[1]] +
                 [("get", base + "/shards")])[0] or ""
    data = re.findall(r"^(applied \d+|released)$", text, re.M)
    m = re.search(r"^epoch (\d+)$", text, re.M)
    return lists[0], dict(zip(lists[1], data)), int(m.group(1)) if m else None


def sharded():
    props = zk_props(zk.address(), name="ips", **dict(SEQ_PROPS, **{
        "leafd.sequence.sharding": "true"}))
    paths = [node_binary("s%d" % i) for i in range(2)]
    nodes = [VLeafd(env, "s%d" % i, props, binary=paths[i], resp=True, wait_ready=False)
             for i in range(2)]
    pids = [[n.proc.p.pid] for n in nodes]
    clients = []
    try:
        s = wait_until(lambda: shard_slots(nodes), 40, 0.2)
        check(bool(s), "two 1.0.0 nodes share the 16384 slots: %s" % [seq_state(n) for n in nodes])
        rec = Recorder()
        targets = [Target(n.name, n.port, n.resp_port) for n in nodes]
        for i, q in enumerate(SEQS):
            kind = HttpSeqClient if i % 2 else RespSeqClient
            clients.append(kind("%s-%s" % (q, "http" if i % 2 else "resp"), rec, targets, q,
                                start=i, pause=0.002, timeout=CLIENT_TIMEOUT_S, max_s=60))
        for c in clients:
            c.start()
        time.sleep(1.5)
        e0, o0, epoch0 = shard_tree("ips")
        log("sharded, before: election %s, owner nodes %s, map epoch %s, slots %s"
            % (e0, o0, epoch0, s))
        coord = [x for x in nodes if "this node coordinates the slot map" in x.log_text()]
        check(len(coord) == 1, "one node coordinates the map: %s" % [x.name for x in coord])
        order = coord + [x for x in nodes if x not in coord]
        for n in order:
            i = nodes.index(n)
            mine = seq_state(n).get("slots")
            ino = install(paths[i], LEAFD_BIN)
            label = "sharded %s 1.0.0 -> this build" % n.name
            new = reloadload.upgrade_in_place(n, pids[i][-1], label)
            if new is None:
                break
            pids[i].append(new)
            check(runs(new, ino), "%s: the new pid runs this build" % label)
            time.sleep(1.5)
            e1, o1, epoch1 = shard_tree("ips")
            gap = re.findall(r"accepting again (\d+) ms after", n.log_text())
            log("%s: election %s, owner nodes %s, map epoch %s; gap logged %s ms"
                % (label, e1, o1, epoch1, gap[-1:]))
            check(e1 == e0 and set(o1) == set(o0) and "released" not in o1.values(),
                  "%s: the same election and owner nodes, none released (%s %s -> %s %s)"
                  % (label, e0, o0, e1, o1))
            check(epoch1 == epoch0, "%s: the map's epoch is the same (%s -> %s): no rebalance"
                  % (label, epoch0, epoch1))
            check(seq_state(n).get("slots") == mine, "%s: the node owns the same %s slots"
                  % (label, mine))
            check("kept my place in line for sequence primary" in n.log_text(),
                  "%s: the new process kept its place in line" % label)
        for c in clients:
            c.stop()
        for c in clients:
            c.join(10)
        kinds = {}
        for e in rec.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        log("sharded: %d answers; events %s" % (len(rec.records), kinds))
        failed = [e for e in rec.events if e.kind != "redirect" and
                  not (e.kind == "conn" and e.client.endswith("-resp"))]
        check(not failed, "sharded: 0 failed requests (only redirects, and RESP reconnects): %s"
              % failed[:5])
        for q in SEQS:
            rs = [r for r in rec.records if r.client.split("-")[0] == q]
            bad = check_strict_order(rs)
            check(not bad and len(rs) > 20, "sharded %s: %d answers, strictly increasing, no "
                  "duplicate: %s" % (q, len(rs), bad))
    finally:
        for c in clients:
            c.stop()
        for n, ps in zip(nodes, pids):
            stop_last(n, ps[-1])


def stop_last(node, pid):
    """SIGTERM to the node's last process (the harness stops only the first one it started)."""
    if pid != node.proc.p.pid and pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        check(wait_until(lambda: not pid_alive(pid), 20, 0.1), "%s: the last process stops"
              % node.name)
    check("Sanitizer" not in node.log_text(), "%s: no sanitizer report" % node.name)


single()
sharded()
env.finish()
