"""Fault schedule, fault episodes and the scheduler of the chaos run.

The schedule is a pure function of (seed, seconds): a fault every 4-6 s,
kinds drawn from a shuffled deck that holds every kind once (fair rotation),
plus now and then an extra kind at random; the 10-minute clock step is in
the first deck (so every run of 60 s or more has one) and in one later deck
in three. Each fault names its target and its timings up front. At run time
a fault waits for the resources it needs (a node, ZooKeeper servers, the
database) to be free of the faults before it; a busy node is swapped for the
next free one. So a replay (`tools/checks/chaos --seed S`) injects the same faults
in the same order with the same parameters; only the exact timing of their
effects differs.

Each episode records an error window: which nodes and modes may fail, with
which codes, from the injection until recovery plus a grace period. Client
errors outside every window are "unexplained" and fail the run. Faults that
must not cause a single error (one ZooKeeper server, the whole ensemble,
a session expiry, a 3 ms clock step) open no window at all.
"""
import random
import signal
import subprocess
import os
import threading
import math
import time
import traceback

from chaos_identity import IdentityEpisodes, identity_kinds, identity_schedule
from chaos_lease import LeaseEpisodes
from zkhelpers import session_id

KINDS = ("kill9", "sigterm", "zk_one", "zk_all", "expire", "db_kill",
         "clock_small", "clock_2s", "clock_10m")
# Lease mode (chaos.py --lease) adds a partition between one node and ZooKeeper.
LEASE_KINDS = KINDS + ("partition",)
NODE_KINDS = ("kill9", "sigterm", "expire", "clock_small", "clock_2s", "clock_10m", "partition",
              "twin")
ANY = None
# A start that exits 1 for want of ZooKeeper: sequences, and in lease mode the
# slot (a start needs ZooKeeper; none claimed within 30 s).
NO_ZK_AT_START = ("cannot reach ZooKeeper", "lease mode needs ZooKeeper",
                  "no lease slot could be claimed")
# Seconds after recovery during which errors still count as the fault's.
GRACE_NODE = 3.0
GRACE_CLOCK = 1.0
GRACE_DB = 10.0
# Galera mode: after a member's kill -9 the survivors stall commits until it is
# evicted (suspect 2 s + the view change, measured ~3.5 s); the rejoin's state
# transfer desyncs its donor for a moment. Errors are explained only then.
GALERA_STALL = 4.0
GRACE_GALERA = 3.0


class Fault:
    def __init__(self, fid, t, kind, target, params):
        self.id = fid
        self.t = t
        self.kind = kind
        self.target = target
        self.params = params
        self.started = None
        self.ended = None

    def describe(self):
        p = " ".join("%s=%s" % (k, ("%.2f" % v) if isinstance(v, float) else v)
                     for k, v in sorted(self.params.items()))
        tgt = "" if self.target is None else " target=%d" % (self.target + 1)
        return "#%d %s%s %s" % (self.id, self.kind, tgt, p)


def _common_params(rng, kind):
    """The parameters both sets draw alike (in this order: replays depend on it)."""
    if kind in ("kill9", "sigterm"):
        return {"pause": rng.uniform(0.0, 2.0)}
    if kind in ("zk_one", "zk_all", "db_kill"):
        return {"hold": rng.uniform(1.0, 6.0)}
    if kind == "clock_small":
        # 10 ms to 4 s back, log-uniform: within leafd.snowflake.max.lead.ms
        # (5 s), so not one request may fail (docs/reference/guarantees.md, "The bounded lead")
        return {"steps": [round(math.exp(rng.uniform(math.log(0.010), math.log(4.0))), 3)
                          for _ in range(3)],
                "hold": rng.uniform(0.2, 1.0)}
    return {}


def kinds_of(lease):
    return (LEASE_KINDS if lease else KINDS) + identity_kinds(lease)


