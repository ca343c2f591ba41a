"""Sequence clients (docs/cluster.md, "Sequences") and the checks on what they saw.

Clients are threads that ask for IDs of one sequence until stopped, bounded in
time, and follow the cluster as a well-behaved client would:
- HTTP: GET /api/sequence/get/{name}[?count=N] on a keep-alive connection.
  307 -> the Location header's host:port (else the JSON "primary"); 503 with
  code no_primary -> retry a few ms later on the next node.
- RESP: INCR sequence:{name} or LEAF.IDS sequence:{name} N.
  -MOVED <slot> <ip>:<port> -> reconnect there; -TRYAGAIN -> retry a few ms later.
- A refused, reset or timed-out connection -> the next node of the list.
A client made with follow=False stays on its node whatever it answers (a probe
of one node, e.g. the partitioned old primary).

Every successful answer becomes a Record (client, send, recv, lo, hi, ids,
node) and every other outcome an Event (client, t, kind, node, detail), kind
one of redirect, tryagain (RESP TRYAGAIN), no_primary (HTTP 503 no_primary),
conn (refused/reset/closed), timeout, error (any other answer). All times are
time.monotonic() of this process: send is taken before the request is
written, recv after the answer is parsed, so "recv(A) < send(B)" proves that
A was received before B was sent.

Checks: check_strict_order and order_report (IDs unique; real-time order: the
order checker, tests/lib/ordercheck.py, over the records, the events kept as
failed calls), max_gap, max_unavailable, handover_windows, event_window;
O(n log n), fine at 200k+.
"""
import http.client as httpclient
import json
import socket
import threading
import time
from collections import namedtuple
from urllib.parse import urlsplit

from ordercheck import Histories

Record = namedtuple("Record", "client send recv lo hi ids node")
Event = namedtuple("Event", "client t kind node detail")
FAIL_KINDS = ("redirect", "tryagain", "no_primary")  # what docs/cluster.md allows at a handover

RETRY_PAUSE = 0.005  # s between retries after 503/TRYAGAIN/connection errors


def _ids_value(ids):
    """A compact, exact copy of an answer's IDs: a range when consecutive."""
    if len(ids) > 1 and ids[-1] - ids[0] == len(ids) - 1 and \
            all(b == a + 1 for a, b in zip(ids, ids[1:])):
        return range(ids[0], ids[-1] + 1)
    return tuple(ids)


class Recorder:
    """Collects the records and events of all clients (list.append is atomic)."""

    def __init__(self):
        self.records = []
        self.events = []
        self.t0 = time.monotonic()

    def record(self, client, send, recv, ids, node):
        self.records.append(Record(client, send, recv, min(ids), max(ids), _ids_value(ids), node))

    def event(self, client, t, kind, node, detail=""):
        self.events.append(Event(client, t, kind, node, detail))

    def snapshot(self):
        return list(self.records), list(self.events)

    def rel(self, t):
        return "%.3f" % (t - self.t0)


class Target:
    """Where a node answers: its name, HTTP port and RESP port (loopback)."""

    def __init__(self, name, http_port, resp_port):
        self.name, self.http_port, self.resp_port = name, http_port, resp_port


class _Client(threading.Thread):
    def __init__(self, name, rec, targets, seq, start=0, follow=True, max_s=240, pause=0.0,
                 timeout=1.0):
        super().__init__(daemon=True, name=name)
        self.cname, self.rec, self.targets, self.seq = name, rec, targets, seq
        self.follow, self.max_s, self.pause, self.timeout = follow, max_s, pause, timeout
        self.idx = start % len(targets)
        self.addr = None  # (host, port) when following a redirect
        self.stop_flag = threading.Event()
        self.answers = 0
        self.hops = 0  # redirects followed in a row; past 3 a pause, against ping-pong

    def node_of(self, host, port):
        for t in self.targets:
            if port in (t.http_port, t.resp_port):
                return t.name
        return "%s:%d" % (host, port)

    def follow_to(self, host, port):
        self.addr = (host or "127.0.0.1", int(port))
        self.hops += 1
        if self.hops > 3:
            time.sleep(RETRY_PAUSE)

    def next_node(self):
        self.addr = None
        if self.follow:
            self.idx = (self.idx + 1) % len(self.targets)

    def run(self):
        end = time.monotonic() + self.max_s
        while not self.stop_flag.is_set() and time.monotonic() < end:
            try:
                self.one()
            except (socket.timeout, TimeoutError) as e:
                self.fail("timeout", repr(e))
            except (OSError, httpclient.HTTPException) as e:
                self.fail("conn", repr(e))
            except ValueError as e:  # a 200 without IDs, an odd reply
                self.fail("error", repr(e))
            if self.pause:
                time.sleep(self.pause)
        self.close()

    def fail(self, kind, detail):
        self.rec.event(self.cname, time.monotonic(), kind, self.current_node(), detail[:200])
        self.close()
        self.next_node()
        time.sleep(RETRY_PAUSE)

    def stop(self):
        self.stop_flag.set()


