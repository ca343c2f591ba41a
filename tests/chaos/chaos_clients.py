"""Client threads of the chaos run: each pulls snowflake and segment IDs
(single and batches) from random nodes over keep-alive connections, one per
node, and reconnects after any error. Segment tags: `chaos` (step 1000),
`chaos.small` (step 10) and, one request in ten once they exist, the last
few tags the scheduler created just before a database outage (so that no
node has them buffered when the database dies).

Every answer is kept. A success is (node, run, mode, tag, t0, t1, ids): t0 is
the real time before the request was sent, t1 after the whole body was
read; run is the node's process run the connection was opened to (read
before and after connect(); a restart in between discards the connection).
An error is (node, run, mode, tag, t0, t1, code, detail), where code is the
JSON error code of a non-200 answer, or conn_refused / conn_reset /
disconnected / timeout / exception for a failed exchange. A 200 whose body
is not `count` positive ascending decimal IDs is a protocol violation, kept
apart from errors."""
import errno
import http.client as httpclient
import json
import random
import socket
import threading
import time
from array import array

SNOWFLAKE_COUNTS = (1, 1, 1, 1, 10, 100, 500)
# (tag, counts): "chaos" has step 1000, "chaos.small" step 10, so the small
# one fetches a new range from the database every few requests at first.
SEGMENT_TAGS = (("chaos", (1, 1, 1, 10, 100, 500)),) * 4 + (("chaos.small", (1, 1, 2, 5)),)
FRESH_COUNTS = (1, 1, 2, 10)


def classify(exc):
    if isinstance(exc, ConnectionRefusedError):
        return "conn_refused"
    if isinstance(exc, (ConnectionResetError, BrokenPipeError)):
        return "conn_reset"
    if isinstance(exc, (httpclient.RemoteDisconnected, httpclient.IncompleteRead)):
        return "disconnected"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timeout"
    if isinstance(exc, OSError) and exc.errno == errno.ECONNREFUSED:
        return "conn_refused"
    return "exception:" + type(exc).__name__


class Client(threading.Thread):
    """One client thread; lists are appended only by this thread and read
    after it has been joined."""

    def __init__(self, idx, nodes, fresh_tags, seed, stop, pause=0.002, timeout=10):
        super().__init__(name="client%d" % idx, daemon=True)
        self.idx = idx
        self.nodes = nodes
        self.fresh_tags = fresh_tags
        self.rng = random.Random("%s/client/%d" % (seed, idx))
        self.stop_flag = stop
        self.pause = pause
        self.timeout = timeout
        self.ok = []
        self.errors = []
        self.violations = []
        self.requests = 0
        self.conns = {}

    def _conn(self, n):
        c = self.conns.get(n)
        if c:
            return c
        node = self.nodes[n]
        before = node.run
        conn = httpclient.HTTPConnection("127.0.0.1", node.port, timeout=self.timeout)
        conn.connect()
        if node.run != before:
            conn.close()
            return None
        self.conns[n] = (conn, before)
        return self.conns[n]

    def _drop(self, n):
        c = self.conns.pop(n, None)
        if c:
            c[0].close()

    def _pick(self):
        n = self.rng.randrange(len(self.nodes))
        if self.rng.random() < 0.5:
            return n, "snowflake", "chaos", self.rng.choice(SNOWFLAKE_COUNTS)
        fresh = self.fresh_tags
        if fresh and self.rng.random() < 0.1:
            # One of the last few tags created before a database outage.
            return n, "segment", self.rng.choice(fresh[-3:]), self.rng.choice(FRESH_COUNTS)
        tag, counts = self.rng.choice(SEGMENT_TAGS)
        return n, "segment", tag, self.rng.choice(counts)

    def run(self):
        while not self.stop_flag.is_set():
            n, mode, tag, count = self._pick()
            path = "/api/%s/get/%s" % (mode, tag) + ("?count=%d" % count if count > 1 else "")
            t0 = time.time()
            run = self.nodes[n].run
            try:
                c = self._conn(n)
                if c is None:
                    continue
                conn, run = c
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read()
                t1 = time.time()
                self.requests += 1
                if r.will_close:
                    self._drop(n)
                if r.status == 200:
                    self._success(n, run, mode, tag, count, t0, t1, body)
                else:
                    try:
                        code = json.loads(body).get("code") or "http_%d" % r.status
                    except ValueError:
                        code = "http_%d" % r.status
                    self.errors.append((n, run, mode, tag, t0, t1, code,
                                        body[:160].decode("utf-8", "replace")))
                    time.sleep(0.01)
            except Exception as e:  # noqa: BLE001 - every failure is recorded
                t1 = time.time()
                self.requests += 1
                self._drop(n)
                self.errors.append((n, run, mode, tag, t0, t1, classify(e), repr(e)[:160]))
                time.sleep(0.02)
            if self.pause:
                time.sleep(self.pause)
        for n in list(self.conns):
            self._drop(n)

    def _success(self, n, run, mode, tag, count, t0, t1, body):
        try:
            ids = array("q", (int(x) for x in body.split(b"\n")))
        except ValueError:
            self.violations.append("client %d: node %d run %d %s/%s: 200 with a body that is "
                                   "not decimal IDs: %r" % (self.idx, n, run, mode, tag, body[:80]))
            return
        bad = None
        if len(ids) != count:
            bad = "%d IDs for count=%d" % (len(ids), count)
        elif ids[0] <= 0:
            bad = "non-positive ID %d" % ids[0]
        elif any(a >= b for a, b in zip(ids, ids[1:])):
            bad = "IDs not ascending within one answer"
        if bad:
            self.violations.append("client %d: node %d run %d %s/%s at %.3f: %s"
                                   % (self.idx, n, run, mode, tag, t1, bad))
        self.ok.append((n, run, mode, tag, t0, t1, ids))
