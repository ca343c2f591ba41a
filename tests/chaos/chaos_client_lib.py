"""The client library in the chaos run (docs/reference/guarantees.md, "The client library").

client_load processes (tests/tools/client_load.c, two threads each over libleafd-client) take
segment IDs of `chaos` and snowflake IDs through every node while the faults of the run go on.
Each process lives 0.3 to 3 s and is then killed with -9, its process group with it; half of them
fork first (--fork: the child goes on with its parent's handle, docs/man/leafd_client.3, "FORK"),
so kills land mid-refill in parents and children alike. Small prefetch distances make refills
frequent. Every ID the processes wrote (--flush 64: a kill loses at most 64 per thread) joins the
duplicate check beside the HTTP clients' IDs of the same mode and tag: a buffer handed out by a
parent and its child, or a range reissued after a kill, is a repeat.

The run uses the client_load program of LEAFD_BIN's build (in its tests folder), or
$CLIENT_LOAD_BIN; without one it says so and checks nothing here.
"""
import collections
import glob
import os
import random
import signal
import struct
import subprocess
import threading

KEYS = ("segment:chaos", "snowflake:chaos")
OPTIONS = ("log=0;wait.ms=2000;timeout.ms=1000;retry.min.ms=50;retry.max.ms=1000;"
           "prefetch.min=100;prefetch.max=2000;batch.max=2000")
SHOW = 5


def find_client_load():
    """The client_load binary of this build, or None."""
    env = os.environ.get("CLIENT_LOAD_BIN")
    if env:
        return env if os.access(env, os.X_OK) else None
    leafd = os.environ.get("LEAFD_BIN", "")
    for d in (os.path.dirname(leafd), os.path.dirname(os.path.dirname(leafd))):
        path = os.path.join(d, "tests", "client_load")
        if d and os.access(path, os.X_OK):
            return path
    return None


class LibClients(threading.Thread):
    """Starts, forks and kills client_load processes until stop is set."""

    def __init__(self, binary, nodes, seed, stop, workdir):
        super().__init__(daemon=True)
        self.binary, self.nodes, self.stop = binary, nodes, stop
        self.rng = random.Random(seed ^ 0x6c6962)  # a track of its own: the faults' draw is kept
        self.dir = os.path.join(workdir, "client-lib")
        os.makedirs(self.dir, exist_ok=True)
        self.runs = []  # (key, prefix, forked)
        self.failures = []

    def one(self, i):
        key = self.rng.choice(KEYS)
        fork_ms = self.rng.choice((0, self.rng.randint(100, 1500)))
        prefix = os.path.join(self.dir, "p%d" % i)
        endpoints = ",".join("http://127.0.0.1:%d" % n.port for n in self.nodes)
        args = [self.binary, endpoints, OPTIONS, key, "2", "1000000", "--out", prefix,
                "--flush", "64", "--batch", str(self.rng.choice((1, 1, 7, 100))),
                "--pace", "2", "1000"]
        if fork_ms:
            args += ["--fork", str(fork_ms)]
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
        self.runs.append((key, prefix, bool(fork_ms)))
        self.stop.wait(self.rng.uniform(0.3, 3.0))
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, err = p.communicate()
        if p.returncode not in (0, -signal.SIGKILL):
            self.failures.append("client_load %s exited %s: %s" % (key, p.returncode,
                                                                  err.decode()[-300:]))

    def run(self):
        i = 0
        while not self.stop.is_set():
            self.one(i)
            i += 1

    def ids(self):
        """{key: [IDs of every process, parents and children]}."""
        out = collections.defaultdict(list)
        for key, prefix, _ in self.runs:
            for path in glob.glob(prefix + ".*"):
                with open(path, "rb") as f:
                    data = f.read()
                data = data[:len(data) // 8 * 8]  # a write cut by the kill
                out[key] += struct.unpack("<%dq" % (len(data) // 8), data)
        return out


def start(cluster, seed, stop, say):
    """The library's clients of a run, started; None without a client_load."""
    binary = find_client_load()
    if binary is None:
        say("client library: no client_load beside LEAFD_BIN (nor CLIENT_LOAD_BIN): not run")
        return None
    lib = LibClients(binary, cluster.nodes, seed, stop, cluster.dir)
    lib.start()
    return lib


def _repeats(ids):
    seen, twice = set(), []
    for x in ids:
        if x in seen:
            twice.append(x)
        seen.add(x)
    return twice


def check(lib, clients, verdict, say):
    """After the run (stop set): every ID of the library's processes is new to them and to the
    HTTP clients, per mode (segment per tag)."""
    if lib is None:
        return
    lib.join(30)
    got = lib.ids()
    http = {"segment:chaos": [], "snowflake:chaos": []}
    for c in clients:
        for (_n, _run, mode, tag, _t0, _t1, ids) in c.ok:
            if mode == "snowflake":
                http["snowflake:chaos"] += ids
            elif mode not in ("opaque", "sequence") and tag == "chaos":
                http["segment:chaos"] += ids
    forks = sum(1 for _, _, f in lib.runs if f)
    say("client library: %d processes (%d forked), %s" % (
        len(lib.runs), forks, ", ".join("%s %d IDs" % (k, len(got[k])) for k in KEYS)))
    for text in lib.failures:
        verdict.bad("client library processes", text)
    if not any(got.values()):
        verdict.bad("client library: IDs taken", "no process wrote an ID")
    for key in KEYS:
        twice = _repeats(got[key])
        if twice:
            verdict.bad("client library: no ID twice", "%s: %d IDs repeated among the library's "
                        "processes, e.g. %r" % (key, len(twice), twice[:SHOW]))
        both = set(got[key]) & set(http[key])
        if both:
            verdict.bad("client library: no ID twice", "%s: %d IDs both in a library process "
                        "and an HTTP client, e.g. %r" % (key, len(both), sorted(both)[:SHOW]))
