"""Sequence sharding turned on mid-rollout (docs/UPGRADING.md, "Sequence sharding in a mixed
cluster"): a node of 0.1.0 (commit 42e24c4, which knows nothing of shards; built from git
history by tests/lib/releasebuild.py) and a 1.0 node with leafd.sequence.sharding on share one
sequence line, under load from HTTP sequence clients (5 sequences, following 307 and retrying
503 as docs/cluster.md says).

  mixed     sharding stays off: the 1.0 node runs the ordinary election behind the old
            primary, its /ready and /cluster name the old node as the holder, its log says so
            once; no redirect storm (redirects bounded; before the gate, 4 of 5 sequences
            bounced between the two nodes, ~100,000 redirects in 20 s);
  replaced  the old node stops and a second 1.0 node with sharding joins: sharding turns on by
            itself (a map of epoch >= 1, both nodes own slots, held_back empty);
  downgrade one 1.0 node is restarted as 0.1.0 on its data dir: the map stays (sharding is
            never turned off), the 0.1.0 node gets no slots (the other owns all 16384), /ready
            names it, no redirect storm;
  overall   0 duplicates and strict real-time order per sequence through all of it.

Runs about 20 s (labelled upgrade: it builds 0.1.0 the first time). Exit 77 (a shallow clone)
is a skip.
"""
import json
import time

from leafdtest import LEAFD_BIN, Env, check, log, wait_until
from releasebuild import release_binary
from seqclients import HttpSeqClient, Recorder, Target, check_strict_order
from seqcluster import seq_state
from upgradehelpers import VLeafd
from zkhelpers import zk_props

OLDER = "42e24c4"  # 0.1.0: no shards, no member record
SEQS = ["g%d" % i for i in range(5)]
# Whole run. A sharded node that leaves stays in the map until the coordinator's next list
# (within 1 s): meanwhile its slots redirect to its address, where the 0.1.0 process that
# replaced it redirects back (18 to 185 seen). The storm this guards against ran ~5,000/s.
MAX_REDIRECTS = 1000


def props(zk_addr, sharding):
    p = zk_props(zk_addr, name="gate", **{
        "leaf.snowflake.enable": "false", "leafd.sequence.enable": "true",
        "leafd.sequence.autocreate": "true", "leafd.sequence.batch": "100",
        "leafd.zk.session.timeout.ms": "4000"})
    if sharding:
        p["leafd.sequence.sharding"] = "true"
    return p


def serving(node):
    try:
        return node.get("/api/sequence/get/probe", timeout=2)[0] in (200, 307)
    except Exception:  # noqa: BLE001
        return False


def redirects(rec):
    return sum(1 for e in rec.snapshot()[1] if e.kind == "redirect")


