"""The chaos cluster: a three-server ZooKeeper ensemble, one MariaDB and three
leafd nodes (snowflake and segment on), all on 127.0.0.1, in one temp dir.

Each node runs under libfaketime from its first start with its own timestamp
file (FAKETIME_TIMESTAMP_FILE, re-read on every clock call), so the fault
scheduler can step that node's wall clock at run time; every change of the
offset is kept with the real time it was written, so the checks can bound
an ID's timestamp by the node's faked clock. libfaketime does not switch at
once in a process with several threads reading the clock (leafd's event
loops, its control thread and the ZooKeeper client's threads): a stand-alone
C program with four threads calling clock_gettime() saw the old offset up to
26 ms after the new file was renamed into place, and a chaos run once got a
snowflake ID stamped with the old (real) time just after a step of -10 min
(seed 600001, 180 s; the ID was in the same millisecond as the step).
Measured against leafd itself (4 client threads on GET /api/snowflake/time
around 6 steps of -600 s): one event-loop thread answers with the new time
within 1 ms of the rename, while others keep answering with the old time
for up to 1.0 s (libfaketime re-reads the file per thread, at most once a
second). So the old offset counts as possibly still in effect for SETTLE_S
after each change; a seed-293705885 run failed with 0.25 s, and in a full
suite (ctest -j3 on two cores) a seed-143187272 run got an ID stamped with
the exact real time more than 1.2 s after a -10 min step, and a seed-349072029
run (an ASan build beside the TSan suite) one stamped with the real time 3.2 s
after it (n3's /ready already said "clock behind" 0.3 s before). The bound is
4 s: a real lead breach after a -10 min step would go on for minutes, not
seconds, and the step's other checks (/ready 503, a restart refused) do not
depend on it.

A node's "run" counts its processes: run 1 is the first start, and every
start after a stop adds one. The counter is raised before the new process
is spawned and only once the old one is gone, so a client that read the
same run before and after its connect() knows which process it talks to.

Lease mode (chaos.py --lease): the nodes run with
leafd.snowflake.worker.mode = lease and a 4 s session, and each reaches every
ZooKeeper server through its own tests/lib/tcpproxy.py proxy, so one node can
be cut off from the ensemble (blackhole) while the others are not. A restart
may come back with a new identity (leaf.snowflake.port, never listened on)
and a new data dir: empty (a container started elsewhere) or holding a local
cache that names a slot another node held (its volume moved), so worker IDs
pass between nodes. Every socket stays on 127.0.0.1.

Cleanup: a sentinel process holds the read end of a pipe from this process;
when the runner exits for any reason (even SIGKILL from a ctest timeout) the
pipe closes without the word "done" and the sentinel kills, by pid, every server this run started
(each pid is checked to still be ours: its command line names our temp dir).
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

from leafdtest import Env, free_port, http, wait_until
from galera import GaleraCluster
from tcpproxy import Proxy
from zkhelpers import faketime_env, zk_props

# Opaque IDs (/api/opaque/get, opaque:<tag>) on every node, with one key.
OPAQUE_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"

SENTINEL = r"""
import os, shutil, signal, sys
pidfile, marker, rmdir = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
try:
    said = sys.stdin.buffer.read()
except Exception:
    said = b""
if said == b"done":
    sys.exit(0)
try:
    with open(pidfile) as f:
        pids = [int(x) for x in f.read().split()]
except OSError:
    pids = []
for pid in pids:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if marker.encode() in f.read():
                os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
if rmdir and os.path.isdir(marker):
    import time
    time.sleep(1)
    shutil.rmtree(marker, ignore_errors=True)
