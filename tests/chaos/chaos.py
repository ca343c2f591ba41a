#!/usr/bin/env python3
"""Chaos test of leafd: uniqueness and order of IDs while everything fails.

    tests/chaos/chaos.py [--lease] [--seconds N] [--seed S] [--clients N] [--keep]
    tools/checks/chaos [--lease] [--seconds N] [--seed S]  (builds a release binary first)

Sets up, all on 127.0.0.1 in a temp dir: a three-server ZooKeeper ensemble
(QuorumPeerMain), one MariaDB with Leaf's leaf_alloc and the tags `chaos`
(step 1000) and `chaos.small` (step 10), and three leafd nodes with both
modes on, each under libfaketime with its own timestamp file at "+0".
Client threads (--clients, default 4) pull snowflake and segment IDs, single
and batches, from random nodes over keep-alive connections for N seconds
(default 60) while a scheduler injects a fault every 4-6 s, chosen from the
seed (printed first; default: $CHAOS_SEED, else random):

    kill9      kill -9 a node, restart it
    sigterm    SIGTERM a node (must exit 0), restart it
    zk_one     kill -9 one ZooKeeper server, restart it
    zk_all     kill -9 the whole ensemble, restart it
    expire     force a node's ZooKeeper session to expire (zk_expire)
    db_kill    kill -9 MariaDB, restart it (--galera: kill -9 one Galera member, restart it)
    clock_small step a node's wall clock back 10 ms to 4 s (within the
               bounded lead), then forward again, three times: 0 failed
               requests allowed
    clock_2s   step a node's wall clock back 2 s, then forward again; one time
               in three the node is killed (-9) while behind and restarted
               with the clock still 2 s back
    clock_10m  step a node's wall clock back 10 min: it must refuse to serve
               snowflake IDs, and a restart while behind must exit 1; then
               the clock is put right and the node restarted

Every kind comes once per rotation (a 60 s run sees all of them, the 10-min
step early in the first rotation; later rotations hold it one time in
three). Operator errors come on a side track of the seed (chaos_identity.py),
so a seed's main faults are the same as before they existed:

    twin       start a second leafd with a live node's identity (its
               leaf.snowflake.port and advertise ip, its own HTTP port and
               data dir): it must issue no ID, answer /health 200 and /ready
               503, and exit 1 within the session timeout + 2 s naming the
               identity; the live node must not see an error (5-15 s in,
               then every 20-30 s)
    seq_bump   write the sequence's record in ZooKeeper with a higher max
               behind the primary's back: it must serve strictly above it
               within the session timeout + 2 s (3-12 s in, then every
               12-20 s)
 How the schedule is drawn, and which errors each fault may cause:
chaos_faults.py. After the last fault has ended and a quiet period passed,
the clients stop, the nodes are stopped with SIGTERM (exit 0 expected, no
sanitizer report in their logs) and every ID every client received is
checked (chaos_verify.py): no duplicate per mode (snowflake across all
nodes, segment per tag across all nodes), snowflake IDs strictly increasing
per node run (per client in receive order, across clients in real time,
and across restarts), segment IDs ascending per node run, no snowflake ID
beyond the node's clock + reserve.ms + 1 s, one distinct worker ID per
node, every client error inside a fault window that explains it, and every
node serving both modes again at the end. Four more client processes (two
HTTP, two RESP) take keyed IDs of many keys of a space with a small step,
following redirects: the order checker over their calls (0 violations, 0
repeats) and the failover jump bound (chaos_keyed.py).

--lease runs the lease-mode node set (docs/cluster.md, "Worker-ID leases"): the nodes use
leafd.snowflake.worker.mode = lease with a 4 s ZooKeeper session, each
through its own blackholable proxies to the ensemble (chaos_cluster.py), and
the faults are those above, adapted (chaos_lease.py), plus one:

    partition  cut a node off from ZooKeeper for longer than its session;
               another node may restart with a new identity whose local
               cache names the cut-off node's slot and take it; the cut-off
               node serves only up to its ceiling, then refuses, and claims
               a slot again after the heal
    kill9, sigterm  the node may come back with a new identity: an empty
               data dir, or one whose cache names another node's free slot
    clock_2s, clock_10m  the node switches slot: 503s only around the step
               and around putting it right; a restart while 10 min behind
               must start, not refuse
    seq_bump   as above (no twin: a lease node's identity holds no worker
               ID, and restarts with new identities are already faults)

Every kind comes once per rotation, the 10-min step in every one, and the
first rotation opens with the partition and the clock steps (a 45 s run has
about 7 faults). The checks drop "one worker ID per node" and "across
restarts", keep the rest per (node run, worker ID), and add the fence: per
worker ID, every holder's first ID is above everything earlier holders
issued (chaos_verify.py); the end state is every node holding its own slot.

Prints a summary (seed, IDs checked per mode, faults per kind, errors by
code) and exits 0; on failure also the full fault log, the failed checks
and the replay command, keeps the temp dir (server logs) and exits 1.
Needs LEAFD_BIN and ZK_EXPIRE_BIN (tools/checks/chaos and ctest set them).
"""
import argparse
import collections
import json
import os
import random
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "lib")]