def main():
    older = release_binary(OLDER)
    with Env() as env:
        zk = env.zookeeper()
        old = VLeafd(env, "old", props(zk.address(), False), binary=older, wait_ready=False)
        check(wait_until(lambda: serving(old), 40), "0.1.0 serves sequences:\n%s"
              % old.log_text()[-1500:])
        new1 = VLeafd(env, "new1", props(zk.address(), True), binary=LEAFD_BIN, wait_ready=False)
        check(wait_until(lambda: serving(new1), 40), "1.0 serves sequences:\n%s"
              % new1.log_text()[-1500:])
        old_http = "127.0.0.1:%d" % old.port

        def held_by_old():
            sh = seq_state(new1).get("sharding", {})
            return old_http in sh.get("held_back", "") and sh.get("on") is False and sh
        sh = wait_until(held_by_old, 10, 0.2)
        check(bool(sh), "1.0's /ready names the 0.1.0 node as holding sharding back: %s"
              % seq_state(new1))
        log("mixed: /ready sharding = %s" % sh)

        rec = Recorder()
        targets = [Target("new1", new1.port, 0), Target("old", old.port, 0)]
        clients = [HttpSeqClient("%s-http" % s, rec, targets, s, start=i, pause=0.003, max_s=60)
                   for i, s in enumerate(SEQS)]
        for c in clients:
            c.start()
        time.sleep(6)
        rs, _ = rec.snapshot()
        mixed_redirects = redirects(rec)
        log("mixed: 6 s, %d answers, %d redirects" % (len(rs), mixed_redirects))
        check(len(rs) > 100, "mixed: IDs issued (%d answers)" % len(rs))
        check(mixed_redirects <= 50, "mixed: no redirect storm (%d redirects in 6 s)"
              % mixed_redirects)
        st, page, _ = new1.get("/cluster?format=json", timeout=5)
        cj = json.loads(page) if st == 200 else {}
        check(old_http in cj.get("sequence_sharding", {}).get("held_back", ""),
              "/cluster names the holder: %d %s" % (st, page[:300]))
        held_logs = new1.log_text().count("held back by node(s) of the sequence line")
        check(held_logs == 1, "the log names the holder once (%d times)" % held_logs)

        log("replaced: the 0.1.0 node stops, a second 1.0 node with sharding joins")
        t_swap = time.monotonic()
        old.stop()
        new2 = VLeafd(env, "new2", props(zk.address(), True), binary=LEAFD_BIN, wait_ready=False)
        targets.append(Target("new2", new2.port, 0))

        def sharded():
            a, b = seq_state(new1), seq_state(new2)
            ok = (a.get("sharded") and b.get("sharded") and a.get("slots", 0) > 0 and
                  b.get("slots", 0) > 0 and a.get("slots", 0) + b.get("slots", 0) == 16384 and
                  a.get("sharding", {}).get("held_back") == "")
            return ok and (a, b)
        both = wait_until(sharded, 20, 0.2)
        check(bool(both), "sharding turned on by itself: %s / %s" % (seq_state(new1),
                                                                     seq_state(new2)))
        t_on = time.monotonic()
        log("replaced: sharding on %.1f s after the swap: slots %d + %d, epoch %s"
            % (t_on - t_swap, both[0]["slots"], both[1]["slots"], both[0].get("shard_epoch")))
        time.sleep(3)

        log("downgrade: new2 restarts as 0.1.0")
        r0 = redirects(rec)
        new2.stop()
        new2.binary = older
        new2.props.pop("leafd.sequence.sharding", None)
        new2.start(wait_ready=False)
        new2_http = "127.0.0.1:%d" % new2.port

        def downgraded():
            a = seq_state(new1)
            ok = (serving(new2) and a.get("sharded") and a.get("slots") == 16384 and
                  new2_http in a.get("sharding", {}).get("held_back", ""))
            return ok and a
        a = wait_until(downgraded, 20, 0.2)
        check(bool(a), "after the downgrade new1 owns every slot and names new2: %s"
              % seq_state(new1))
        log("downgrade: new1 /ready sharding = %s, slots %d, epoch %s"
            % (a.get("sharding"), a.get("slots"), a.get("shard_epoch")))
        t_down = time.monotonic()
        r1 = redirects(rec)
        time.sleep(3)
        steady = redirects(rec) - r1
        log("downgrade: %d redirects while new2 left and came back (new1 learns a leave at its "
            "next list, within 1 s), %d in the 3 s after" % (r1 - r0, steady))
        check(len([r for r in rec.snapshot()[0] if r.recv > t_down]) > 50,
              "IDs issued after the downgrade")
        check(r1 - r0 <= MAX_REDIRECTS, "downgrade: redirects bounded (%d)" % (r1 - r0))
        check(steady <= 20, "downgrade: no redirect storm beside the 0.1.0 node (%d in 3 s)"
              % steady)
        for c in clients:
            c.stop()
        for c in clients:
            c.join(10)
        rs, evs = rec.snapshot()
        total_redirects = redirects(rec)
        after = [r for r in rs if r.recv > t_on]
        log("overall: %d answers (%d after sharding on, from %s), %d redirects, events %s"
            % (len(rs), len(after), sorted({r.node for r in after}), total_redirects,
               {k: sum(1 for e in evs if e.kind == k) for k in {e.kind for e in evs}}))
        check(len(after) > 50, "IDs issued once sharded (%d answers)" % len(after))
        check(total_redirects <= MAX_REDIRECTS, "no redirect storm overall (%d redirects)"
              % total_redirects)
        for s in SEQS:
            bad = check_strict_order([r for r in rs if r.client == "%s-http" % s])
            check(not bad, "sequence %s: unique IDs in strict order: %s" % (s, bad[:3]))
        check("sharded sequences on" in new1.log_text() + new2.log_text(),
              "the log says sharding turned on")
        new1.stop()
        new2.stop()
        env.finish()


main()
