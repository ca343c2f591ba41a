"""Clients that load a node through its in-place upgrades (docs/UPGRADING.md, "In place, without
a restart"), and the checks of what they saw.

kinds:
- http: snowflake IDs over HTTP keep-alive, reconnecting on `Connection: close`;
- seq: the sequence `seq` over HTTP keep-alive, the same way;
- redis: redis-py with default settings, `INCR snowflake:<key>`;
- pipe: a raw RESP client with 10 `INCR snowflake:<key>` in flight: it writes them in one go
  and reads 10 replies. Before each write it looks for an end from the server, as redis-py
  does before it sends (a connection the server closed is replaced, nothing lost); a pipeline
  the server answers in part before closing is a short pipeline, and counts as failed.

Every failure counts: an exception, a refused connection, a short pipeline. One exception, asked
for by name (start(..., retry_no_primary=True)): the seq client retries an HTTP 503 `no_primary`
as docs/reference/errors.md tells clients to ("retry shortly"), where a test makes the sequence
election itself wait (ZooKeeper paused past the new process's bounded wait for it); each such
retry is counted and reported, and the call still has to succeed.
"""
import http.client
import os
import re
import select
import signal
import socket
import sys
import threading
import time

from leafdtest import check, http as http_get, log, pid_alive, wait_until
from zkhelpers import worker_of, zk_props

try:
    import redis
except ImportError:  # pragma: no cover - the tests run under Debian's python3
    redis = None

PIPE_DEPTH = 10


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.failed, self.refused, self.short, self.errors = 0, 0, 0, []
        self.max_pause = 0.0
        self.count = 0
        self.retried = 0  # 503 no_primary answers retried (retry_no_primary only)

    def fail(self, what, e):
        with self.lock:
            self.failed += 1
            if isinstance(e, ConnectionRefusedError):
                self.refused += 1
            if isinstance(e, ShortPipeline):
                self.short += 1
            if len(self.errors) < 10:
                self.errors.append("%s: %r" % (what, e))


class ShortPipeline(Exception):
    pass


class NoPrimary(RuntimeError):
    """HTTP 503 `no_primary`: no sequence primary can issue now (docs/reference/errors.md)."""


def _resp_line(f):
    line = f.readline()
    if not line:
        raise EOFError("connection closed")
    return line


class Client(threading.Thread):
    def __init__(self, stats, kind, name, port, resp_port, key, seq="rs"):
        super().__init__(daemon=True)
        self.stats, self.kind, self.name = stats, kind, name
        self.port, self.resp_port, self.key, self.seq = port, resp_port, key, seq
        self.stop_flag = threading.Event()
        self.retry_no_primary = False
        self.last_retry = self.last_ok = 0.0  # monotonic: the last no_primary retried, the last ID
        self.mine = []
        self.reconnects = 0
        self.order_bad = 0

    def one_http(self, conn, path):
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read().decode()
        if r.status == 503 and '"no_primary"' in body:
            raise NoPrimary("HTTP %d %s" % (r.status, body[:80]))
        if r.status != 200:
            raise RuntimeError("HTTP %d %s" % (r.status, body[:80]))
        close = (r.getheader("Connection") or "").lower() == "close"
        return [int(x) for x in body.split("\n") if x], close

    def one_pipe(self, state):
        sock = state.get("sock")
        if sock is not None and select.select([sock], [], [], 0)[0]:
            sock.close()  # the server ended it after its last answer: a new connection
            sock = None
            self.reconnects += 1
        if sock is None:
            sock = socket.create_connection(("127.0.0.1", self.resp_port), timeout=20)
            state["sock"], state["file"] = sock, sock.makefile("rb")
        cmd = b"*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n" % (len(self.key) + 10,
                                                    b"snowflake:" + self.key.encode())
        sock.sendall(cmd * PIPE_DEPTH)
        got = []
        try:
            for _ in range(PIPE_DEPTH):
                line = _resp_line(state["file"])
                if not line.startswith(b":"):
                    raise RuntimeError("reply %r" % line[:80])
                got.append(int(line[1:]))
        except (EOFError, ConnectionError, OSError) as e:
            sock.close()
            state["sock"] = None
            raise ShortPipeline("%d of %d replies, then %r" % (len(got), PIPE_DEPTH, e))
        return got

    def run(self):
        conn, rc, pipe = None, None, {}
        last_ok = time.monotonic()
        while not self.stop_flag.is_set():
            try:
                if self.kind == "redis":
                    if rc is None:
                        rc = redis.Redis(host="127.0.0.1", port=self.resp_port)
                    got = [int(rc.execute_command("INCR", "snowflake:" + self.key))]
                elif self.kind == "pipe":
                    got = self.one_pipe(pipe)
                else:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
                    path = ("/api/sequence/get/" + self.seq if self.kind == "seq"
                            else "/api/snowflake/get/" + self.key)
                    got, close = self.one_http(conn, path)
                    if close:
                        conn.close()
                        conn = None
                        self.reconnects += 1
            except NoPrimary:
                if not self.retry_no_primary:
                    self.stats.fail(self.name, sys.exc_info()[1])
                else:
                    with self.stats.lock:
                        self.stats.retried += 1
                    self.last_retry = time.monotonic()
                time.sleep(0.01)  # the keep-alive connection stays: the node answered
                continue
            except Exception as e:  # noqa: BLE001 - every failure counts
                self.stats.fail(self.name, e)
                if conn is not None:
                    conn.close()
                    conn = None
                time.sleep(0.01)
                continue
            now = time.monotonic()
            if self.mine and got[0] <= self.mine[-1]:
                self.order_bad += 1
            self.mine.extend(got)
            self.last_ok = now
            with self.stats.lock:
                self.stats.max_pause = max(self.stats.max_pause, now - last_ok)
                self.stats.count += 1
            last_ok = now


