"""Worker-ID exhaustion, the Leaf bug itself (Meituan Leaf's
GitHub issues 84 and 26), and its fix.

One cluster (leaf.name "ex"), two phases, every start a real leafd process
with a new identity (ip and port, fresh data dir: a container restarted
elsewhere), at most 8 alive at once; each starts, registers, issues a few IDs
and stops.

forever mode: every new identity burns a PERSISTENT_SEQUENTIAL node for good.
Of 1,100 successive identities, those that get a worker ID up to 1023 serve;
every one beyond exits 1 naming the 10-bit limit.

lease mode, then, on the same ZooKeeper (the migration path at scale): 2,000
successive starts (every 10th stopped with kill -9, so its slot stays held
until its session expires) all get a worker ID, recycling the 1,024 slots;
each slot first starts above its worker's leaf_forever timestamp.

All IDs of both phases are unique.

EXHAUSTION=full runs those numbers (ctest it.test_zk_lease_exhaustion_full,
on a release build: under the sanitizers 3,100 starts take minutes). The
default is the same test, smaller, for the ASan build: 1,000 identities are
registered directly in ZooKeeper (tests/tools/zk_fill.c, the create a node
makes), then 60 real forever starts; in lease mode a helper holds 1,000 of
the 1,024 slots and 120 starts go through the 24 left, each recycled about
five times. FOREVER_DIRECT, FOREVER_REAL, LEASE_STARTS and LEASE_BUSY
override the numbers.
"""
import os
import re
import resource
import shutil
import signal
import subprocess
import threading
import time

from leafdtest import LEAFD_BIN, Env, check, free_port, http, log, wait_until
from zkhelpers import worker_of, zk_props

PARALLEL = 8
FULL = os.environ.get("EXHAUSTION") == "full"


def knob(name, full, small):
    return int(os.environ.get(name, str(full if FULL else small)))


FOREVER_DIRECT = knob("FOREVER_DIRECT", 0, 1000)
FOREVER_REAL = knob("FOREVER_REAL", 1100, 60)
LEASE_STARTS = knob("LEASE_STARTS", 2000, 120)
LEASE_BUSY = knob("LEASE_BUSY", 0, 1000)
NAME = "ex"