def make_schedule(seed, seconds, lease=False):
    """The faults of a run, in order of their time: the main track (a list
    of Fault, the same for a seed as before the side track existed) and the
    operator errors' side track (chaos_identity.py), merged."""
    main = make_lease_schedule(seed, seconds) if lease else make_main_schedule(seed, seconds)
    side = identity_schedule(seed, seconds, lease, len(main) + 1)
    return sorted(main + side, key=lambda f: f.t)


def make_main_schedule(seed, seconds):
    """The forever set's main track."""
    rng = random.Random("%s/schedule" % seed)
    faults = []
    t = rng.uniform(2.0, 4.0)
    last = max(seconds - 10.0, seconds * 0.8)
    deck = []
    decks = 0
    while t < last:
        if not deck:
            deck = [k for k in KINDS if k != "clock_10m"]
            if decks == 0 or rng.random() < 1.0 / 3:
                deck.append("clock_10m")
            if rng.random() < 0.4:
                deck.append(rng.choice([k for k in KINDS if k != "clock_10m"]))
            rng.shuffle(deck)
            if decks == 0 and "clock_10m" in deck[len(deck) // 2:]:
                # Early in the first deck: a 60 s run must reach it.
                i = deck.index("clock_10m")
                j = rng.randrange(len(deck) // 2)
                deck[i], deck[j] = deck[j], deck[i]
            decks += 1
        kind = deck.pop(0)
        target = rng.randrange(3) if kind in NODE_KINDS or kind == "zk_one" else None
        params = _common_params(rng, kind)
        if kind == "clock_2s":
            params["hold"] = rng.uniform(1.0, 4.0)
            # One time in three the node also crashes while behind and is
            # restarted with its clock still 2 s back (it must wait, not repeat).
            params["crash"] = rng.random() < 1.0 / 3
        elif kind == "clock_10m":
            params["hold"] = rng.uniform(1.0, 3.0)
            params["stop"] = rng.choice(["SIGKILL", "SIGTERM"])
        faults.append(Fault(len(faults) + 1, t, kind, target, params))
        t += rng.uniform(4.0, 6.0)
    return faults


def make_lease_schedule(seed, seconds):
    """The lease set's schedule: the same rotation over LEASE_KINDS, with the
    10-minute step in every deck (it costs a switch, not a stop), and the
    first deck opening with the partition, both clock steps and a restart
    that adopts another node's slot, in random order, so that a short run
    (45 s, about 7 faults) has them. Restarts draw the identity they come
    back with: the same, a new one with an empty data dir, or a new one
    whose local cache names a slot another node held (adopt)."""
    rng = random.Random("%s/lease-schedule" % seed)
    faults = []
    t = rng.uniform(2.0, 4.0)
    last = max(seconds - 10.0, seconds * 0.8)
    deck = []
    decks = 0
    adopt = True  # the first deck's restart
    while t < last:
        if not deck:
            deck = list(LEASE_KINDS)
            if rng.random() < 0.4:
                deck.append(rng.choice([k for k in LEASE_KINDS if k != "clock_10m"]))
            rng.shuffle(deck)
            if decks == 0:
                head = ["partition", "clock_10m", "clock_2s", rng.choice(["kill9", "sigterm"])]
                rng.shuffle(head)
                if head[0] in ("kill9", "sigterm"):
                    # the restart adopts a slot another node left: not first
                    head[0], head[1] = head[1], head[0]
                for k in head:
                    deck.remove(k)
                deck = head + deck
            decks += 1
        kind = deck.pop(0)
        target = rng.randrange(3) if kind in NODE_KINDS or kind == "zk_one" else None
        params = _common_params(rng, kind)
        if kind in ("kill9", "sigterm"):
            params["identity"] = "adopt" if adopt else rng.choice(["same", "fresh", "adopt"])
            adopt = False
        elif kind == "clock_2s":
            params["hold"] = rng.uniform(2.0, 4.0)
            params["crash"] = rng.random() < 1.0 / 3
        elif kind == "clock_10m":
            # Held long enough to see the node serve from its new slot; one
            # time in three it is also restarted while behind.
            params["hold"] = rng.uniform(3.0, 6.0)
            params["restart"] = rng.random() < 1.0 / 3
            params["stop"] = rng.choice(["SIGKILL", "SIGTERM"])
        elif kind == "expire":
            # zk_expire holds the session this long before closing it: the
            # node's client may reconnect to it meanwhile (a race that once
            # left a handle "connected" to a closed session).
            params["linger"] = rng.choice([0, 0, 100, 300])
        elif kind == "partition":
            # Cut off for longer than the session; held this long once the
            # node refuses (its ceiling reached); one time in four no other
            # node takes its slot.
            params["hold"] = rng.uniform(0.5, 2.0)
            params["takeover"] = rng.random() < 0.75
        faults.append(Fault(len(faults) + 1, t, kind, target, params))
        t += rng.uniform(4.0, 6.0)
    return faults


class FaultLog:
    """Every fault event with its time since the start; printed as it
    happens and again in full when a run fails."""

    def __init__(self, t_start):
        self.t_start = t_start
        self.lines = []
        self.lock = threading.Lock()

    def add(self, text):
        line = "[%7.2f] %s" % (time.time() - self.t_start, text)
        with self.lock:
            self.lines.append(line)
        print("chaos: " + line, flush=True)


class Window:
    """Client errors on these nodes and modes, with these codes (None = any),
    between start and end are explained by fault fid."""

    def __init__(self, fid, kind, nodes, modes, codes, start, end):
        self.fid, self.kind = fid, kind
        self.nodes, self.modes, self.codes = nodes, modes, codes
        self.start, self.end = start, end

    def explains(self, node, mode, code, t0, t1):
        return (node in self.nodes and mode in self.modes and
                (self.codes is None or code in self.codes) and
                t0 <= self.end and t1 >= self.start)


class Scheduler(LeaseEpisodes, IdentityEpisodes, threading.Thread):
    """Injects the scheduled faults, each in its own episode thread, and
    watches for processes that die on their own. In lease mode a kind with a
    lease_<kind> method (chaos_lease.py) runs that instead of ep_<kind>."""

    def __init__(self, cluster, schedule, t_start, seconds, flog):
        threading.Thread.__init__(self, name="scheduler", daemon=True)
        LeaseEpisodes.__init__(self)
        IdentityEpisodes.__init__(self)
        self.c = cluster
        self.schedule = schedule
        self.t_start = t_start
        self.seconds = seconds
        self.log = flog.add
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()  # guards busy, windows, failures, injected
        self.busy = set()
        self.windows = []
        self.failures = []
        self.incidents = []
        self.injected = []
        self.episodes = []
        self.small_steps = []  # (node, step s, start, end): clock_small episodes
        self.all_nodes = tuple(range(len(cluster.nodes)))

    # ---- bookkeeping ---------------------------------------------------

    def fail(self, fault, text):
        with self.lock:
            self.failures.append("%s: %s" % (fault.describe() if fault else "monitor", text))
        self.log("FAILURE %s" % text)

    def window(self, fault, nodes, modes, codes, start, end):
        with self.lock:
            self.windows.append(Window(fault.id, fault.kind, nodes, modes, codes, start, end))

    def resources(self, fault, target):
        k = fault.kind
        if k in ("expire", "partition"):
            return {"node%d" % target, "zk_quorum"}
        if k == "twin":
            # Not during a whole-ensemble outage: the node's session could
            # expire, and a twin then rightly takes the identity.
            return {"node%d" % target, "no_zk_all"}
        if k == "seq_bump":
            return {"seq_bump"}
        if k in NODE_KINDS:
            return {"node%d" % target}
        if k == "zk_one":
            return {"zk%d" % target, "zk_one"}
        if k == "zk_all":
            return {"zk0", "zk1", "zk2", "zk_one", "zk_quorum", "no_zk_all"}
        return {"db"}

    def _acquire(self, fault):
        """Waits until the fault's resources are free and takes them; returns
        the actual target, or False when the run ended first."""
        while not self.stop_flag.is_set() and time.time() - self.t_start < self.seconds:
            with self.lock:
                targets = [fault.target]
                if fault.kind in NODE_KINDS:
                    targets = [(fault.target + i) % 3 for i in range(3)]
                for t in targets:
                    res = self.resources(fault, t)
                    if not res & self.busy:
                        self.busy |= res
                        return t
            time.sleep(0.05)
        return False

    def _release(self, fault, target):
        with self.lock:
            self.busy -= self.resources(fault, target)

    # ---- the scheduler thread ---------------------------------------------

    def run(self):
        mon = threading.Thread(target=self._monitor, name="monitor", daemon=True)
        mon.start()
        for f in self.schedule:
            while not self.stop_flag.is_set() and time.time() - self.t_start < f.t:
                time.sleep(0.05)
            if self.stop_flag.is_set() or time.time() - self.t_start >= self.seconds:
                break
            target = self._acquire(f)
            if target is False:
                break
            if target != f.target:
                self.log("#%d node %d busy, using node %d" % (f.id, f.target + 1, target + 1))
                f.target = target
            with self.lock:
                self.injected.append(f)
            th = threading.Thread(target=self._episode, args=(f,), name="fault%d" % f.id,
                                  daemon=True)
            self.episodes.append(th)
            th.start()

    def wait_episodes(self, timeout):
        """Joins every episode; returns the faults still running after timeout."""
        end = time.time() + timeout
        for th in list(self.episodes):
            th.join(max(0.0, end - time.time()))
        return [f for f in self.injected if f.ended is None]

    def _episode(self, f):
        f.started = time.time()
        self.log("start %s" % f.describe())
        try:
            lease_ep = getattr(self, "lease_" + f.kind, None) if self.c.lease else None
            if self.c.galera is not None and f.kind == "db_kill":
                lease_ep = self.ep_galera_kill
            (lease_ep or getattr(self, "ep_" + f.kind))(f)
        except Exception:  # noqa: BLE001 - a harness error is a failure too
            self.fail(f, "episode raised:\n" + traceback.format_exc())
        finally:
            f.ended = time.time()
            self._release(f, f.target)
            self.log("end   #%d %s (%.1f s)" % (f.id, f.kind, f.ended - f.started))

    def _monitor(self):
        """A node, ZooKeeper server or MariaDB that dies while no fault holds
        it: a node is a failure (a crash); the others are logged and
        restarted, since they are the test's environment, not leafd."""
        while not self.stop_flag.wait(0.5):
            if self.c.lease:
                self.track_slots()
            with self.lock:
                for n in self.c.nodes:
                    if "node%d" % n.idx in self.busy or n.alive():
                        continue
                    self.busy.add("node%d" % n.idx)
                    threading.Thread(target=self._revive, args=(n,), daemon=True).start()
                for i, z in enumerate(self.c.zks):
                    if "zk%d" % i not in self.busy and z.proc and not z.proc.alive():
                        self.incidents.append("ZooKeeper %s died on its own" % z.name)
                        self.busy.add("zk%d" % i)
                        threading.Thread(target=self._revive_zk, args=(i, z), daemon=True).start()

    def _revive(self, n):
        rc = n.leafd.proc.p.returncode if n.leafd.proc else None
        t = time.time()
        self.fail(None, "node %s (run %d) exited on its own with code %s; log tail:\n%s"
                  % (n.name, n.run, rc, n.log_tail()))
        self.c.start_node(n, "after a crash")
        r = self.c.wait_node_ready(n, 60)
        with self.lock:
            self.windows.append(Window(0, "crash", (n.idx,), ("snowflake", "segment"), ANY,
                                       t - 1.0, (r or time.time()) + GRACE_NODE))
            self.busy.discard("node%d" % n.idx)

    def _revive_zk(self, i, z):
        self.log("ZooKeeper %s died on its own; restarting it" % z.name)
        self.c.start_zk(z)
        with self.lock:
            self.busy.discard("zk%d" % i)

    # ---- episodes: one method per kind -------------------------------------

    def _restart(self, f, n, sig, pause, why, prepare=None):
        """Stops node n with sig, waits pause s, (calls prepare(), e.g. a new
        identity), starts it again and waits for it; returns the time it was
        ready (or now, after a failure)."""
        run = n.run
        rc, secs, hung = self.c.stop_node(n, sig)
        self.log("#%d %s %s (run %d) exited %s after %.2f s"
                 % (f.id, "kill -9" if sig == signal.SIGKILL else "SIGTERM", n.name, run, rc, secs))
        if hung:
            self.fail(f, "%s did not exit within 30 s of SIGTERM (killed); log tail:\n%s"
                      % (n.name, n.log_tail()))
        elif sig == signal.SIGTERM and rc != 0:
            self.fail(f, "%s exited %s after SIGTERM (expected 0); log tail:\n%s"
                      % (n.name, rc, n.log_tail()))
        time.sleep(pause)
        if prepare:
            prepare()
        self.c.start_node(n, why)
        t0 = time.time()
        r = self.c.wait_node_ready(n, 60)
        while r is None and not n.alive() and time.time() - t0 < 60 and self._no_zk_exit(n):
            # Sequences need ZooKeeper at start: during a whole-ensemble outage
            # the node exits 1 and, as a supervisor would, is started again.
            self.log("#%d %s run %d exited: ZooKeeper unreachable at start (sequences on); "
                     "starting it again" % (f.id, n.name, n.run))
            time.sleep(1.0)
            self.c.start_node(n, why + ", again")
            r = self.c.wait_node_ready(n, 60 - (time.time() - t0))
        if r is None:
            self.fail(f, "%s (run %d) not ready within 60 s of its restart (alive=%s); log tail:\n%s"
                      % (n.name, n.run, n.alive(), n.log_tail()))
            return time.time()
        self.log("#%d %s run %d ready after %.2f s" % (f.id, n.name, n.run, r - t0))
        return r

    @staticmethod
    def _no_zk_exit(n):
        """1 when the node's last run exited 1 because sequences could not reach ZooKeeper."""
        tail = n.log_tail(4000)
        last = tail.rsplit("=== chaos: run", 1)[-1]
        return n.leafd.proc.p.returncode == 1 and any(w in last for w in NO_ZK_AT_START)

    def ep_kill9(self, f):
        n = self.c.nodes[f.target]
        t = time.time()
        r = self._restart(f, n, signal.SIGKILL, f.params["pause"], "after kill -9")
        self.window(f, (n.idx,), ("snowflake", "segment"), ANY, t, r + GRACE_NODE)

    def ep_sigterm(self, f):
        n = self.c.nodes[f.target]
        t = time.time()
        r = self._restart(f, n, signal.SIGTERM, f.params["pause"], "after SIGTERM")
        self.window(f, (n.idx,), ("snowflake", "segment"), ANY, t, r + GRACE_NODE)

    def ep_expire(self, f):
        n = self.c.nodes[f.target]
        sid = session_id(n.leafd)
        if not sid:
            self.log("#%d %s has no session logged yet; nothing to expire" % (f.id, n.name))
            return
        r = subprocess.run([os.environ["ZK_EXPIRE_BIN"], self.c.zk_address(), sid],
                           capture_output=True, text=True, timeout=60)
        out = (r.stdout.strip().splitlines() or [""])[-1]
        if r.returncode != 0:
            out += " " + r.stderr.strip()[-300:]
        self.log("#%d expire session %s of %s: rc=%d %s" % (f.id, sid, n.name, r.returncode, out))

    def sequence_window(self, f, t):
        """Sequences need ZooKeeper (the primary renews its lease there): while
        it is out, and for two session timeouts after (a new session, an
        election, a wait for the old lease), sequence requests may fail."""
        self.window(f, self.all_nodes, ("sequence",), ANY, t,
                    time.time() + 2 * self.c.session_ms / 1000.0 + GRACE_NODE)

    def ep_zk_one(self, f):
        z = self.c.zks[f.target]
        t = time.time()
        z.stop()
        self.log("#%d ZooKeeper %s stopped (kill -9)" % (f.id, z.name))
        time.sleep(f.params["hold"])
        self.restart_zk(f, z, t)

    def restart_zk(self, f, z, t):
        """Starts server z again; opens the sequence window of a fault at t."""
        if not self.c.start_zk(z):
            self.incidents.append("ZooKeeper %s did not rejoin within 90 s" % z.name)
            self.log("#%d ZooKeeper %s did not rejoin within 90 s" % (f.id, z.name))
            return
        self.log("#%d ZooKeeper %s serving again" % (f.id, z.name))
        self.sequence_window(f, t)

    def ep_zk_all(self, f):
        t = time.time()
        for z in self.c.zks:
            z.stop()
        self.log("#%d whole ZooKeeper ensemble stopped (kill -9)" % f.id)
        time.sleep(f.params["hold"])
        for z in self.c.zks:
            z.start(wait=False)
            self.c.track(z.proc)
        t0 = time.time()
        for z in self.c.zks:
            if not self._wait(z.serving, 90):
                self.incidents.append("ZooKeeper %s did not rejoin within 90 s" % z.name)
        self.log("#%d ensemble serving again after %.1f s" % (f.id, time.time() - t0))
        self.sequence_window(f, t)

    def ep_db_kill(self, f):
        tag = "chaos.f%d" % f.id
        self.c.add_fresh_tag(tag)
        t = time.time()
        self.c.db.stop(signal.SIGKILL)
        self.log("#%d MariaDB killed (kill -9); tag %s was created just before" % (f.id, tag))
        time.sleep(f.params["hold"])
        try:
            self.c.restart_db()
            self.log("#%d MariaDB serving again" % f.id)
        except RuntimeError as e:
            self.incidents.append("MariaDB restart failed: %s" % e)
            self.log("#%d MariaDB restart failed: %s" % (f.id, e))
        self.window(f, self.all_nodes, ("segment",), {"database_unavailable"}, t,
                    time.time() + GRACE_DB)

    def ep_galera_kill(self, f):
        """Galera mode's db_kill: kill -9 one member (a majority lives), hold, start it
        again (it rejoins through a state transfer). Segment IDs keep flowing except
        while the survivors evict it and while its donor is desynced."""
        members = self.c.galera.nodes
        g = members[f.id % len(members)]
        t = time.time()
        g.kill9()
        self.log("#%d Galera member %s killed (kill -9)" % (f.id, g.name))
        self.window(f, self.all_nodes, ("segment",), {"database_unavailable"}, t,
                    t + GALERA_STALL + GRACE_GALERA)
        time.sleep(f.params["hold"])
        t = time.time()
        ok = self.c.restart_galera(g)
        self.log("#%d Galera member %s %s after %.1f s" % (
            f.id, g.name, "synced again" if ok else "did NOT rejoin", time.time() - t))
        if not ok:
            self.incidents.append("Galera member %s did not rejoin within 90 s" % g.name)
        self.window(f, self.all_nodes, ("segment",), {"database_unavailable"}, t,
                    time.time() + GRACE_GALERA)

    def ep_clock_small(self, f):
        """Steps back within the bounded lead: served throughout. No window is
        opened, so any failed request on the node meanwhile fails the run; the
        span is kept for the summary's count."""
        n = self.c.nodes[f.target]
        for step in f.params["steps"]:  # three steps, each put right after hold
            t = time.time()
            n.set_offset(-step)
            time.sleep(f.params["hold"])
            n.set_offset(0)
            with self.lock:
                self.small_steps.append((n.idx, step, t, time.time() + GRACE_CLOCK))
            time.sleep(0.2)

    def ep_clock_2s(self, f):
        n = self.c.nodes[f.target]
        t = time.time()
        n.set_offset(-2)
        if not f.params.get("crash"):
            time.sleep(f.params["hold"])
            n.set_offset(0)
            self.window(f, (n.idx,), ("snowflake",), {"clock_backwards"}, t,
                        time.time() + GRACE_CLOCK)
            return
        time.sleep(f.params["hold"] / 2)
        r = self._restart(f, n, signal.SIGKILL, 0.0, "after kill -9, clock still 2 s back")
        n.set_offset(0)
        self.window(f, (n.idx,), ("snowflake", "segment"), ANY, t, max(r, time.time()) + GRACE_NODE)

    def ep_clock_10m(self, f):
        """Ten minutes back at run time: snowflake requests get 503 and
        /ready says why; a restart while still behind must be refused (exit
        1); with the clock put right the node starts and serves again."""
        n = self.c.nodes[f.target]
        t = time.time()
        n.set_offset(-600)
        time.sleep(f.params["hold"])
        try:
            st, r = n.ready_json()
            sf = r.get("snowflake", {})
            self.log("#%d %s /ready with the clock 10 min back: %d %s"
                     % (f.id, n.name, st, {k: sf.get(k) for k in ("ready", "reason")}))
            if st == 200 or sf.get("ready"):
                self.fail(f, "%s says ready with its clock 10 min behind: %r" % (n.name, r))
        except OSError as e:
            self.fail(f, "%s /ready failed with its clock 10 min behind: %r" % (n.name, e))
        sig = signal.SIGKILL if f.params["stop"] == "SIGKILL" else signal.SIGTERM
        rc, secs, hung = self.c.stop_node(n, sig)
        self.log("#%d %s %s (run %d) exited %s after %.2f s"
                 % (f.id, f.params["stop"], n.name, n.run, rc, secs))
        if hung or (sig == signal.SIGTERM and rc != 0):
            self.fail(f, "%s exited %s (hung=%s) after SIGTERM with its clock 10 min behind; "
                      "log tail:\n%s" % (n.name, rc, hung, n.log_tail()))
        self.c.start_node(n, "clock still 10 min back: must refuse")
        rc = self.c.wait_node_exit(n, 60)
        if rc is None:
            ready = n.snowflake_ready()
            self.fail(f, "%s run %d did not refuse to start with its clock 10 min behind "
                      "(still running after 60 s, snowflake ready=%s); log tail:\n%s"
                      % (n.name, n.run, ready, n.log_tail()))
            self.c.stop_node(n, signal.SIGKILL)
        elif rc != 1:
            self.fail(f, "%s run %d exited %s with its clock 10 min behind (expected 1); "
                      "log tail:\n%s" % (n.name, n.run, rc, n.log_tail()))
        else:
            self.log("#%d %s run %d refused to start (exit 1): %s"
                     % (f.id, n.name, n.run, _last_line(n.log_tail(), "refusing")))
        n.set_offset(0)
        self.c.start_node(n, "clock put right")
        t0 = time.time()
        r = self.c.wait_node_ready(n, 60)
        if r is None:
            self.fail(f, "%s (run %d) not ready within 60 s with the clock put right; log tail:\n%s"
                      % (n.name, n.run, n.log_tail()))
            r = time.time()
        else:
            self.log("#%d %s run %d ready after %.2f s" % (f.id, n.name, n.run, r - t0))
        self.window(f, (n.idx,), ("snowflake", "segment"), ANY, t, r + GRACE_NODE)

    def _wait(self, fn, timeout):
        end = time.time() + timeout
        while time.time() < end:
            try:
                if fn():
                    return True
            except Exception:  # noqa: BLE001 - polling
                pass
            time.sleep(0.2)
        return False


def _last_line(text, word):
    lines = [ln for ln in text.splitlines() if word in ln]
    return lines[-1][-300:] if lines else "(no line with %r)" % word
