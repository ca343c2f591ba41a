"""Connection slots per client address (docs/reference/configuration.md,
leafd.http.max.connections.per.address; docs/OPERATIONS.md): one client cannot hold every
connection the node allows.

- leafd.http.max.connections = 40, the per-address limit left at its default (half: 20): a
  client on 127.0.0.1 holds 20 connections, HTTP and RESP together (keep-alive, answered once);
  its next HTTP connection gets 503 too_many_connections (the JSON error shape) and a close, its
  next RESP one "-ERR max number of clients reached ..." and a close; meanwhile /health from
  127.0.0.2 answers 200, on 15 connections at once. One line a second names the key and the
  address. When the client closes one, it may open one again.
- Two addresses cannot take every slot (docs/OPERATIONS.md, "Connection slots"): with 127.0.0.1
  holding its 20, 127.0.0.2 gets 15 (the last 5 slots, the reserve, are only for addresses that
  hold fewer than 4 connections); then 127.0.0.3 and 127.0.0.4 are still served (/health 200,
  four and one connections), and the next connection of 127.0.0.2 is refused.
- The key set to leafd.http.max.connections (no limit per address): the same client takes all
  40 slots and /health from 127.0.0.2 is refused (503 from the limit for the whole process):
  what the default prevents.
- Clients that never read (docs/OPERATIONS.md, "Clients that do not read"): 8 HTTP connections
  pipelining GET /metrics and 8 RESP connections pipelining COMMAND DOCS, none reading a byte,
  with leafd.http.request.timeout.ms = 2000: their writes make no progress, so the node closes
  every one of them (leafd_http_connections falls back) within 30 s, counted by
  leafd_http_connections_closed_unread_total, while /health is served.
"""
import json
import socket
import time

from leafdtest import (unread_socket, Env, HttpStream, check, get_request, http, log, resp_command,
                       static_props, wait_until)

LIMIT = 40
CLIENT, OTHER = "127.0.0.1", "127.0.0.2"


def connect(port, source):
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))


class SourceStream(HttpStream):
    """An HttpStream from a chosen loopback source address; raw keeps every byte received."""

    def __init__(self, port, source):
        self.sock, self.buf, self.eof, self.raw = connect(port, source), b"", False, b""

    def _fill(self):
        before = len(self.buf)
        more = HttpStream._fill(self)
        self.raw += self.buf[before:]
        return more


def open_held(port, source, resp):
    """A keep-alive connection from source, asked once: (socket, its first answer). A held one
    answers 200 / +PONG; a refused one is told why and closed."""
    st = SourceStream(port, source)
    try:
        st.send(resp_command("PING") if resp else get_request("/health"))
        if resp:
            while not st.buf.endswith(b"\r\n") and st._fill():
                pass
        else:
            st.read_response()
    except OSError:
        pass
    return st.sock, st.raw


def refusal(port, source):
    """What a connection from source is told before the server closes it (b"" if nothing)."""
    s = connect(port, source)
    data = b""
    try:
        while True:
            got = s.recv(4096)
            if not got:
                break
            data += got
    except OSError:
        pass
    s.close()
    return data


def health(port, source):
    """The status of GET /health on a new connection from source (0: none came)."""
    st = SourceStream(port, source)
    try:
        st.send(get_request("/health"))
        r = st.read_response()
        return r[0] if r else 0
    except (OSError, ValueError):
        return 0
    finally:
        st.close()



def open_conns(port):
    """leafd_http_connections summed over the protocols (this request's own one included)."""
    _, body, _ = http(port, "/metrics")
    return sum(int(float(l.split()[-1])) for l in body.splitlines()
               if l.startswith("leafd_http_connections{"))


def non_readers(env):
    node = env.leafd("unread", static_props(13, **{"leafd.http.request.timeout.ms": "2000",
                                                    "leafd.threads": "2"}), resp=True)
    base = open_conns(node.port)
    held = [unread_socket(node.port, get_request("/metrics") * 4000) for _ in range(8)]
    held += [unread_socket(node.resp_port, resp_command("COMMAND", "DOCS") * 8000) for _ in range(8)]
    t = time.monotonic()
    # (A loaded machine may close some before a /metrics request sees all 16: not checked.)
    peak = open_conns(node.port) - base
    gone = wait_until(lambda: open_conns(node.port) <= base, 30, 0.25)
    log("clients that never read: %d seen open, all closed by the node after %.1f s (%d open now)"
        % (peak, time.monotonic() - t, open_conns(node.port) - base))
    check(gone, "every connection whose client reads nothing is closed within 30 s")
    check("bytes of replies unread for" in node.log_text(), "the node says why it closed them")
    _, body, _ = http(node.port, "/metrics")
    closed = [l for l in body.splitlines()
              if l.startswith("leafd_http_connections_closed_unread_total ")]
    check(closed and int(float(closed[0].split()[-1])) == 16,
          "leafd_http_connections_closed_unread_total counts the 16: %s" % closed)
    check(health(node.port, OTHER) == 200, "/health is served meanwhile")
    for s in held:
        s.close()
    node.stop()


