"""What a RESP connection may make the node hold (docs/reference/resp.md, "Memory per
connection"): under 512 KiB per connection for a client that reads its replies, before and
after AUTH, authentication on and off, in a transaction or not.

Each pattern runs on N connections one after another, which stay open; then the node's RSS
(/proc/PID/status) is read after a PING on each every 1.5 s, and the growth per connection must
stay under the documented bound:
- authentication off: MULTI, 999 x ECHO of 4000 bytes, EXEC (the queue stops at 160,000 bytes
  of arguments: "transaction too large" names the limit, EXEC answers -EXECABORT);
- authentication off, after `AUTH x y` (accepted, nobody checked): MULTI, 999 x ECHO of 16,000
  bytes; the command limit stays 4 KiB, so the first is "command too large" and a close;
- authentication on, before AUTH: MULTI is -NOAUTH; the ECHOs are answered one by one;
- authentication on, after AUTH as a user: MULTI, 999 x ECHO of 16,000 bytes, EXEC (as the first);
- a queue held just under its limit (no EXEC) on each connection; then EXEC answers each;
- authentication on, before AUTH, a client that never reads: COMMAND DOCS (6 KB of reply for
  30 bytes) pipelined 8000 times on each of 20 connections, not a byte read: the node stops
  reading such a client once the small budget of output before AUTH waits (docs/OPERATIONS.md,
  "Clients that do not read"), so it holds under the same bound per connection.
AddressSanitizer's quarantine would count freed memory as RSS: it is kept to 1 MB here.
"""
import json
import os
import socket
import threading
import time

from leafdtest import check, Env, http, log, resp_command, rss_kb, static_props, unread_socket
from zkhelpers import zk_props

BOUND_KB = 512  # docs/reference/resp.md, "Memory per connection"
TOKEN = "admin-token-of-the-memory-test"
ASAN = {"ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS", ""),
                                              "quarantine_size_mb=1"]))}