class HttpSeqClient(_Client):
    """GET /api/sequence/get/{seq}[?count=N], following 307 and retrying 503 no_primary."""

    def __init__(self, name, rec, targets, seq, count=1, **kw):
        super().__init__(name, rec, targets, seq, **kw)
        self.path = "/api/sequence/get/%s" % seq + ("?count=%d" % count if count > 1 else "")
        self.conn = None
        self.conn_addr = None

    def current(self):
        return self.addr or ("127.0.0.1", self.targets[self.idx].http_port)

    def current_node(self):
        return self.node_of(*self.current())

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def one(self):
        addr = self.current()
        if self.conn is None or self.conn_addr != addr:
            self.close()
            self.conn = httpclient.HTTPConnection(addr[0], addr[1], timeout=self.timeout)
            self.conn_addr = addr
        send = time.monotonic()
        self.conn.request("GET", self.path)
        r = self.conn.getresponse()
        body = r.read().decode("utf-8", "replace")
        recv = time.monotonic()
        node = self.node_of(*addr)
        if r.status == 200:
            ids = [int(x) for x in body.split()]
            if not ids:
                raise ValueError("200 without IDs: %r" % body[:80])
            self.rec.record(self.cname, send, recv, ids, node)
            self.answers += 1
            self.hops = 0
            return
        err = _json(body)
        if r.status == 307 and self.follow:
            loc = urlsplit(r.getheader("Location") or "")
            hostport = loc.netloc or err.get("primary", "")
            self.rec.event(self.cname, recv, "redirect", node, hostport)
            host, _, port = hostport.rpartition(":")
            if port.isdigit():
                self.follow_to(host, port)
            else:
                self.next_node()
                time.sleep(RETRY_PAUSE)
            return
        kind = "no_primary" if (r.status == 503 and err.get("code") == "no_primary") else \
            "redirect" if r.status == 307 else "error"
        self.rec.event(self.cname, recv, kind, node, "%d %s" % (r.status, body[:160]))
        if r.getheader("Connection", "").lower() == "close":
            self.close()
        self.next_node()
        time.sleep(RETRY_PAUSE)


def _json(body):
    try:
        v = json.loads(body)
        return v if isinstance(v, dict) else {}
    except ValueError:
        return {}


def resp_command(*args):
    """The RESP2 frame of one command."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RespReader:
    """Parses RESP2/RESP3 replies from a socket: ints, bulk, simple, errors, arrays."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.sock.recv(65536)
            if not d:
                raise ConnectionError("closed by the server")
            self.buf += d
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b":", b"("):
            return int(rest)
        if t in (b"+",):
            return rest.decode()
        if t in (b"-", b"!"):
            return RespError(rest.decode("utf-8", "replace"))
        if t in (b"$", b"="):
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                d = self.sock.recv(65536)
                if not d:
                    raise ConnectionError("closed by the server")
                self.buf += d
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v.decode("utf-8", "replace")
        if t in (b"*", b">", b"~"):
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"_":
            return None
        raise ValueError("unexpected RESP reply %r" % line[:80])


class RespError(str):
    pass


class RespSeqClient(_Client):
    """INCR sequence:{seq} (count 1) or LEAF.IDS sequence:{seq} N, following MOVED."""

    def __init__(self, name, rec, targets, seq, count=1, **kw):
        super().__init__(name, rec, targets, seq, **kw)
        key = "sequence:" + seq
        self.frame = resp_command("INCR", key) if count == 1 else \
            resp_command("LEAF.IDS", key, count)
        self.sock = None
        self.sock_addr = None

    def current(self):
        return self.addr or ("127.0.0.1", self.targets[self.idx].resp_port)

    def current_node(self):
        return self.node_of(*self.current())

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def one(self):
        addr = self.current()
        if self.sock is None or self.sock_addr != addr:
            self.close()
            self.sock = socket.create_connection(addr, timeout=self.timeout)
            self.sock_addr = addr
            self.reader = RespReader(self.sock)
        send = time.monotonic()
        self.sock.sendall(self.frame)
        v = self.reader.read()
        recv = time.monotonic()
        node = self.node_of(*addr)
        if isinstance(v, RespError):
            word = v.split(" ", 1)[0]
            if word == "MOVED" and self.follow:
                self.rec.event(self.cname, recv, "redirect", node, v)
                host, _, port = v.split()[-1].rpartition(":")
                self.follow_to(host, port)
                return
            kind = {"MOVED": "redirect", "TRYAGAIN": "tryagain"}.get(word, "error")
            self.rec.event(self.cname, recv, kind, node, v[:160])
            self.next_node()
            time.sleep(RETRY_PAUSE)
            return
        ids = [v] if isinstance(v, int) else [int(x) for x in (v or [])]
        if not ids:
            raise ValueError("empty or odd reply %r" % (v,))
        self.rec.record(self.cname, send, recv, ids, node)
        self.answers += 1
        self.hops = 0