def body_of(response):
    return json.loads(response.split(b"\r\n\r\n", 1)[1]) if b"\r\n\r\n" in response else {}


with Env() as env:
    node = env.leafd("limits", static_props(11, **{"leafd.http.max.connections": str(LIMIT),
                                                   "leafd.threads": "2"}), resp=True)
    t0 = time.monotonic()
    held, refused = [], []
    for i in range(LIMIT + 6):  # tries to take every slot, and more
        resp = i % 2 == 1
        s, got = open_held(node.resp_port if resp else node.port, CLIENT, resp)
        if got == b"+PONG\r\n" or got.startswith(b"HTTP/1.1 200 "):
            held.append(s)
        else:
            refused.append(got)
            s.close()
    log("%s tried %d connections (HTTP and RESP): %d held, %d refused, in %.2f s"
        % (CLIENT, LIMIT + 6, len(held), len(refused), time.monotonic() - t0))
    check(len(held) == LIMIT // 2, "%s holds half of the slots: %d" % (CLIENT, len(held)))
    check(all(r.startswith(b"HTTP/1.1 503 ") or r.startswith(b"-ERR max number of clients reached")
              for r in refused) and len(refused) == LIMIT // 2 + 6,
          "the others are refused with 503 / -ERR: %r" % refused[:1])

    got = refusal(node.port, CLIENT)
    check(got.startswith(b"HTTP/1.1 503 ") and body_of(got).get("code") == "too_many_connections",
          "the next HTTP connection from %s: 503 too_many_connections and a close (%r)" % (CLIENT, got[:160]))
    check("leafd.http.max.connections.per.address" in body_of(got).get("message", ""),
          "the message names the key")
    got = refusal(node.resp_port, CLIENT)
    check(got.startswith(b"-ERR max number of clients reached") and b"per.address" in got,
          "the next RESP connection from %s: -ERR and a close (%r)" % (CLIENT, got[:160]))

    others = []
    for _ in range(LIMIT // 2):
        s, got = open_held(node.port, OTHER, False)
        if not got.startswith(b"HTTP/1.1 200 "):
            s.close()
            break
        others.append(s)
    check(len(others) == 15, "%s holds 15 connections beside %s's 20 (got %d)"
          % (OTHER, CLIENT, len(others)))
    third = []
    for source, n in (("127.0.0.3", 4), ("127.0.0.4", 1)):
        for _ in range(n):
            s, got = open_held(node.port, source, False)
            third.append(s)
            check(got.startswith(b"HTTP/1.1 200 "),
                  "with two addresses holding 35 of 40: /health from %s is served (%r)"
                  % (source, got[:40]))
    got = refusal(node.port, OTHER)
    check(got.startswith(b"HTTP/1.1 503 "), "%s's next connection is refused (%r)" % (OTHER, got[:40]))
    for s in others + third:
        s.close()

    text = node.log_text()
    lines = [l for l in text.splitlines() if "max.connections.per.address" in l]
    check(lines and "= 20 reached by 127.0.0.1;" in lines[0],
          "a log line names the key, its value and the address: %s" % (lines[:1] or text[-400:]))

    held.pop().close()
    check(wait_until(lambda: health(node.port, CLIENT) == 200, 5),
          "a connection closed: %s may open one again" % CLIENT)
    for s in held:
        s.close()
    node.stop()

    log("the limit per address off (set to leafd.http.max.connections): one client takes every slot")
    node = env.leafd("nolimit", static_props(12, **{
        "leafd.http.max.connections": str(LIMIT),
        "leafd.http.max.connections.per.address": str(LIMIT), "leafd.threads": "2"}))
    held = []
    for i in range(LIMIT):
        s, got = open_held(node.port, CLIENT, False)
        check(got.startswith(b"HTTP/1.1 200 "), "%s connection %d is served" % (CLIENT, i))
        held.append(s)
    got = refusal(node.port, OTHER)
    check(got.startswith(b"HTTP/1.1 503 ") and body_of(got).get("code") == "too_many_connections",
          "/health from %s: refused, 503 from the limit for the whole process (%r)" % (OTHER, got[:80]))
    for s in held:
        s.close()
    check(wait_until(lambda: health(node.port, OTHER) == 200, 5), "served again once they close")
    node.stop()
    non_readers(env)
    log("done in %.1f s" % (time.monotonic() - t0))
    env.finish()