def cpu_now(zk):
    """CPU seconds so far: this harness, its reaped children (the leafd
    processes), and the ZooKeeper server (still running: read from /proc)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open("/proc/%d/stat" % zk.proc.p.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    zk_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return (me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, zk_s)


def cpu_per_start(before, after, starts):
    parts = [(b - a) * 1000 / max(starts, 1) for a, b in zip(before, after)]
    return "CPU per start: leafd %.0f ms, ZooKeeper %.0f ms, harness %.0f ms" % (
        parts[1], parts[2], parts[0])


class Runner:
    """Starts short-lived leafd processes, PARALLEL at a time."""

    def __init__(self, env, zk, tag):
        self.tag = tag
        self.env = env
        self.zk = zk
        self.lock = threading.Lock()
        self.ids = []
        self.results = {}  # index -> "ok" | "exit N" | "timeout"
        self.workers = {}
        self.durations = {}  # index -> seconds from spawn to stopped
        self.slow = 0

    def port_race(self, i):
        path = os.path.join(self.env.dir, "%s%d" % (self.tag, i), "leafd.log")
        with open(path) as f:
            raced = "failed: Address already in use" in f.read()
        if raced:
            log("start %s%d lost its listen port to another process; started again" % (self.tag, i))
        return raced

    def one(self, i, props, kill9, retry=False):
        d = os.path.join(self.env.dir, "%s%d" % (self.tag, i))
        if retry:
            shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        port = free_port()
        p = dict(props)
        p["leafd.listen"] = "127.0.0.1:%d" % port
        p["leafd.data.dir"] = os.path.join(d, "data")
        p["leafd.threads"] = "1"
        conf = os.path.join(d, "leafd.properties")
        with open(conf, "w") as f:
            f.write("".join("%s = %s\n" % kv for kv in p.items()))
        env = dict(os.environ)
        # Leak checks at exit cost each short-lived process more than its whole run;
        # the other tests keep them.
        env["ASAN_OPTIONS"] = "detect_leaks=0:" + env.get("ASAN_OPTIONS", "")
        logf = open(os.path.join(d, "leafd.log"), "w")
        proc = subprocess.Popen([LEAFD_BIN, "-c", conf], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, env=env)
        result, ids = "timeout", []
        t0 = time.monotonic()
        watchdog = threading.Timer(30, proc.kill)  # a start that hangs is a failure
        watchdog.start()
        # Wait for the "listening" line (a blocking read costs no CPU), then ask for IDs.
        for line in proc.stderr:
            logf.write(line)
            if "listening on" in line:
                # A lease node that found every slot held listens while it waits
                # for one to free (/ready 503): wait for it to be ready.
                wait_until(lambda: http(port, "/ready", timeout=5)[0] == 200, 25, 0.05)
                try:
                    st, body, _ = http(port, "/api/snowflake/get/x?count=3", timeout=5)
                except OSError as e:
                    st, body = None, repr(e)
                if st == 200:
                    ids = [int(x) for x in body.split("\n")]
                    result = "ok"
                else:
                    result = "answer %s %s" % (st, body[:100])
                break
        else:
            result = "exit %d" % proc.wait(30)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL if kill9 else signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        watchdog.cancel()
        logf.write(proc.stderr.read() if proc.stderr else "")
        logf.close()
        took = time.monotonic() - t0
        with self.lock:
            self.results[i] = result
            self.ids.extend(ids)
            self.durations[i] = took
            if ids:
                self.workers[i] = worker_of(ids[0])
            self.slow += took > 2
            show = took > 2 and self.slow <= 3
        if show:  # a start that waited: say why (the log goes with a pass)
            with open(os.path.join(d, "leafd.log")) as f:
                why = [ln for ln in f if "slot" in ln or "wait" in ln]
            log("start %s%d took %.1f s: %s" % (self.tag, i, took, "".join(why[:3]).strip()))
        if result == "ok":
            shutil.rmtree(d, ignore_errors=True)
        return result

    def run(self, count, props_of, kill9_every=0):
        todo = list(range(count))
        lock = threading.Lock()

        def loop():
            while True:
                with lock:
                    if not todo:
                        return
                    i = todo.pop(0)
                try:
                    kill9 = kill9_every and i % kill9_every == kill9_every - 1
                    if self.one(i, props_of(i), kill9) != "ok" and self.port_race(i):
                        # free_port() raced another process for the listen port:
                        # the harness's fault, not the node's; start it once more.
                        self.one(i, props_of(i), kill9, retry=True)
                except Exception as e:  # noqa: BLE001 - a start that cannot run is a failure
                    with self.lock:
                        self.results[i] = "error %r" % e

        threads = [threading.Thread(target=loop) for _ in range(PARALLEL)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def spread(self):
        d = sorted(self.durations.values()) or [0]
        return "start-to-stop median %.0f ms, p99 %.0f ms, max %.0f ms" % (
            d[len(d) // 2] * 1e3, d[len(d) * 99 // 100] * 1e3, d[-1] * 1e3)


env = Env()
zk = env.zookeeper()
log("%d forever identities (%d registered directly), then %d lease starts (%d slots held by a "
    "helper), %d at a time, binary %s" % (FOREVER_DIRECT + FOREVER_REAL, FOREVER_DIRECT,
                                          LEASE_STARTS, LEASE_BUSY, PARALLEL, LEAFD_BIN))

# ---- forever mode: the Leaf bug ----
t0 = time.monotonic()
cpu0 = cpu_now(zk)
if FOREVER_DIRECT:
    r = subprocess.run([os.environ["ZK_FILL_BIN"], zk.address(), "/snowflake/%s/leaf_forever/" % NAME,
                        str(FOREVER_DIRECT)], capture_output=True, text=True, timeout=120)
    log("zk_fill: %s in %.1f s" % ((r.stdout + r.stderr).strip(), time.monotonic() - t0))
    made = FOREVER_DIRECT if r.returncode == 0 else 0
    check(made == FOREVER_DIRECT, "%d identities registered directly (%d)" % (FOREVER_DIRECT, made))
fr = Runner(env, zk, "forever")
# Identities 127.0.0.1:{a free port}: a first registration asks the live peers
# for their time, so they must be reachable.
fr.run(FOREVER_REAL, lambda i: zk_props(zk.address(), name=NAME))
ok = [i for i, r in fr.results.items() if r == "ok"]
refused = [i for i, r in fr.results.items() if r == "exit 1"]
forever_s = time.monotonic() - t0
expect_ok = max(0, min(FOREVER_REAL, 1024 - FOREVER_DIRECT))
cpu1 = cpu_now(zk)
log("forever: %d of %d real starts served (worker IDs up to %d), %d refused, in %.1f s; %s; %s"
    % (len(ok), FOREVER_REAL, max(fr.workers.values() or [-1]), len(refused), forever_s,
       fr.spread(), cpu_per_start(cpu0, cpu1, FOREVER_REAL)))
check(len(ok) == expect_ok, "forever: %d real starts got a worker ID (%d)" % (expect_ok, len(ok)))
check(max(fr.workers.values() or [0]) == 1023, "forever: the last worker ID handed out is 1023")
check(len(refused) == FOREVER_REAL - len(ok), "forever: every other start exits 1 (%s)"
      % sorted(set(fr.results.values())))
check(len(set(fr.workers.values())) == len(ok), "forever: every start that served had its own worker ID")
for i in refused[:1]:
    text = open(os.path.join(env.dir, "forever%d" % i, "leafd.log")).read()
    check("above 1023" in text, "forever: the refusal names the 10-bit limit")

# ---- the migration: an operator retires the stopped forever identities ----
# (docs/IDENTITY.md: a worker ID under leaf_forever stays out of the lease pool until
# then; each retired worker ID's slot is reserved above its recorded time.)
rconf = os.path.join(env.dir, "retire.properties")
with open(rconf, "w") as fh:
    for k, v in zk_props(zk.address(), name=NAME).items():
        fh.write("%s = %s\n" % (k, v))
t_r = time.monotonic()
r = subprocess.run([LEAFD_BIN, "--retire", "stopped", "-c", rconf], capture_output=True, text=True,
                   timeout=300)
retired = re.search(r"(\d+) identit(?:y|ies) retired", r.stdout)
log("leafd --retire stopped: %s in %.1f s" % (retired.group(0) if retired else r.stdout[-200:],
                                              time.monotonic() - t_r))
check(r.returncode == 0 and retired and int(retired.group(1)) >= min(1024, FOREVER_DIRECT + len(ok)),
      "the stopped forever identities are retired (%s)" % (r.stdout + r.stderr)[-300:])

# ---- lease mode: the fix, on the same cluster ----
holder = None
if LEASE_BUSY:
    holder = subprocess.Popen([os.environ["ZK_FILL_BIN"], zk.address(), "--hold",
                               "/snowflake/%s/leaf_lease" % NAME, str(LEASE_BUSY)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = holder.stdout.readline().strip()
    check(line == "held %d" % LEASE_BUSY, "lease: a helper holds %d slots (%s)" % (LEASE_BUSY, line))
t1 = time.monotonic()
cpu1 = cpu_now(zk)
lr = Runner(env, zk, "lease")
lr.run(LEASE_STARTS, lambda i: zk_props(zk.address(), name=NAME, **{
    "leafd.snowflake.worker.mode": "lease", "leafd.zk.session.timeout.ms": "4000",
    "leafd.snowflake.advertise.ip": "10.%d.%d.%d" % (1 + i // 65536, (i // 256) % 256, i % 256),
    "leaf.snowflake.port": str(20000 + i)}), kill9_every=10)
lease_s = time.monotonic() - t1
cpu2 = cpu_now(zk)
if holder:
    holder.stdin.close()
    holder.wait(30)
bad = {i: r for i, r in lr.results.items() if r != "ok"}
used = set(lr.workers.values())
log("lease: %d starts in %.1f s (%.1f starts/s, %d at a time), %d distinct worker IDs used, %s; "
    "%s; failures: %s" % (LEASE_STARTS, lease_s, LEASE_STARTS / lease_s, PARALLEL, len(used),
                          lr.spread(), cpu_per_start(cpu1, cpu2, LEASE_STARTS),
                          list(bad.items())[:5]))
for i in list(bad)[:2]:
    p = os.path.join(env.dir, "lease%d" % i, "leafd.log")
    if os.path.exists(p):
        log("log of failed start %d:\n%s" % (i, open(p).read()[-1500:]))
check(not bad, "lease: all %d starts got a worker ID and served" % LEASE_STARTS)
check(len(lr.workers) == LEASE_STARTS, "lease: %d starts issued IDs" % len(lr.workers))
free = 1024 - LEASE_BUSY
check(len(used) <= free and all(w >= LEASE_BUSY for w in used),
      "lease: %d starts went through the %d free slots (%d used)" % (LEASE_STARTS, free, len(used)))
all_ids = fr.ids + lr.ids
check(len(set(all_ids)) == len(all_ids), "all %d IDs of both phases are unique (%d forever, %d lease)"
      % (len(all_ids), len(fr.ids), len(lr.ids)))
log("figures: forever phase %.1f s, lease phase %.1f s, %d lease starts waited over 2 s"
    % (forever_s, lease_s, lr.slow))
env.finish()
