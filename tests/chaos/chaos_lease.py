"""The lease set's fault episodes (chaos.py --lease), mixed into the Scheduler.

In lease mode (docs/cluster.md, "Worker-ID leases") a node's worker ID is a slot it holds in
ZooKeeper, fenced by the slot's "reserved". The episodes differ from the
forever set where the expected behaviour does:

- kill9 / sigterm: the node may come back with a new identity, with an empty
  data dir or with a local cache naming a free slot another node held
  (adopt): the worker ID passes between nodes.
- expire: the node loses its slot, issues only below its ceiling, claims
  again (its own slot, with a floor up to reserve.ms ahead) and serves again:
  snowflake 503s on that node until then.
- zk_all: no node can extend its reservation: once reserve.ms has run out,
  snowflake 503s everywhere until ZooKeeper is back and the nodes hold slots.
- zk_one: a node connected to the killed server must reconnect and extend
  its reservation before it runs out; brief snowflake 503s are allowed until
  every node serves again.
- clock_2s / clock_10m: a step back of more than switch.after.ms moves the
  node to another slot: 503s only around the step (and around putting the
  clock right, since libfaketime switches thread by thread, up to SETTLE_S
  apart), never for the whole hold. A restart while 10 minutes behind must
  start (on a slot whose reservation is below its clock), not refuse.
- partition: every proxy between the node and ZooKeeper is blackholed for
  longer than the session; another node restarted with a new identity whose
  cache names the cut-off node's slot takes it (takeover); the cut-off node
  keeps serving only until its ceiling, then refuses, and after the heal
  claims a slot again and serves without a restart.
Error windows name the codes a lease node answers while it cannot issue.
"""
import os
import re
import signal
import subprocess
import time

from chaos_cluster import SETTLE_S
from chaos_verify import EPOCH
from leafdtest import http

# What a lease node answers while it cannot issue (no slot, ceiling reached,
# clock behind the slot's floor, a switch in progress).
LEASE_CODES = {"not_ready", "clock_backwards", "overloaded"}
# 503s around one clock transition: libfaketime's per-thread lag (SETTLE_S),
# one switch blocked for 1 s after another (LEASE_SWITCH_BLOCK_MS), and the
# claim itself.
SWITCH_S = SETTLE_S + 2.8
GRACE = 3.0
# After a fault that may make a node claim its own slot again (an expiry, a
# partition, ZooKeeper down), its floor is its old reservation, up to
# reserve.ms ahead of the clock: /ready may say ready while requests are still
# refused (clock_backwards) until the clock passes it.
RECLAIM_S = 6.0


