"""Connection limits and fairness (the HTTP server).

- leafd.http.idle.timeout.ms=500: an idle keep-alive connection is closed by
  the server after ~0.5-2.5 s; a connection that keeps talking is not.
- Slowloris: clients sending one header (or body) byte per 100 ms do not
  delay other clients, and with leafd.http.request.timeout.ms=1000 get 408 or a close.
- Half-open clients (partial request, then shutdown of their write side) are
  closed and do not block others.
- 200 concurrent connections are all served (twice, keep-alive).
- A client that pipelines 5000 heavy requests and never reads does not stop
  others from being served (output back-pressure bounds the server's memory),
  and the server stays alive.
"""
import selectors
import socket
import threading
import time

from leafdtest import (Env, check, get_request, http, HttpStream, log, rss_kb, static_props)

IDLE_MS = 500
REQUEST_MS = 1000


def latency_probe(port, n, name, limit=0.5):
    """n fresh-connection requests; checks each is answered within limit seconds."""
    worst, fails = 0.0, []
    for k in range(n):
        t = time.monotonic()
        try:
            st, body, _ = http(port, "/api/snowflake/get/probe", timeout=5)
        except OSError as e:
            st, body = 0, str(e)
        dt = time.monotonic() - t
        worst = max(worst, dt)
        if st != 200 or not body.isdigit():
            fails.append("%d %r" % (st, body[:80]))
    check(not fails, "%s: %d probes answered 200 (failures: %s)" % (name, n, fails[:3]))
    check(worst < limit, "%s: worst probe latency %.3f s < %.1f s" % (name, worst, limit))
    return worst


def idle_timeout(port):
    s = HttpStream(port)
    s.send(get_request("/health"))
    r = s.read_response()
    check(r is not None and r[0] == 200, "idle: first answer")
    t = time.monotonic()
    closed = s.closed_by_server(5.0)
    dt = time.monotonic() - t
    log("idle keep-alive connection closed after %.2f s" % dt)
    check(closed and 0.45 <= dt <= 2.5, "idle: closed by the server in 0.5-2.5 s (closed=%s after %.2f s)" % (closed, dt))
    s.close()
    # A connection that never sends anything is closed too.
    s = HttpStream(port)
    t = time.monotonic()
    closed = s.closed_by_server(5.0)
    dt = time.monotonic() - t
    check(closed and 0.45 <= dt <= 2.5, "silent connection: closed in 0.5-2.5 s (closed=%s after %.2f s)" % (closed, dt))
    s.close()
    # One that keeps talking every 200 ms for 3 s stays open.
    s = HttpStream(port)
    ok = True
    end = time.monotonic() + 3.0
    while time.monotonic() < end and ok:
        s.send(get_request("/health"))
        r = s.read_response()
        ok = r is not None and r[0] == 200
        time.sleep(0.2)
    check(ok, "active keep-alive connection (a request every 200 ms) stays open for 3 s")
    s.close()


class Slowloris(threading.Thread):
    """Sends one request head one byte every 100 ms; records how it ended."""

    def __init__(self, port, body=False):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if body:  # the head at once, then a slow body
            self.sock.sendall(get_request("/api/snowflake/get/slow", headers={"Content-Length": "300"}))
            self.data = b"b" * 300
        else:
            self.data = get_request("/api/snowflake/get/slow", headers={"X-Slow": "s" * 200})
        self.result = None  # "408", "closed", "answered:<status>", "open"
        self.elapsed = None

    def run(self):
        start = time.monotonic()
        self.sock.settimeout(0.1)
        got = b""
        for k in range(len(self.data) - 2):  # never complete the head
            try:
                self.sock.sendall(self.data[k:k + 1])
            except OSError:
                self.result = "closed"
                break
            try:
                chunk = self.sock.recv(4096)
                if not chunk:
                    self.result = "closed"
                    break
                got += chunk
            except socket.timeout:
                pass
            except OSError:
                self.result = "closed"
                break
            if time.monotonic() - start > 8:
                self.result = "open"
                break
        self.elapsed = time.monotonic() - start
        if got:
            self.result = "answered:" + got.split(b" ", 2)[1].decode("latin-1", "replace") \
                if got.startswith(b"HTTP/1.") else "garbage"
            self.body = got
        self.sock.close()


def slowloris(port):
    slow = [Slowloris(port, body=k % 2 == 1) for k in range(20)]
    for t in slow:
        t.start()
    time.sleep(0.3)
    latency_probe(port, 30, "during slowloris")
    for t in slow:
        t.join(12)
    results = [t.result for t in slow]
    elapsed = [t.elapsed or 99 for t in slow]
    log("slowloris results %s, elapsed %.2f-%.2f s" % (sorted(set(map(str, results))), min(elapsed), max(elapsed)))
    check(all(r in ("answered:408", "closed") for r in results),
          "slowloris: every slow client gets 408 or a close (got %s)" % sorted(set(map(str, results))))
    check(max(elapsed) < 3.5, "slowloris: cut off within ~request.timeout + sweep (max %.2f s)" % max(elapsed))
    answered = [t for t in slow if t.result == "answered:408"]
    if answered:
        b = answered[0].body
        check(b"application/json" in b and b'"code":"' in b, "slowloris 408 carries the JSON error shape: %r" % b[:300])