import leafdtest  # noqa: E402
import chaos_client_lib  # noqa: E402
from chaos_clients import Client  # noqa: E402
from chaos_cluster import Cluster  # noqa: E402
from chaos_faults import FaultLog, Scheduler, kinds_of, make_schedule  # noqa: E402
from chaos_keyed import STEP as KEYED_STEP, KeyedClients  # noqa: E402
from chaos_verify import Verdict, verify  # noqa: E402
from zkhelpers import FAKETIME_LIB, cli_list  # noqa: E402

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer")


def say(text):
    print("chaos: " + text, flush=True)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long faults are injected")
    ap.add_argument("--seed", type=int, default=None, help="schedule seed (default $CHAOS_SEED or random)")
    ap.add_argument("--clients", type=int, default=4, help="client threads")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir even when the run passes")
    ap.add_argument("--lease", action="store_true", help="the lease-mode node set (worker-ID leases)")
    ap.add_argument("--galera", action="store_true",
                    help="segments on a three-node Galera cluster; db_kill kills one member")
    a = ap.parse_args()
    if a.seed is None:
        env = os.environ.get("CHAOS_SEED", "").strip()
        a.seed = int(env) if env else random.SystemRandom().randrange(1, 10 ** 9)
    return a


def preflight():
    missing = []
    if not os.path.exists(leafdtest.LEAFD_BIN):
        missing.append("leafd binary (LEAFD_BIN=%s)" % leafdtest.LEAFD_BIN)
    if not os.path.exists(os.environ.get("ZK_EXPIRE_BIN", "")):
        missing.append("zk_expire (ZK_EXPIRE_BIN)")
    if not os.path.exists(FAKETIME_LIB):
        missing.append("libfaketime (%s; apt-get install faketime)" % FAKETIME_LIB)
    if missing:
        say("missing: " + ", ".join(missing))
        sys.exit(1)


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