# ---- checks -----------------------------------------------------------------

def histories(records, events=(), key="sequence"):
    """The records (and events, as failed calls) as the order checker's Histories
    (tests/lib/ordercheck.py), each call named client@node."""
    h = Histories()
    for r in records:
        who = "%s@%s" % (r.client, r.node)
        if isinstance(r.ids, range):
            h.add(who, key, _ns(r.send), _ns(r.recv), r.ids.start, len(r.ids))
        else:
            h.add(who, key, _ns(r.send), _ns(r.recv), ids=r.ids)
    for e in events:  # when it was sent is not kept: it holds no value either way
        h.add("%s@%s" % (e.client, e.node), key, _ns(e.t), _ns(e.t), error=e.kind)
    return h


def _ns(t):
    """time.monotonic() seconds back to the nanoseconds of time.monotonic_ns()."""
    return int(round(t * 1e9))


def order_report(records, events=(), key="sequence", limit=5):
    """(violations as strings, the checker's summary line): every answer's IDs ascend and are
    positive; through the order checker, no ID repeats and when answer A was received before
    request B was sent, min(B) > max(A)."""
    bad = ["answer not ascending/positive: %s" % (r,) for r in records
           if r.lo <= 0 or (not isinstance(r.ids, range) and
                            any(b <= a for a, b in zip(r.ids, r.ids[1:])))][:limit]
    found, text = histories(records, events, key).report(limit)
    for v in found:
        if v.kind == "repeat":
            bad.append("duplicate ID %d: %s" % (v.value, v))
        elif v.kind == "order":
            bad.append(str(v))
    return bad[:limit], text.split("\n", 1)[0]


def check_strict_order(records, limit=5):
    """Returns a list of violation strings (empty = all good): order_report's."""
    return order_report(records, limit=limit)[0]


def max_gap(records):
    """(gap, after_id, before_id): the largest run of missing IDs between answers."""
    iv = sorted((r.lo, r.hi) for r in records)
    best, at = 0, (None, None)
    for (lo1, hi1), (lo2, _) in zip(iv, iv[1:]):
        if lo2 - hi1 - 1 > best:
            best, at = lo2 - hi1 - 1, (hi1, lo2)
    return best, at[0], at[1]


def ids_rate(records, t_from, t_to):
    """IDs per second received in [t_from, t_to]."""
    n = sum(r.hi - r.lo + 1 for r in records if t_from <= r.recv <= t_to)
    return n / max(t_to - t_from, 1e-6)


def max_unavailable(records, t_from, t_to):
    """(seconds, start, end): the longest stretch of [t_from, t_to] with no
    successful answer to anyone."""
    ts = sorted(r.recv for r in records if t_from < r.recv < t_to)
    pts = [t_from] + ts + [t_to]
    best = max(range(len(pts) - 1), key=lambda k: pts[k + 1] - pts[k])
    return pts[best + 1] - pts[best], pts[best], pts[best + 1]


def first_answer(records, after, node=None, exclude=None):
    """The first record received after `after` (from node / not from exclude)."""
    c = [r for r in records if r.recv > after and (node is None or r.node == node) and
         (exclude is None or r.node != exclude)]
    return min(c, key=lambda r: r.recv) if c else None


def last_answer(records, node, before=float("inf")):
    c = [r for r in records if r.node == node and r.recv < before]
    return max(c, key=lambda r: r.recv) if c else None


def event_window(events, t_from, t_to, kinds=FAIL_KINDS):
    """(count, first, last) of events of these kinds in [t_from, t_to]."""
    ts = [e.t for e in events if e.kind in kinds and t_from <= e.t <= t_to]
    return (len(ts), min(ts), max(ts)) if ts else (0, None, None)


def handover_windows(records, events, t_from, t_to):
    """Per client, the longest time from its first failed attempt (any Event)
    after t_from to its next successful answer: what that client saw of the
    handover. Returns {client: seconds}; a client still failing at t_to
    counts up to t_to."""
    per = {}
    for r in records:
        if t_from <= r.recv <= t_to:
            per.setdefault(r.client, []).append((r.recv, 1))
    for e in events:
        if t_from <= e.t <= t_to:
            per.setdefault(e.client, []).append((e.t, 0))
    out = {}
    for c, items in per.items():
        items.sort()
        start, worst = None, 0.0
        for t, ok in items:
            if not ok and start is None:
                start = t
            elif ok and start is not None:
                worst, start = max(worst, t - start), None
        if start is not None:
            worst = max(worst, t_to - start)
        out[c] = worst
    return out


def summary(records, events):
    """One line: answers and IDs per node, events per kind."""
    nodes, kinds = {}, {}
    for r in records:
        nodes[r.node] = nodes.get(r.node, 0) + 1
    for e in events:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    return "%d answers %s, %d IDs, events %s" % (
        len(records), nodes, sum(r.hi - r.lo + 1 for r in records), kinds)