def half_open(port):
    socks = []
    for _ in range(10):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /api/snowflake/get/half HTTP/1.1\r\nHost: x\r\n")  # head not finished
        s.shutdown(socket.SHUT_WR)
        socks.append(s)
    latency_probe(port, 10, "during half-open clients")
    closed = 0
    for s in socks:
        try:
            s.settimeout(4)
            data = s.recv(65536)
            while data:
                data = s.recv(65536)
            closed += 1
        except socket.timeout:
            pass
        except OSError:
            closed += 1
        s.close()
    check(closed == len(socks), "half-open: the server closes all %d (closed %d)" % (len(socks), closed))
    # A complete request followed by a half-close is still answered.
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(get_request("/api/snowflake/get/half"))
        s.shutdown(socket.SHUT_WR)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    check(data.startswith(b"HTTP/1.1 200"), "complete request then half-close: answered (%r)" % data[:60])


def concurrent(port, n=200):
    sel = selectors.DefaultSelector()
    conns = []
    for k in range(n):
        s = HttpStream(port, timeout=10)
        conns.append(s)
    ok_rounds = []
    for rnd in range(2):
        for k, s in enumerate(conns):
            s.send(get_request("/api/snowflake/get/c%d" % k))
        pending = {s.sock: s for s in conns}
        for s in conns:
            s.sock.setblocking(False)
            sel.register(s.sock, selectors.EVENT_READ)
        answers = {}
        deadline = time.monotonic() + 15
        while pending and time.monotonic() < deadline:
            for key, _ in sel.select(0.5):
                st = pending.get(key.fileobj)
                if st is None:
                    continue
                try:
                    chunk = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    answers[key.fileobj] = None
                    sel.unregister(key.fileobj)
                    del pending[key.fileobj]
                    continue
                st.buf += chunk
                if b"\r\n\r\n" in st.buf:
                    head, rest = st.buf.split(b"\r\n\r\n", 1)
                    clen = [int(l.split(b":")[1]) for l in head.split(b"\r\n")
                            if l.lower().startswith(b"content-length:")]
                    if clen and len(rest) >= clen[0]:
                        answers[key.fileobj] = (head.split(b" ")[1], rest[:clen[0]])
                        st.buf = rest[clen[0]:]
                        sel.unregister(key.fileobj)
                        del pending[key.fileobj]
        for s in conns:
            if s.sock in pending:
                sel.unregister(s.sock)
            s.sock.setblocking(True)
        good = [a for a in answers.values() if a and a[0] == b"200" and a[1].isdigit()]
        ids = [int(a[1]) for a in good]
        ok_rounds.append(len(good))
        check(len(good) == n and len(set(ids)) == n,
              "concurrent round %d: all %d connections served, unique IDs (got %d, %d unique)"
              % (rnd, n, len(good), len(set(ids))))
    for s in conns:
        s.close()
    sel.close()


class NonReader(threading.Thread):
    """Pipelines heavy requests and never reads a byte of the answers."""

    def __init__(self, port, n):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        self.data = get_request("/api/snowflake/get/flood?count=1000") * n
        self.sent = 0
        self.stop = False

    def run(self):
        self.sock.settimeout(0.2)
        view = memoryview(self.data)
        while self.sent < len(self.data) and not self.stop:
            try:
                self.sent += self.sock.send(view[self.sent:self.sent + 65536])
            except socket.timeout:
                continue
            except OSError:
                break


def back_pressure(node):
    port = node.port
    pid = node.proc.p.pid
    before = rss_kb(pid)
    flood = NonReader(port, 5000)
    flood.start()
    time.sleep(2.0)
    mid = rss_kb(pid)
    latency_probe(port, 50, "during a non-reading pipelining client")
    s = HttpStream(port)
    s.send(get_request("/api/snowflake/get/k?count=10000") * 3)
    rs = s.read_responses(3)
    check(len(rs) == 3 and all(r[0] == 200 and len(r[2].split(b"\n")) == 10000 for r in rs),
          "during a non-reader: another keep-alive client gets 3 x 10000 IDs")
    s.close()
    time.sleep(1.0)
    after = rss_kb(pid)
    log("non-reader: sent %d of %d request bytes; RSS %d -> %d -> %d kB"
        % (flood.sent, len(flood.data), before, mid, after))
    # (The 345 kB of requests fit in the kernel's socket buffers, so whether
    # the server stopped reading shows in its memory, not in flood.sent.)
    # Unbounded output would be ~100 MB (5000 x 20 kB); the cap is 256 KiB.
    check(after - before < 64 * 1024, "non-reader: server RSS grew by %d kB (< 64 MB)" % (after - before))
    check(node.proc.alive(), "non-reader: server alive")
    flood.stop = True
    flood.join(5)
    flood.sock.close()
    time.sleep(0.2)
    latency_probe(port, 10, "after the non-reader left")
    check(node.proc.alive(), "server alive after the non-reader left")


def main():
    with Env() as env:
        node = env.leafd("limits", static_props(11, **{
            "leafd.http.idle.timeout.ms": str(IDLE_MS),
            "leafd.http.request.timeout.ms": str(REQUEST_MS)}))
        port = node.port
        idle_timeout(port)
        slowloris(port)
        half_open(port)
        concurrent(port, 200)
        back_pressure(node)
        check(node.proc.alive(), "server alive at the end")
        rc = node.stop()
        check(rc == 0, "SIGTERM after the limits test exits 0 (got %s)" % rc)
        env.finish()


if __name__ == "__main__":
    main()
