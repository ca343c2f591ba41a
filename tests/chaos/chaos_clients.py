"""Client threads of the chaos run: each pulls snowflake and segment IDs
(single and batches) from random nodes over keep-alive connections, one per
node and protocol, and reconnects after any error. Half the requests go over
HTTP, half over the Redis protocol (INCR, LEAF.IDS, and INCRBY for segment
blocks, whose answer v stands for the IDs v-n+1..v). Segment tags: `chaos` (step 1000),
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
apart from errors. Over RESP, the code of an error reply is its first word in
lower case (the HTTP API's stable code).

Sequence requests are also kept as the order checker's calls (tests/lib/ordercheck.py):
seq_calls holds (tag, start, end, ids or None, code) with start and end on
time.monotonic_ns(), a failure (ids None) included.

Opaque IDs of `chaos` (HTTP /api/opaque/get, RESP opaque:chaos) are kept as
mode "opaque" (not ascending; chaos.py decodes them at the end), ranges
(/api/segment/range/chaos, HTTP only) as segment IDs: the range's IDs
expanded. Errors of both count as segment errors: the same faults explain
them."""
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
OPAQUE_COUNTS = (1, 1, 10, 100)
RANGE_COUNTS = (1, 5, 50, 300)


def record_mode(mode):
    """The mode an answer is checked as: opaque IDs and ranges are segment requests."""
    return "segment" if mode in ("opaque", "range") else mode


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


SEQUENCES = ("chaos.seq0", "chaos.seq1", "chaos.seq2", "chaos.seq3")

class RespError(Exception):
    """An error reply: code is its first word in lower case."""

    def __init__(self, line):
        super().__init__(line)
        self.code = line.split(" ", 1)[0].lower()
        self.line = line