class Watchdog(threading.Thread):
    """Bounds the whole run: past the budget it prints the fault log and
    interrupts the main thread (cleanup runs); 30 s later it exits hard
    (the sentinel still kills the servers)."""

    def __init__(self, budget, flog_ref):
        super().__init__(name="watchdog", daemon=True)
        self.budget = budget
        self.flog_ref = flog_ref
        self.done = threading.Event()

    def run(self):
        if self.done.wait(self.budget):
            return
        say("WATCHDOG: the run exceeded its budget of %.0f s; fault log so far:" % self.budget)
        flog = self.flog_ref[0]
        for line in (flog.lines if flog else []):
            print("  " + line, flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        if not self.done.wait(60):
            say("WATCHDOG: cleanup did not finish; exiting")
            os._exit(3)


def check_logs(cluster, verdict):
    for n in cluster.nodes:
        try:
            with open(n.log_path(), "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        for mark in SANITIZER_MARKS:
            i = text.find(mark)
            if i >= 0:
                verdict.bad("sanitizers", "%s log has %r:\n%s" % (n.name, mark, text[i - 200:i + 3000]))
                break


def main():
    args = parse_args()
    preflight()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    replay = "tools/checks/chaos%s%s --seconds %g --seed %d" % (
        " --lease" if args.lease else "", " --galera" if args.galera else "", args.seconds, args.seed)
    say("seed %d, %g s of faults, %d clients, %s mode, leafd %s" % (
        args.seed, args.seconds, args.clients, "lease" if args.lease else "forever",
        leafdtest.LEAFD_BIN))
    say("replay: " + replay)
    schedule = make_schedule(args.seed, args.seconds, args.lease)
    kinds = collections.Counter(f.kind for f in schedule)
    say("schedule: %d faults: %s" % (len(schedule), " ".join("%s=%d" % (k, kinds[k])
                                                             for k in kinds_of(args.lease))))

    flog_ref = [None]
    wd = Watchdog(args.seconds + 320, flog_ref)
    wd.start()
    cluster = Cluster(lease=args.lease, galera=args.galera)
    verdict = Verdict()
    failed = True
    stop = threading.Event()
    clients, sched, flog, keyed = [], None, None, None
    try:
        t_setup = time.time()
        cluster.start(say)
        say("cluster up in %.1f s (%s); workers: %s" % (
            time.time() - t_setup, cluster.dir,
            ", ".join("%s=%s" % (n.name, _worker(n)) for n in cluster.nodes)))
        t_start = time.time()
        flog = FaultLog(t_start)
        flog_ref[0] = flog
        clients = [Client(i, cluster.nodes, cluster.fresh_tags, args.seed, stop) for i in range(args.clients)]
        for c in clients:
            c.start()
        lib = chaos_client_lib.start(cluster, args.seed, stop, say)
        keyed = KeyedClients(cluster, args.seconds, say)
        keyed.start()
        sched = Scheduler(cluster, schedule, t_start, args.seconds, flog)
        sched.start()
        while time.time() - t_start < args.seconds:
            time.sleep(0.2)
        sched.join(60)
        still = sched.wait_episodes(180)
        for f in still:
            sched.fail(f, "episode still running 180 s after the end (a hang?)")
        # Quiet period: past every fault window, every node must serve again.
        with sched.lock:
            last_end = max([w.end for w in sched.windows] + [time.time()])
        deadline = min(last_end, time.time() + 15)
        while time.time() < deadline:
            time.sleep(0.1)
        q0 = time.time()
        time.sleep(3.0)
        q1 = time.time()
        sched.stop_flag.set()
        stop.set()
        for c in clients:
            c.join(30)
        keyed.stop()
        t_end = time.time()
        say("load stopped; %.1f s of faults + %.1f s of recovery" % (args.seconds,
                                                                       t_end - t_start - args.seconds))
        (final_lease_state if args.lease else final_state)(cluster, verdict)
        opaque_plain = decode_opaque(cluster, clients)
        for name, (rc, secs, hung) in cluster.stop_nodes().items():
            if hung or rc != 0:
                verdict.bad("graceful stop at the end", "%s exited %s after SIGTERM (%.1f s, hung=%s)"
                            % (name, rc, secs, hung))
        check_logs(cluster, verdict)
        for text in sched.failures:
            verdict.bad("fault episodes", text)
        t_v = time.time()
        verdict, stats = verify(clients, cluster.nodes, sched.windows, cluster.reserve_ms,
                                (q0, q1), verdict, opaque_plain,
                                lease=sched if args.lease else None, extra=sched)
        chaos_client_lib.check(lib, clients, verdict, say)
        keyed.check(verdict, sched.windows, stats)
        say("checks took %.1f s" % (time.time() - t_v))
        summary(args, sched, stats, t_end - t_start)
        small_steps_summary(sched, clients, verdict)
        identity_summary(sched, stats)
        if args.lease:
            lease_summary(sched, stats)
        for note in verdict.notes:
            say("note: " + note)
        if sched.incidents:
            say("environment incidents (not leafd): %s" % "; ".join(sched.incidents))
        failed = not verdict.ok()
    except SystemExit as e:
        say("interrupted (%s)" % e)
        verdict.bad("run completed", "interrupted: %s" % e)
    except Exception:  # noqa: BLE001 - report, clean up, fail
        import traceback
        verdict.bad("run completed", traceback.format_exc())
    finally:
        stop.set()
        if sched:
            sched.stop_flag.set()
        if keyed:
            keyed.stop()
        if failed:
            report_failure(args, replay, flog, verdict, cluster)
        else:
            say("PASS (seed %d)" % args.seed)
        cluster.close(keep=failed or args.keep)
        wd.done.set()
    sys.exit(1 if failed else 0)


def decode_opaque(cluster, clients, batch=1000):
    """Every opaque ID received, decoded by a live node through GET /decodeOpaqueId
    (pipelined): {opaque ID: segment ID, or None when it did not decode}."""
    wanted = sorted({x for c in clients for (n, run, mode, tag, t0, t1, ids) in c.ok
                     if mode == "opaque" for x in ids})
    out = dict.fromkeys(wanted)
    node = next((n for n in cluster.nodes if n.leafd.proc and n.leafd.proc.alive()), None)
    if node is None or not wanted:
        return out
    s = leafdtest.HttpStream(node.port, timeout=30)
    try:
        for i in range(0, len(wanted), batch):
            chunk = wanted[i:i + batch]
            s.send(b"".join(leafdtest.get_request("/decodeOpaqueId?id=%d" % x) for x in chunk))
            for x, (st, _, body) in zip(chunk, s.read_responses(len(chunk))):
                if st == 200:
                    out[x] = int(json.loads(body)["segment_id"])
    finally:
        s.close()
    say("decoded %d opaque IDs through %s" % (sum(v is not None for v in out.values()), node.name))
    return out


def final_state(cluster, verdict):
    """After the faults: every node ready and back in ZooKeeper (session
    connected, ephemeral node present), and ZooKeeper holds exactly one
    leaf_forever and one leaf_temporary node per node (no re-registration)."""
    def settled(n):
        try:
            st, r = n.ready_json()
        except OSError:
            return None
        z = r.get("snowflake", {}).get("zookeeper", {})
        return (st, r) if st == 200 and z.get("session") == "connected" and z.get("ephemeral") else None
    _settle(cluster, verdict, settled, "back in ZooKeeper")
    zk = next((z for z in cluster.zks if z.serving()), None)
    if zk is None:
        verdict.bad("nodes settle after the faults", "no ZooKeeper server serving at the end")
        return
    for kind in ("leaf_forever", "leaf_temporary"):
        kids = cli_list(zk, "/snowflake/chaos/" + kind)
        if kids is None or len(kids) != len(cluster.nodes):
            verdict.bad("nodes settle after the faults", "/snowflake/chaos/%s holds %s, expected "
                        "one per node" % (kind, kids))
    say("end state: all nodes ready, sessions connected, ZooKeeper: %d leaf_forever, %d "
        "leaf_temporary" % (len(cli_list(zk, "/snowflake/chaos/leaf_forever") or []),
                            len(cli_list(zk, "/snowflake/chaos/leaf_temporary") or [])))


def _settle(cluster, verdict, settled, what):
    """Waits up to 30 s for each node to be settled(n); a node that is not fails the check."""
    for n in cluster.nodes:
        if not leafdtest.wait_until(lambda: settled(n), 30, interval=0.2):
            try:
                st, r = n.ready_json()
            except OSError as e:
                st, r = 0, repr(e)
            verdict.bad("nodes settle after the faults", "%s not ready and %s 30 s after the "
                        "last fault: %s %s" % (n.name, what, st, r))


def final_lease_state(cluster, verdict):
    """Lease mode, after the faults: every node ready, its session connected,
    holding a slot (state held), no two nodes on the same slot; ZooKeeper's
    slot count is reported (slots are created lazily and never deleted)."""
    def settled(n):
        try:
            st, r = n.ready_json()
        except OSError:
            return None
        sf = r.get("snowflake", {})
        ok = (st == 200 and sf.get("zookeeper", {}).get("session") == "connected" and
              sf.get("lease", {}).get("state") == "held")
        return (st, r) if ok else None
    _settle(cluster, verdict, settled, "holding a slot")
    slots = {n.name: n.lease().get("slot") for n in cluster.nodes}
    if len(set(slots.values())) != len(slots):
        verdict.bad("nodes settle after the faults", "nodes share a slot at the end: %s" % slots)
    zk = next((z for z in cluster.zks if z.serving()), None)
    kids = cli_list(zk, "/snowflake/chaos/leaf_lease") if zk else None
    say("end state: all nodes ready, sessions connected, slots held: %s; ZooKeeper has %s slots"
        % (", ".join("%s=%s" % kv for kv in slots.items()), len(kids) if kids is not None else "?"))


def _worker(n):
    try:
        return n.ready_json()[1]["snowflake"]["worker_id"]
    except Exception:  # noqa: BLE001 - only for the log line
        return "?"


def small_steps_summary(sched, clients, verdict):
    """Failed requests on a node while its clock was stepped back within the
    bounded lead (clock_small): none allowed (docs/reference/guarantees.md, "The bounded lead").
    A failure that another fault's window explains (a kill -9 of the same node that the
    scheduler started within the step's grace) is that fault's, and is not counted here."""
    fails, other, shown = 0, 0, []
    for (idx, step, t0, t1) in sched.small_steps:
        for c in clients:
            for (n, run, mode, tag, a, b, code, d) in c.errors:
                if n != idx or mode != "snowflake" or a > t1 or b < t0:
                    continue
                if any(w.explains(n, mode, code, a, b) for w in sched.windows):
                    other += 1
                    continue
                fails += 1
                if len(shown) < 5:
                    shown.append("client %d, n%d run %d, sent %.3f answered %.3f (step %.0f ms, "
                                 "%.3f-%.3f): %s %s" % (c.idx, n, run, a, b, step * 1000, t0, t1,
                                                       code, d))
    steps = ", ".join("%.0f ms" % (s * 1000) for (_, s, _, _) in sched.small_steps)
    say("small clock steps (10 ms-4 s): %d (%s), failed snowflake requests during them: %d "
        "(and %d explained by another fault on the node)"
        % (len(sched.small_steps), steps or "none", fails, other))
    if fails:
        verdict.bad("no failure during small clock steps",
                    "%d snowflake requests failed while a clock was stepped back within the lead"
                    % fails)
        for e in shown:
            verdict.bad("no failure during small clock steps", "  " + e)


def identity_summary(sched, stats):
    """The operator errors' figures (chaos_identity.py)."""
    if sched.twins:
        say("twins: %d started, exit codes %s after %s s, asked %d times, %d IDs issued (must be 0)"
            % (len(sched.twins), [t["rc"] for t in sched.twins],
               "/".join("%.1f" % t["seconds"] for t in sched.twins),
               sum(t["asked"] for t in sched.twins), stats.get("twin_ids", 0)))
    done = [b for b in sched.bumps if not b.get("not_written")]
    if sched.bumps:
        say("sequence bumps: %d written (%d writes did not take), first ID above the written max "
            "after %s s" % (len(done), len(sched.bumps) - len(done), ", ".join(
                "?" if b["seconds"] is None else "%.2f%s" % (
                    b["seconds"], " (overlapped)" if b["overlapped"] else "") for b in done)))


def summary(args, sched, stats, elapsed):
    say("==== summary ====")
    say("seed %d; %g s of faults, %.1f s in all; %d client threads" % (args.seed, args.seconds, elapsed,
                                                                         args.clients))
    per_tag = ", ".join("%s %d" % kv for kv in sorted(stats["segment_ids_per_tag"].items()))
    say("IDs checked: snowflake %d, segment %d (%s; ranges included), opaque %d (decoded into "
        "segment/chaos), sequence %d (strictly increasing across nodes)"
        % (stats["snowflake_ids"], stats["segment_ids"], per_tag, stats.get("opaque_ids", 0),
           stats.get("sequence_ids", 0)))
    if "keyed_calls" in stats:
        jump, key, faults = stats["keyed_jump"]
        say("keyed (chaos_keyed.py, step %d): %d calls answered, %d IDs, %d failed calls; largest "
            "first ID above its section's highest: %d (%s, %d faults between)"
            % (KEYED_STEP, stats["keyed_calls"], stats["keyed_ids"], stats["keyed_failed"], jump,
               key, faults))
    kinds = kinds_of(args.lease)
    inj = collections.Counter(f.kind for f in sched.injected)
    say("faults injected: %d: %s" % (len(sched.injected), " ".join("%s=%d" % (k, inj[k]) for k in kinds)))
    missing = [k for k in kinds if not inj[k]]
    if missing and args.seconds >= 60:
        say("note: kinds not injected this run: %s" % ", ".join(missing))
    errs = sum(stats["errors"].values())
    rate = 100.0 * errs / max(1, stats["requests"])
    say("requests %d, errors %d (%.2f %%): %s" % (stats["requests"], errs, rate,
                                                  _fmt(stats["errors"]) or "none"))
    say("unexplained errors (outside fault windows): %s" % (_fmt(stats["unexplained"]) or "0"))
    say("worker IDs: %s; max snowflake lead over the node's own clock at receipt: %s" % (
        ", ".join("%s=%s" % (k, v[0] if len(v) == 1 else v) for k, v in stats["workers"].items()),
        ", ".join("%s %+.0f ms" % kv for kv in stats["lead_ms"].items())))


def lease_summary(sched, stats):
    fence = stats.get("fence", {})
    say("lease: %d holder segments over %d worker IDs, %d worker IDs held by more than one node "
        "(%d handovers between nodes); takeovers during a partition %d, adopted slots %d of %d "
        "tried" % (fence.get("segments", 0), fence.get("workers", 0), fence.get("shared", 0),
                   fence.get("handovers", 0), len(sched.takeovers),
                   sum(1 for _, want, got in sched.adoptions if want == got), len(sched.adoptions)))
    spans = stats.get("switch_spans", [])
    if spans:
        say("lease: 503 spans around clock steps, each from the first refusal to the last "
            "(ms; transitions not overlapping another fault on the node): %s"
            % ", ".join("%s %.0f" % (label.split(" ", 2)[2], s * 1000) for label, s in spans))


def _fmt(d):
    return " ".join("%s=%d" % kv for kv in d.items())


def report_failure(args, replay, flog, verdict, cluster):
    # The failed checks come last, after the fault log: a CI page that keeps
    # only the head and the tail of the output still shows what failed.
    say("==== FAIL (seed %d) ====" % args.seed)
    say("fault log:")
    for line in (flog.lines if flog else []):
        print("  " + line, flush=True)
    for check_name, texts in verdict.problems.items():
        say("failed check: %s" % check_name)
        for t in texts[:40]:
            print("    " + t.replace("\n", "\n    "), flush=True)
        if len(texts) > 40:
            print("    ... %d more" % (len(texts) - 40), flush=True)
    say("server logs kept in %s" % cluster.dir)
    say("replay: %s" % replay)
    # One line with the verdict, last: tools/test repeats it as the test's reason.
    first = "; ".join("%s: %s" % (name, " ".join(texts[0].split())[:200])
                      for name, texts in list(verdict.problems.items())[:3])
    print("FAILED: chaos seed %d, %d failed check(s): %s (replay: %s; logs in %s)" % (
        args.seed, len(verdict.problems), first, replay, cluster.dir), flush=True)


if __name__ == "__main__":
    main()