def start(port, resp_port, key, kinds=("http", "http", "seq", "redis"), retry_no_primary=False):
    """Starts one client per kind (redis only where redis-py is installed); retry_no_primary: the
    seq clients retry 503 `no_primary` (counted in Stats.retried), see the module's text."""
    st = Stats()
    cl = [Client(st, k, "%s%d" % (k, i), port, resp_port, key) for i, k in enumerate(kinds)
          if k != "redis" or redis is not None]
    for c in cl:
        c.retry_no_primary = retry_no_primary and c.kind == "seq"
    for c in cl:
        c.start()
    return st, cl


def stop(st, cl, label, short_ok=0):
    """Stops the clients and checks what they saw; returns the snowflake worker IDs seen.
    short_ok: short pipelines to report but not fail on (at most that many), where the old
    process is a release whose drain closed a RESP connection after one reply."""
    for c in cl:
        c.stop_flag.set()
    for c in cl:
        c.join(30)
    snow = [x for c in cl if c.kind != "seq" for x in c.mine]
    seq = [x for c in cl if c.kind == "seq" for x in c.mine]
    dups = len(snow) - len(set(snow))
    log("%s: %d requests, %d failed (%d refused, %d short pipelines), %d duplicates, longest "
        "pause %.0f ms, reconnects %s; errors %s; 503 no_primary retried %d"
        % (label, st.count, st.failed, st.refused, st.short, dups, st.max_pause * 1000,
           [c.reconnects for c in cl], st.errors[:3], st.retried))
    check(st.failed - st.short == 0, "%s: 0 failed requests (%d: %s)"
          % (label, st.failed - st.short, st.errors[:3]))
    check(st.refused == 0, "%s: 0 refused connections" % label)
    check(st.short <= short_ok, "%s: at most %d short pipelines (%d)" % (label, short_ok, st.short))
    check(dups == 0, "%s: 0 duplicate snowflake IDs (%d)" % (label, dups))
    check(all(c.order_bad == 0 for c in cl), "%s: IDs increase per client (out of order: %s)"
          % (label, [c.order_bad for c in cl]))
    check(all(a < b for a, b in zip(seq, seq[1:])), "%s: the sequence strictly increases" % label)
    check(all(c.last_ok > c.last_retry for c in cl if c.last_retry),
          "%s: each sequence client that retried a no_primary was served again after it" % label)
    return {worker_of(x) for x in snow}


def upgrade_in_place(node, pid, label):
    """kill -USR2 pid; waits for the hand-over, the old pid's exit and /ready 200; returns the
    new pid (None, with the log's end printed, when no hand-over came within 30 s)."""
    pat = r"handed over to pid (\d+)"
    before = len(re.findall(pat, node.log_text()))
    os.kill(pid, signal.SIGUSR2)
    ok = wait_until(lambda: len(re.findall(pat, node.log_text())) > before, 30, 0.05)
    check(ok, "%s: the old process handed over" % label)
    if not ok:
        log(node.log_text()[-3000:])
        return None
    new = int(re.findall(pat, node.log_text())[-1])
    check(wait_until(lambda: not pid_alive(pid), 20, 0.05), "%s: the old pid %d is gone"
          % (label, pid))
    check(wait_until(lambda: ready(node.port), 20, 0.05),
          "%s: the new process (pid %d) is ready" % (label, new))
    return new


def sequence_node(env, zk, name):
    """A node with snowflake IDs and the sequence rs served, as the upgrade tests load it, its pid
    in {data dir}/leafd.pid as tools/programs/leafctl writes it; returns (node, worker ID, data dir)."""
    props = zk_props(zk.address(), name=name, **{
        "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
        "leafd.sequence.batch": "100", "leafd.zk.session.timeout.ms": "6000"})
    node = env.leafd("n0", props, resp=True)
    check(node.wait_sequence("rs", 30) == 200, "the sequence rs is served")
    w0 = worker_of(node.get_ids("/api/snowflake/get/%s" % name)[0])
    data_dir = os.path.join(os.path.dirname(node.conf), "data")
    with open(os.path.join(data_dir, "leafd.pid"), "w") as f:
        f.write("%d\n" % node.proc.p.pid)
    return node, w0, data_dir


def ready(port):
    """/ready answers 200 (a refused or reset connection: no)."""
    try:
        return http_get(port, "/ready", timeout=2)[0] == 200
    except OSError:
        return False