"""


SETTLE_S = 4.0
# Lease mode: a short session, so that an expiry or a partition frees a slot
# within a few seconds of the run.
LEASE_SESSION_MS = 4000
# Lease mode: identities after a restart with a new one (never listened on).
IDENTITY_PORT_BASE = 40000


class Node:
    """One leafd node of the cluster: the harness's Leafd plus the run counter
    and the faketime offset history. Fault episodes change it while holding
    the node's resource; clients only read run and port."""

    def __init__(self, idx, leafd, tsfile, resp_port):
        self.idx = idx
        self.leafd = leafd
        self.name = leafd.name
        self.port = leafd.port
        self.resp_port = resp_port
        self.tsfile = tsfile
        self.run = 1
        self.worker = None
        # Lease mode: the identity's generation (0: the first) and this
        # node's proxies to the ZooKeeper servers.
        self.generation = 0
        self.proxies = []
        # (real time before the write, real time after it, offset in seconds)
        self.offsets = [(0.0, 0.0, 0.0)]
        self.offset = 0.0

    def set_offset(self, seconds):
        """Steps this node's wall clock to real time + seconds (<= 0)."""
        text = "+0" if seconds == 0 else ("%+.3f" % seconds).rstrip("0").rstrip(".")
        t_before = time.time()
        tmp = self.tsfile + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, self.tsfile)
        t_after = time.time()
        self.offsets.append((t_before, t_after, float(seconds)))
        self.offset = float(seconds)

    def max_offset(self, t0, t1):
        """The largest clock offset (s) that may have been in effect in [t0, t1]."""
        best = None
        for k, (tb, _, off) in enumerate(self.offsets):
            end = (self.offsets[k + 1][1] + SETTLE_S if k + 1 < len(self.offsets)
                   else float("inf"))
            if tb <= t1 and end >= t0:
                best = off if best is None else max(best, off)
        return 0.0 if best is None else best

    def alive(self):
        p = self.leafd.proc
        return p is not None and p.alive()

    def pid(self):
        return self.leafd.proc.p.pid if self.leafd.proc else None

    def ready_json(self, timeout=2):
        st, body, _ = http(self.port, "/ready", timeout=timeout)
        try:
            return st, json.loads(body)
        except ValueError:
            return st, {}

    def snowflake_ready(self):
        if not self.alive():
            return False
        try:
            _, r = self.ready_json()
        except OSError:
            return False
        return bool(r.get("snowflake", {}).get("ready"))

    def log_tail(self, n=2500):
        try:
            with open(self.leafd.proc.logpath if self.leafd.proc else
                      os.path.join(self.leafd.dir, "leafd.log"), "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return ""

    def log_path(self):
        return os.path.join(self.leafd.dir, "leafd.log")

    def lease(self):
        """/ready's lease member ({} when unreachable)."""
        try:
            return self.ready_json()[1].get("snowflake", {}).get("lease", {}) or {}
        except OSError:
            return {}

    def identity(self):
        return "127.0.0.1:%s" % self.leafd.props.get("leaf.snowflake.port", self.port)


class GaleraSQL:
    """The chaos run's SQL on a Galera cluster: through the first member that is up."""

    def __init__(self, cluster):
        self.cluster = cluster

    def sql(self, text, db="leaf"):
        for g in self.cluster.nodes:
            if g.alive() and g.status("wsrep_ready") == "ON":
                return g.sql(text, db=db)
        raise RuntimeError("no Galera member is up")


class Cluster:
    """Owns every server of one chaos run and the sentinel that outlives it."""

    def __init__(self, reserve_ms=5000, session_ms=6000, threads=2, lease=False, galera=False):
        self.env = Env()
        self.lease = lease
        # Galera mode (chaos.py --galera): segments on a three-node Galera cluster
        # (tests/lib/galera.py), each leafd listing the hosts in its own order.
        self.galera = None
        self.use_galera = galera
        if lease:
            session_ms = LEASE_SESSION_MS
        self.dir = self.env.dir
        self.reserve_ms = reserve_ms
        self.pidfile = os.path.join(self.dir, "pids")
        self.keep = bool(os.environ.get("LEAFD_KEEP_TMP"))
        self._pid_lock = threading.Lock()
        self.sentinel = subprocess.Popen(
            [sys.executable, "-c", SENTINEL, self.pidfile, self.dir, "0" if self.keep else "1"],
            stdin=subprocess.PIPE, start_new_session=True)
        self.zks = []
        self.nodes_proxies = []
        self.db = None
        self.nodes = []
        self.session_ms = session_ms
        self.threads = threads
        # Tags created during the run (before each database outage, so no
        # node has a range of them buffered); clients read the list.
        self.fresh_tags = []

    def track(self, proc):
        """Remembers a child's pid for the sentinel."""
        with self._pid_lock, open(self.pidfile, "a") as f:
            f.write("%d\n" % proc.p.pid)

    def zk_address(self):
        return ",".join(z.address() for z in self.zks)

    def node_zk_address(self, i):
        """What node i connects to: the ensemble, or in lease mode its proxies."""
        if not self.lease:
            return self.zk_address()
        return ",".join("127.0.0.1:%d" % p.port for p in self.nodes_proxies[i])

    def start(self, log):
        log("starting a three-server ZooKeeper ensemble")
        self.zks = self.env.zookeeper_ensemble(3)
        for z in self.zks:
            self.track(z.proc)
        if self.use_galera:
            log("starting a three-node Galera cluster")
            self.galera = GaleraCluster(self.env)
            for g in self.galera.nodes:
                self.track(g.proc)
            self.db = GaleraSQL(self.galera)
        else:
            log("starting MariaDB")
            self.db = self.env.mariadb()
            self.track(self.db.proc)
        self.db.sql("INSERT INTO leaf_alloc(biz_tag,max_id,step,description) VALUES"
                    "('chaos',1,1000,'chaos test'),('chaos.small',1,10,'chaos test, small step')")
        self.nodes_proxies = [[Proxy(target=("127.0.0.1", z.port)) for z in self.zks]
                              for _ in range(3)] if self.lease else [[], [], []]
        for i in range(3):
            name = "n%d" % (i + 1)
            ndir = os.path.join(self.dir, name)
            os.makedirs(ndir, exist_ok=True)
            tsfile = os.path.join(ndir, "faketime")
            with open(tsfile, "w") as f:
                f.write("+0\n")
            resp_port = free_port()
            lease = {"leafd.snowflake.worker.mode": "lease"} if self.lease else {}
            props = zk_props(self.node_zk_address(i), name="chaos", **lease, **{
                "leafd.resp.listen": "127.0.0.1:%d" % resp_port,
                "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
                "leafd.sequence.batch": "500",
                # Sequences sharded across the three nodes (docs/cluster.md): each
                # owns about a third of the slots and the clients' four sequences.
                "leafd.sequence.sharding": "true",
                "leaf.segment.enable": "true",
                "leaf.jdbc.url": (self.galera.jdbc_url([i, (i + 1) % 3, (i + 2) % 3])
                                  if self.galera else self.db.jdbc_url()),
                "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw",
                "leafd.zk.session.timeout.ms": str(self.session_ms),
                "leafd.snowflake.reserve.ms": str(self.reserve_ms),
                # Galera stalls commits ~3 s after a member's kill -9: a statement outlasts it.
                "leafd.db.timeout.ms": "5000" if self.galera else "1000",
                "leafd.opaque.key": OPAQUE_KEY,
                "leafd.threads": str(self.threads)})
            log("starting leafd %s" % name)
            lf = self.env.leafd(name, props, extra_env=faketime_env(timestamp_file=tsfile),
                                wait_ready=False)
            self.track(lf.proc)
            node = Node(i, lf, tsfile, resp_port)
            node.proxies = self.nodes_proxies[i]
            self.nodes.append(node)
            if not lf.wait_ready(60):
                raise RuntimeError("leafd %s not ready at set-up; log:\n%s"
                                   % (name, node.log_tail()))

    # ---- node processes ---------------------------------------------------

    def stop_node(self, node, sig, timeout=30):
        """Signals the node and waits for it; returns (exit code, seconds, hung).
        A node that outlives the timeout is killed and reported as hung."""
        proc = node.leafd.proc
        if proc is None:
            return None, 0.0, False
        t0 = time.time()
        hung = False
        if proc.p.poll() is None:
            try:
                proc.p.send_signal(sig)
            except OSError:
                pass
            try:
                proc.p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                hung = True
                proc.p.kill()
                proc.p.wait()
        try:
            proc.logf.close()
        except OSError:
            pass
        return proc.p.returncode, time.time() - t0, hung

    def start_node(self, node, why):
        """Starts a new process (run + 1) without waiting for it to be ready."""
        node.run += 1
        with open(node.log_path(), "a") as f:
            f.write("=== chaos: run %d of %s starts (%s), clock offset %+g s ===\n"
                    % (node.run, node.name, why, node.offset))
        node.leafd.start(wait_ready=False)
        self.track(node.leafd.proc)

    def new_identity(self, node, slot=None):
        """Lease mode, before a start: a new identity (leaf.snowflake.port) and
        a new data dir, empty, or (slot given) with a local cache naming that
        slot, so the node tries it first. Returns the identity."""
        node.generation += 1
        port = IDENTITY_PORT_BASE + 1000 * node.idx + node.generation
        ddir = os.path.join(node.leafd.dir, "data.%d" % node.generation)
        node.leafd.props["leaf.snowflake.port"] = str(port)
        node.leafd.props["leafd.data.dir"] = ddir
        if slot is not None:
            cache = os.path.join(ddir, "chaos", str(port))
            os.makedirs(cache, exist_ok=True)
            with open(os.path.join(cache, "workerID.properties"), "w") as f:
                f.write("workerID=%d\ntimestamp=0\n" % slot)
        return node.identity()

    def wait_node_ready(self, node, timeout=60):
        """Waits until the node's snowflake mode is ready; returns the time or
        None (the node exited, or the timeout passed)."""
        end = time.time() + timeout
        while time.time() < end:
            if not node.alive():
                return None
            if node.snowflake_ready():
                return time.time()
            time.sleep(0.1)
        return None

    def wait_node_exit(self, node, timeout=60):
        try:
            return node.leafd.proc.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    # ---- ZooKeeper and MariaDB ------------------------------------------

    def start_zk(self, z, timeout=90):
        z.start(wait=False)
        self.track(z.proc)
        return wait_until(z.serving, timeout, interval=0.2)

    def add_fresh_tag(self, name):
        self.db.sql("INSERT INTO leaf_alloc(biz_tag,max_id,step,description) "
                    "VALUES('%s',1,100,'chaos test, created before an outage')" % name)
        self.fresh_tags.append(name)

    def restart_galera(self, g, timeout=90):
        """Starts Galera node g again and waits until it is synced (rsync SST or IST)."""
        g.start(wait=False)
        self.track(g.proc)
        return g.wait_synced(timeout)

    def restart_db(self):
        self.db.start()
        self.track(self.db.proc)

    # ---- the end --------------------------------------------------------

    def stop_nodes(self):
        """Graceful stop of every node at the end; returns {name: (rc, secs, hung)}."""
        out = {}
        for n in self.nodes:
            if n.alive():
                out[n.name] = self.stop_node(n, signal.SIGTERM)
        return out

    def close(self, keep=False):
        if keep:
            os.environ["LEAFD_KEEP_TMP"] = "1"
        for ps in self.nodes_proxies:
            for p in ps:
                p.close()
        try:
            self.env.close()
        finally:
            try:
                self.sentinel.stdin.write(b"done")
                self.sentinel.stdin.close()
                self.sentinel.wait(timeout=20)
            except Exception:  # noqa: BLE001 - best effort at exit
                pass