class LeaseEpisodes:
    """Lease-mode episodes; needs the Scheduler's c, log, fail, window, lock,
    busy, _restart, _wait, ep_* and sequence_window."""

    def __init__(self):
        self.slot_seen = {}     # slot -> (node idx, last time seen held)
        self.node_slot = {}     # node idx -> slot at the last look
        self.partitions = []    # (node idx, run, slot, cut, healed)
        self.switch_windows = []  # (node idx, start, end, label, fault id): 503 spans
        self.takeovers = []     # (fault id, slot, from node, to node)
        self.adoptions = []     # (fault id, slot wanted, slot got)

    # ---- bookkeeping ----------------------------------------------------

    def track_slots(self):
        """Monitor thread: which slot each live node holds now."""
        now = time.time()
        for n in self.c.nodes:
            if not n.alive():
                self.node_slot.pop(n.idx, None)
                continue
            lease = n.lease()
            slot = lease.get("slot")
            if lease.get("state") == "held" and isinstance(slot, int) and slot >= 0:
                self.node_slot[n.idx] = slot
                self.slot_seen[slot] = (n.idx, now)
            else:
                self.node_slot.pop(n.idx, None)

    def _adoptable(self, n):
        """A slot another node held and nobody holds now (the most recently
        left), or None."""
        held = set(self.node_slot.values())
        now = time.time()
        best = None
        for slot, (idx, seen) in self.slot_seen.items():
            if idx == n.idx or slot in held or now - seen < 1.0:
                continue
            if best is None or seen > best[1]:
                best = (slot, seen, idx)
        return best

    def _switch_window(self, f, n, start, label, until=None, switched=None):
        """Refusals on n for SWITCH_S after a clock transition at start, or
        until the next transition (until) if that comes first. A switch starts
        at the first request refused for the clock, which may come later than
        the step when no client asked the node meanwhile: switched, when
        given, is when the node was seen serving again after it, and the
        window lasts at least until SETTLE_S after that."""
        end = start + SWITCH_S
        if switched is not None:
            end = max(end, switched + SETTLE_S)
        if until is not None:
            end = min(end, until)
        self.window(f, (n.idx,), ("snowflake",), LEASE_CODES, start, end)
        with self.lock:
            self.switch_windows.append((n.idx, start, end, "#%d %s %s" % (f.id, f.kind, label),
                                        f.id))

    def _wait_ready(self, nodes, timeout):
        """Waits until every node's snowflake mode is ready; the time, or None."""
        ok = self._wait(lambda: all(n.snowflake_ready() for n in nodes), timeout)
        return time.time() if ok else None

    def _take_other(self, a):
        """Takes another node's resource if one is free; its index or None."""
        with self.lock:
            for k in range(1, len(self.c.nodes)):
                i = (a.idx + k) % len(self.c.nodes)
                if "node%d" % i not in self.busy:
                    self.busy.add("node%d" % i)
                    return i
        return None

    # ---- restarts ---------------------------------------------------------

    def _lease_restart(self, f, sig, why):
        n = self.c.nodes[f.target]
        how = f.params.get("identity", "same")
        t = time.time()

        def prepare():
            if how == "same":
                return
            pick = self._adoptable(n) if how == "adopt" else None
            ident = self.c.new_identity(n, pick[0] if pick else None)
            if pick:
                self.log("#%d %s comes back as %s, its local cache naming slot %d (held last by "
                         "%s, %.1f s ago)" % (f.id, n.name, ident, pick[0],
                                              self.c.nodes[pick[2]].name, time.time() - pick[1]))
            else:
                self.log("#%d %s comes back as %s with an empty data dir%s"
                         % (f.id, n.name, ident, " (no slot of another node free)"
                            if how == "adopt" else ""))
            prepare.pick = pick
        prepare.pick = None
        r = self._restart(f, n, sig, f.params["pause"], why, prepare)
        got = n.lease().get("slot")
        if prepare.pick:
            with self.lock:
                self.adoptions.append((f.id, prepare.pick[0], got))
        self.log("#%d %s run %d holds slot %s" % (f.id, n.name, n.run, got))
        self.window(f, (n.idx,), ("snowflake", "segment"), None, t, r + GRACE)

    def lease_kill9(self, f):
        self._lease_restart(f, signal.SIGKILL, "after kill -9")

    def lease_sigterm(self, f):
        self._lease_restart(f, signal.SIGTERM, "after SIGTERM")

    # ---- ZooKeeper --------------------------------------------------------

    def lease_expire(self, f):
        n = self.c.nodes[f.target]
        lease = n.lease()
        t = time.time()
        sid = self._owner_session(lease.get("slot"))
        if not sid:
            self.log("#%d %s: no owner session found for slot %s; nothing to expire"
                     % (f.id, n.name, lease.get("slot")))
            return
        claims = n.lease().get("claims", 0)
        r = subprocess.run([os.environ["ZK_EXPIRE_BIN"], self.c.zk_address(), sid,
                            str(f.params.get("linger", 0))],
                           capture_output=True, text=True, timeout=60)
        out = (r.stdout.strip().splitlines() or [""])[-1]
        self.log("#%d expire session %s of %s (the owner of slot %s): rc=%d %s"
                 % (f.id, sid, n.name, lease.get("slot"), r.returncode, out))
        # The node learns of the expiry on its next contact; then it claims again.
        self._wait(lambda: n.lease().get("claims", 0) > claims, 15)
        r = self._wait_ready([n], 30)
        if r is None:
            self.fail(f, "%s not serving snowflake IDs 30 s after its session expired; lease %s; "
                      "log tail:\n%s" % (n.name, n.lease(), n.log_tail()))
            r = time.time()
        self.log("#%d %s serving again, slot %s" % (f.id, n.name, n.lease().get("slot")))
        self.window(f, (n.idx,), ("snowflake",), LEASE_CODES, t, r + RECLAIM_S)

    def _owner_session(self, slot):
        """The session that owns the slot's owner node (ephemeralOwner), hex:
        a node has several sessions (snowflake, sequences, the survey), and
        this is the one that holds its worker ID."""
        zk = next((z for z in self.c.zks if z.serving()), None)
        if zk is None or not isinstance(slot, int):
            return None
        out = zk.cli("stat", "/snowflake/chaos/leaf_lease/%010d/owner" % slot)
        m = re.search(r"ephemeralOwner = (0x[0-9a-f]+)", out)
        return m.group(1) if m and m.group(1) != "0x0" else None

    def lease_zk_one(self, f):
        """One server killed: a node connected to it reconnects to another
        (sessions survive). A lease node must extend its reservation within
        what is left of it (reserve.ms / 2 to reserve.ms); a reconnect under
        load was measured at 2 s (seed 9), so brief snowflake 503s on any
        node are allowed until every node serves again."""
        z = self.c.zks[f.target]
        t = time.time()
        z.stop()
        self.log("#%d ZooKeeper %s stopped (kill -9)" % (f.id, z.name))
        time.sleep(min(f.params["hold"], self.c.session_ms / 1000.0))
        r = self._wait_ready(self.c.nodes, 30)
        if r is None:
            self.fail(f, "not every node serves snowflake IDs 30 s after one ZooKeeper server "
                      "stopped: %s" % {n.name: _brief(n.lease()) for n in self.c.nodes})
            r = time.time()
        self.window(f, self.all_nodes, ("snowflake",), LEASE_CODES, t, r + RECLAIM_S)
        time.sleep(max(0.0, t + f.params["hold"] - time.time()))
        self.restart_zk(f, z, t)

    def lease_zk_all(self, f):
        t = time.time()
        self.ep_zk_all(f)
        r = self._wait_ready(self.c.nodes, 40)
        if r is None:
            self.fail(f, "not every node serves snowflake IDs 40 s after the ensemble came back: %s"
                      % {n.name: n.lease() for n in self.c.nodes})
            r = time.time()
        self.window(f, self.all_nodes, ("snowflake",), LEASE_CODES, t, r + RECLAIM_S)

    def lease_partition(self, f):
        a = self.c.nodes[f.target]
        slot = a.lease().get("slot")
        run = a.run
        t = time.time()
        for p in a.proxies:
            p.blackhole()
        self.log("#%d %s cut off from ZooKeeper (its %d proxies blackholed), holding slot %s"
                 % (f.id, a.name, len(a.proxies), slot))
        bi = None
        try:
            # ZooKeeper expires the session (server side: timeout + a tick).
            time.sleep(self.c.session_ms / 1000.0 + 1.5)
            if f.params["takeover"] and isinstance(slot, int):
                bi = self._take_other(a)
                if bi is None:
                    self.log("#%d no other node free: no takeover" % f.id)
                else:
                    self._takeover(f, self.c.nodes[bi], slot, a)
            # A serves only up to its ceiling (acknowledged before the cut).
            limit = t + self.c.reserve_ms / 1000.0 + 3.0
            refused = self._wait(lambda: _refuses(a), max(0.5, limit - time.time()))
            if refused:
                self.log("#%d %s refuses snowflake IDs (its ceiling reached), %.1f s after the cut"
                         % (f.id, a.name, time.time() - t))
            else:
                self.fail(f, "%s still serves snowflake IDs %.1f s after it was cut off from "
                          "ZooKeeper (reserve.ms %d)" % (a.name, time.time() - t, self.c.reserve_ms))
            time.sleep(f.params["hold"])
        finally:
            healed = time.time()
            for p in a.proxies:
                p.heal()
            with self.lock:
                self.partitions.append((a.idx, run, slot, t, healed))
        self.log("#%d %s partition healed after %.1f s" % (f.id, a.name, healed - t))
        r = self._wait_ready([a], 30)
        if r is None:
            self.fail(f, "%s not serving snowflake IDs 30 s after the partition healed; lease %s; "
                      "log tail:\n%s" % (a.name, a.lease(), a.log_tail()))
            r = time.time()
        else:
            self.log("#%d %s serving again %.1f s after the heal, slot %s"
                     % (f.id, a.name, r - healed, a.lease().get("slot")))
        self.window(f, (a.idx,), ("snowflake",), LEASE_CODES, t, r + RECLAIM_S)
        self.sequence_window(f, t)
        if bi is not None:
            with self.lock:
                self.busy.discard("node%d" % bi)

    def _takeover(self, f, b, slot, a):
        """Restarts b with a new identity whose local cache names a's slot."""
        t = time.time()

        def prepare():
            ident = self.c.new_identity(b, slot)
            self.log("#%d %s comes back as %s, its local cache naming %s's slot %d"
                     % (f.id, b.name, ident, a.name, slot))
        r = self._restart(f, b, signal.SIGKILL, 0.0, "new identity, takes over slot %d" % slot,
                          prepare)
        got = b.lease().get("slot")
        if got == slot:
            with self.lock:
                self.takeovers.append((f.id, slot, a.idx, b.idx))
            self.log("#%d %s took %s's slot %d while %s is cut off" % (f.id, b.name, a.name, slot,
                                                                       a.name))
        else:
            self.log("#%d %s holds slot %s, not %s's slot %d (still owned?)"
                     % (f.id, b.name, got, a.name, slot))
        self.window(f, (b.idx,), ("snowflake", "segment"), None, t, r + GRACE)

    # ---- clock steps ------------------------------------------------------

    def lease_clock_2s(self, f):
        n = self.c.nodes[f.target]
        t = time.time()
        n.set_offset(-2)
        if not f.params.get("crash"):
            time.sleep(f.params["hold"])
        else:
            time.sleep(f.params["hold"] / 2)
            r = self._restart(f, n, signal.SIGKILL, 0.0, "after kill -9, clock still 2 s back")
            self.log("#%d %s run %d holds slot %s" % (f.id, n.name, n.run, n.lease().get("slot")))
            self.window(f, (n.idx,), ("snowflake", "segment"), None, t, r + GRACE)
        t_right = time.time()
        n.set_offset(0)
        self._switch_window(f, n, t, "step back", t_right)
        self._switch_window(f, n, t_right, "put right")
        self.log("#%d %s lease after the step: %s" % (f.id, n.name, _brief(n.lease())))

    def lease_clock_10m(self, f):
        """Ten minutes back: the node moves to a slot below its clock and
        keeps serving (503s only around the step); a restart while behind
        starts on such a slot; the clock put right costs another brief
        window at most."""
        n = self.c.nodes[f.target]
        # One ID now, so that the slot has issued at the current time: a
        # node that issued nothing since its start (clients busy elsewhere)
        # may rightly serve a stepped-back clock from a fresh slot.
        _probes(n, 1)
        before = n.lease()
        t = time.time()
        n.set_offset(-600)
        time.sleep(f.params["hold"])
        # A request refused for the clock is what starts a switch: probe.
        ok = self._wait(lambda: _probes(n, 1)[0][0] == 200, max(0.5, t + SWITCH_S - time.time()))
        t_ok = time.time()
        after = n.lease()
        self.log("#%d %s with the clock 10 min back: lease %s -> %s"
                 % (f.id, n.name, _brief(before), _brief(after)))
        if not ok or after.get("switches", 0) <= before.get("switches", 0):
            self.fail(f, "%s did not switch slot and serve with its clock 10 min behind "
                      "(ready=%s): lease before %s, after %s; probes: %s; /ready: %s"
                      % (n.name, ok, before, after, _probes(n), _ready_text(n)))
        if f.params.get("restart"):
            sig = signal.SIGKILL if f.params["stop"] == "SIGKILL" else signal.SIGTERM
            t_stop = time.time()
            r = self._restart(f, n, sig, 0.0, "clock still 10 min back: takes a slot below it")
            self.log("#%d %s run %d started with its clock 10 min behind, slot %s"
                     % (f.id, n.name, n.run, n.lease().get("slot")))
            self.window(f, (n.idx,), ("snowflake", "segment"), None, t_stop, r + GRACE)
        t_right = time.time()
        n.set_offset(0)
        self._switch_window(f, n, t, "step back", t_right, switched=t_ok)
        self._switch_window(f, n, t_right, "put right")


def _refuses(n):
    try:
        return http(n.port, "/api/snowflake/get/chaos.probe", timeout=2)[0] == 503
    except OSError:
        return False


def _probes(n, k=3):
    """What the node answers now: (status, worker, ms) of k snowflake requests."""
    out = []
    for _ in range(k):
        try:
            st, body, _ = http(n.port, "/api/snowflake/get/chaos.probe", timeout=2)
            i = int(body) if st == 200 else None
            out.append((st, (i >> 12) & 1023, (i >> 22) + EPOCH) if i else (st, body[:80]))
        except (OSError, ValueError) as e:
            out.append(repr(e))
    return out


def _ready_text(n):
    try:
        return n.ready_json()[1].get("snowflake")
    except OSError as e:
        return repr(e)


def _brief(lease):
    return {k: lease.get(k) for k in ("slot", "state", "claims", "claims_lost", "switches",
                                      "switch_failures", "fence_failures")}