class RespConn:
    """A minimal RESP2 client over one socket: commands out, replies in."""

    def __init__(self, port, timeout):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionResetError("connection closed by leafd")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:].decode()
        if kind == b":":
            return int(rest)
        if kind == b"-":
            raise RespError(rest)
        if kind == b"*":
            return [self._reply() for _ in range(int(rest))]
        if kind == b"+":
            return rest
        raise ValueError("unexpected RESP reply %r" % line[:80])

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self._reply()


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
        self.seq_calls = []
        self.requests = 0
        self.conns = {}

    def _conn(self, n, proto):
        c = self.conns.get((n, proto))
        if c and c[1] != self.nodes[n].run:
            # Opened to an earlier run of the node (killed or restarted since):
            # with two protocols per node a connection can sit unused past the
            # fault's window, so it is dropped, not tried.
            self._drop((n, proto))
            c = None
        if c:
            return c
        node = self.nodes[n]
        before = node.run
        if proto == "resp":
            conn = RespConn(node.resp_port, self.timeout)
        else:
            conn = httpclient.HTTPConnection("127.0.0.1", node.port, timeout=self.timeout)
            conn.connect()
        if node.run != before:
            conn.close()
            return None
        self.conns[(n, proto)] = (conn, before)
        return self.conns[(n, proto)]

    def _drop(self, key):
        c = self.conns.pop(key, None)
        if c:
            c[0].close()

    def _pick(self):
        n = self.rng.randrange(len(self.nodes))
        if self.rng.random() < 0.15:
            # Four sequences: on a sharded cluster (the chaos run's) their slots have
            # different owners (chaos.seq0..3: slots 15002, 10939, 6872, 2809).
            return n, "sequence", self.rng.choice(SEQUENCES), self.rng.choice((1, 1, 1, 5, 50))
        if self.rng.random() < 0.5:
            return n, "snowflake", "chaos", self.rng.choice(SNOWFLAKE_COUNTS)
        if self.rng.random() < 0.15:
            return n, "opaque", "chaos", self.rng.choice(OPAQUE_COUNTS)
        if self.rng.random() < 0.1:
            return n, "range", "chaos", self.rng.choice(RANGE_COUNTS)
        fresh = self.fresh_tags
        if fresh and self.rng.random() < 0.1:
            # One of the last few tags created before a database outage.
            return n, "segment", self.rng.choice(fresh[-3:]), self.rng.choice(FRESH_COUNTS)
        tag, counts = self.rng.choice(SEGMENT_TAGS)
        return n, "segment", tag, self.rng.choice(counts)

    def _sequence(self, n, mode, tag, count, proto):
        """A sequence request that follows redirects (307, -MOVED) and retries
        503 no_primary / -TRYAGAIN for up to 8 s, on fresh connections. One
        record: sent before the first try, received after the answer."""
        t0, s0 = time.time(), time.monotonic_ns()
        run = self.nodes[n].run
        deadline = t0 + 8.0
        port_of = {nd.port: i for i, nd in enumerate(self.nodes)}
        resp_of = {nd.resp_port: i for i, nd in enumerate(self.nodes)}
        code, detail = "timeout", ""
        while time.time() < deadline and not self.stop_flag.is_set():
            node = self.nodes[n]
            run = node.run
            try:
                if proto == "resp":
                    conn = RespConn(node.resp_port, 2)
                    try:
                        reply = (conn.call("INCR", "sequence:" + tag) if count == 1
                                 else conn.call("LEAF.IDS", "sequence:" + tag, count))
                    finally:
                        conn.close()
                    ids = [reply] if count == 1 else reply
                else:
                    conn = httpclient.HTTPConnection("127.0.0.1", node.port, timeout=2)
                    try:
                        conn.request("GET", "/api/%s/get/%s%s" % (mode, tag, "?count=%d" % count
                                                                   if count > 1 else ""))
                        r = conn.getresponse()
                        body = r.read()
                        loc = r.getheader("Location") or ""
                    finally:
                        conn.close()
                    if r.status == 307:
                        n = port_of.get(int(loc.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]), n)
                        continue
                    if r.status != 200:
                        code = json.loads(body).get("code", "http_%d" % r.status)
                        detail = body[:120].decode("utf-8", "replace")
                        time.sleep(0.02)
                        continue
                    ids = [int(x) for x in body.split(b"\n")]
                self.requests += 1
                self.seq_calls.append((tag, s0, time.monotonic_ns(), array("q", ids), None))
                self._success(n, run, mode, tag, count, t0, time.time(), array("q", ids))
                return
            except RespError as e:
                if e.code == "moved":
                    n = resp_of.get(int(e.line.rsplit(":", 1)[1]), n)
                    continue
                code, detail = e.code, e.line[:120]
                time.sleep(0.02)
            except Exception as e:  # noqa: BLE001 - every failure is recorded
                code, detail = classify(e), repr(e)[:120]
                n = (n + 1) % len(self.nodes)  # a dead node: try the next one
                time.sleep(0.02)
        if self.stop_flag.is_set() and code == "timeout" and not detail:
            return  # cut short by the end of the run before any answer: not an error
        self.requests += 1
        self.seq_calls.append((tag, s0, time.monotonic_ns(), None, code))
        self.errors.append((n, run, mode, tag, t0, time.time(), code, detail))

    def _http(self, conn, n, run, mode, tag, count, t0):
        if mode == "range":
            path = "/api/segment/range/%s?count=%d" % (tag, count)
        else:
            path = "/api/%s/get/%s" % (mode, tag) + ("?count=%d" % count if count > 1 else "")
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read()
        t1 = time.time()
        self.requests += 1
        if r.will_close:
            self._drop((n, "http"))
        if r.status == 200:
            try:
                if mode == "range":
                    j = json.loads(body)
                    ids = array("q", range(int(j["start"]), int(j["end"]) + 1))
                else:
                    ids = array("q", (int(x) for x in body.split(b"\n")))
            except (ValueError, KeyError, TypeError):
                ids = body
            self._success(n, run, "segment" if mode == "range" else mode, tag, count, t0, t1, ids)
            return
        try:
            code = json.loads(body).get("code") or "http_%d" % r.status
        except ValueError:
            code = "http_%d" % r.status
        self.errors.append((n, run, record_mode(mode), tag, t0, t1, code,
                            body[:160].decode("utf-8", "replace")))
        time.sleep(0.01)

    def _resp(self, conn, n, run, mode, tag, count, t0):
        key = "%s:%s" % (mode, tag)
        dense = mode == "segment" and count > 1 and self.rng.random() < 0.5
        try:
            if count == 1:
                reply = [conn.call("INCR", key)]
            elif dense:
                last = conn.call("INCRBY", key, count)
                reply = list(range(last - count + 1, last + 1)) if isinstance(last, int) else last
            else:
                reply = conn.call("LEAF.IDS", key, count)
        except RespError as e:
            self.requests += 1
            self.errors.append((n, run, record_mode(mode), tag, t0, time.time(), e.code,
                                e.line[:160]))
            time.sleep(0.01)
            return
        t1 = time.time()
        self.requests += 1
        if isinstance(reply, list) and all(isinstance(x, int) for x in reply):
            self._success(n, run, mode, tag, count, t0, t1, array("q", reply))
        else:
            self._success(n, run, mode, tag, count, t0, t1, repr(reply).encode())

    def run(self):
        while not self.stop_flag.is_set():
            n, mode, tag, count = self._pick()
            proto = "resp" if self.rng.random() < 0.5 and mode != "range" else "http"
            if mode == "sequence":
                self._sequence(n, mode, tag, count, proto)
                if self.pause:
                    time.sleep(self.pause)
                continue
            t0 = time.time()
            run = self.nodes[n].run
            try:
                c = self._conn(n, proto)
                if c is None:
                    continue
                conn, run = c
                if proto == "resp":
                    self._resp(conn, n, run, mode, tag, count, t0)
                else:
                    self._http(conn, n, run, mode, tag, count, t0)
            except Exception as e:  # noqa: BLE001 - every failure is recorded
                t1 = time.time()
                self.requests += 1
                self._drop((n, proto))
                self.errors.append((n, run, record_mode(mode), tag, t0, t1, classify(e),
                                    repr(e)[:160]))
                time.sleep(0.02)
            if self.pause:
                time.sleep(self.pause)
        for key in list(self.conns):
            self._drop(key)

    def _success(self, n, run, mode, tag, count, t0, t1, ids):
        """ids: the IDs as an array, or the raw answer (bytes) when it was not IDs."""
        if not isinstance(ids, array):
            self.violations.append("client %d: node %d run %d %s/%s: a success that is not "
                                   "IDs: %r" % (self.idx, n, run, mode, tag, ids[:80]))
            return
        bad = None
        if len(ids) != count:
            bad = "%d IDs for count=%d" % (len(ids), count)
        elif ids[0] <= 0:
            bad = "non-positive ID %d" % ids[0]
        elif mode != "opaque" and any(a >= b for a, b in zip(ids, ids[1:])):
            bad = "IDs not ascending within one answer"
        if bad:
            self.violations.append("client %d: node %d run %d %s/%s at %.3f: %s"
                                   % (self.idx, n, run, mode, tag, t1, bad))
        self.ok.append((n, run, mode, tag, t0, t1, ids))