class Conn:
    """A raw RESP connection that sends in a thread while it reads, and counts replies (a bulk
    string is kept as its length only)."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf, self.pos, self.closed = bytearray(), 0, False

    def _fill(self):
        try:
            got = self.s.recv(1 << 20)
        except OSError:
            got = b""
        if not got:
            self.closed = True
            raise EOFError
        del self.buf[:self.pos]
        self.pos = 0
        self.buf += got

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return line
            self._fill()

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"$":
            n = int(rest)
            while n >= 0 and len(self.buf) - self.pos < n + 2:
                self._fill()
            self.pos += max(n, 0) + 2 if n >= 0 else 0
            return ("bulk", n)
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        text = line.decode("utf-8", "replace")
        return text[1:] if kind == b"+" else text

    def run(self, data, replies):
        """Sends data while reading up to replies replies; returns them (fewer when closed)."""
        def send():
            try:
                self.s.sendall(data)
            except OSError:
                pass  # closed by the server
        t = threading.Thread(target=send)
        t.start()
        got = []
        try:
            while len(got) < replies:
                got.append(self.reply())
        except EOFError:
            pass
        t.join()
        return got

    def ping(self):
        if not self.closed:
            self.run(resp_command("PING"), 1)


def echoes(n, size):
    return resp_command("ECHO", b"x" * size) * n


def measure(node, what, conns, pattern):
    """Runs pattern(conn) on each of conns connections, then PINGs every 1.5 s twice; returns the
    connections and the RSS growth per connection in KiB."""
    pid = node.proc.p.pid
    before = rss_kb(pid)
    t0 = time.monotonic()
    cs = []
    for i in range(conns):
        c = Conn(node.resp_port)
        pattern(i, c)
        cs.append(c)
    for _ in range(2):
        time.sleep(1.5)
        for c in cs:
            c.ping()
    per = (rss_kb(pid) - before) / conns
    log("%s: %d connections in %.1f s, RSS %d -> %d kB, %.0f KiB per connection"
        % (what, conns, time.monotonic() - t0, before, rss_kb(pid), per))
    check(per < BOUND_KB, "%s: %.0f KiB per connection, under %d" % (what, per, BOUND_KB))
    return cs


def unread_docs(node, conns):
    """conns connections that pipeline COMMAND DOCS before AUTH and never read; the RSS growth
    per connection after 1.5 s must stay under the bound."""
    pid = node.proc.p.pid
    before = rss_kb(pid)
    cs = []
    payload = resp_command("COMMAND", "DOCS") * 8000
    for _ in range(conns):
        cs.append(unread_socket(node.resp_port, payload, rcvbuf=None))
    time.sleep(1.5)
    per = (rss_kb(pid) - before) / conns
    log("auth on, before AUTH, COMMAND DOCS x 8000 never read: %d connections, RSS %d -> %d kB, "
        "%.0f KiB per connection" % (conns, before, rss_kb(pid), per))
    check(per < BOUND_KB, "a client that never reads, before AUTH: %.0f KiB per connection, under %d"
          % (per, BOUND_KB))
    for s in cs:
        s.close()


def close_all(cs):
    for c in cs:
        c.s.close()


def multi_echo(size, auth=None):
    def pattern(i, c):
        head = resp_command("AUTH", *auth) if auth else b""
        got = c.run(head + resp_command("MULTI") + echoes(999, size) + resp_command("EXEC"),
                    1002 if auth else 1001)
        if auth:
            got = got[1:]
        too_large = [g for g in got if isinstance(g, str) and "transaction too large" in g]
        queued = got.index(too_large[0]) - 1 if too_large else 0
        if i == 0:
            log("  %d queued, then: %s; EXEC: %.80r" % (queued, too_large[:1], got[-1:]))
        check(got[:1] == ["OK"] and too_large and "160000 bytes" in too_large[0] and
              got[-1:] and got[-1].startswith("-EXECABORT"),
              "conn %d: the queue stops at its limit, named; EXEC aborts (%.80r)" % (i, got[-1:]))
    return pattern


def auth_off_node(env, name, worker):
    node = env.leafd(name, static_props(worker, **{"leafd.threads": "2"}), resp=True, extra_env=ASAN)
    warm = Conn(node.resp_port)
    got = warm.run(resp_command("MULTI") + echoes(30, 4000) + resp_command("EXEC"), 32)
    check(got[-1:] and isinstance(got[-1], list) and len(got[-1]) == 30, "a transaction runs")
    return node


def auth_off(env):
    # One node per pattern: memory the first made the node hold would serve the second.
    node = auth_off_node(env, "off", 11)
    cs = measure(node, "auth off, MULTI + 999 x ECHO 4000 B + EXEC", 20, multi_echo(4000))
    close_all(cs)
    check(node.proc.alive(), "auth off: the node is alive")
    node.stop()

    node = auth_off_node(env, "off-auth", 12)

    def after_auth(i, c):
        got = c.run(resp_command("AUTH", "x", "y") + resp_command("MULTI") + echoes(999, 16000), 1001)
        check(got[:2] == ["OK", "OK"] and len(got) == 3 and "command too large" in got[2] and c.closed,
              "conn %d: AUTH x y accepted, a 16,000-byte ECHO still over the 4 KiB limit: %.80r"
              % (i, got[2:3]))
    cs = measure(node, "auth off, AUTH x y, MULTI + 999 x ECHO 16000 B", 10, after_auth)
    close_all(cs)
    check(node.proc.alive(), "auth off: the node is alive")
    node.stop()


def auth_on(env):
    zk = env.zookeeper()
    node = env.leafd("on", zk_props(zk.address(), name="mem", **{
        "leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0",
        "leafd.admin.token": TOKEN, "leafd.threads": "2"}), resp=True, extra_env=ASAN)
    st, body, _ = http(node.port, "/api/users", method="POST", body=json.dumps(
        {"name": "mem", "grants": ["*:ids"]}),
        headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    check(st == 201, "a user (got %d %s)" % (st, body[:200]))
    user = ("mem", json.loads(body).get("secret", "") if st == 201 else "")
    warm = Conn(node.resp_port)
    for _ in range(100):
        if warm.run(resp_command("AUTH", *user), 1) == ["OK"]:
            break
        time.sleep(0.1)
    got = warm.run(resp_command("MULTI") + echoes(30, 4000) + resp_command("EXEC"), 32)
    check(got[-1:] and isinstance(got[-1], list) and len(got[-1]) == 30, "the user's transaction runs")

    def before_auth(i, c):
        got = c.run(resp_command("MULTI") + echoes(999, 4000) + resp_command("EXEC"), 1001)
        check(len(got) == 1001 and got[0].startswith("-NOAUTH") and got[1] == ("bulk", 4000) and
              got[-1] == "-ERR EXEC without MULTI",
              "conn %d: MULTI before AUTH is -NOAUTH; ECHO answers (%.80r %.80r)" % (i, got[:1], got[-1:]))
    cs = measure(node, "auth on, before AUTH: MULTI + 999 x ECHO 4000 B + EXEC", 20, before_auth)
    close_all(cs)
    unread_docs(node, 20)

    cs = measure(node, "auth on, after AUTH: MULTI + 999 x ECHO 16000 B + EXEC", 10,
                 multi_echo(16000, auth=user))
    close_all(cs)

    # 9 x 16,006 + 3 x 5,006 bytes of arguments (with "ECHO" and the NULs): 159,072 of 160,000.
    def held(i, c):
        got = c.run(resp_command("AUTH", *user) + resp_command("MULTI") + echoes(9, 16000) +
                    echoes(3, 5000), 14)
        check(got == ["OK", "OK"] + ["QUEUED"] * 12, "conn %d: 12 ECHOs queued (%.80r)" % (i, got[-1:]))
    cs = measure(node, "auth on, a queue held just under its limit", 20, held)
    for i, c in enumerate(cs):
        got = c.run(resp_command("EXEC"), 1)
        check(len(got) == 1 and isinstance(got[0], list) and len(got[0]) == 14 and
              got[0][0] == ("bulk", 16000) and got[0][-1] == "PONG",
              "conn %d: EXEC answers the 12 ECHOs and 2 PINGs" % i)
    close_all(cs)
    check(node.proc.alive(), "auth on: the node is alive")


with Env() as env:
    t0 = time.monotonic()
    auth_off(env)
    auth_on(env)
    log("done in %.1f s" % (time.monotonic() - t0))
    env.finish()
