"""RESP command size (README.md,
"Redis protocol"): before a user has logged
in (and always with authentication off) a command may hold at most 4 KiB in
all; after AUTH at most 16 KiB. A client that sends more gets
"-ERR Protocol error: command too large" and is closed, before the server
stores the payload.

- 8 connections each start a command of 256 arguments of 64 KiB (16 MiB, which
  the per-argument limits alone allowed) and never finish it: each gets the
  error and is closed, and the node's RSS grows by less than 8 MiB.
- A normal ID command and a 3 KiB ECHO still work.
"""
import socket
import time

from leafdtest import check, Env, log, resp_command, RespStream, rss_kb, static_props

CONNS = 8
ARGS = 256
BULK = 64 << 10


def huge_partial(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.settimeout(10)
    chunk = b"x" * BULK
    try:
        s.sendall(b"*%d\r\n$4\r\nECHO\r\n" % ARGS)
        for _ in range(ARGS - 2):
            s.sendall(b"$%d\r\n" % BULK + chunk + b"\r\n")
        s.sendall(b"$%d\r\n" % BULK + chunk[:BULK // 2])  # never finished
    except OSError:
        pass  # closed by the server: what should happen
    return s


def answer_and_close(s):
    data = b""
    try:
        while True:
            got = s.recv(65536)
            if not got:
                return data, True
            data += got
    except socket.timeout:
        return data, False
    except OSError:
        return data, True


with Env() as env:
    node = env.leafd("resp", static_props(11), resp=True)
    pid = node.proc.p.pid
    r = RespStream(node.resp_port)
    check(r.call("INCR", "snowflake:a") > 0, "an ID command works")
    check(r.call("ECHO", "e" * 3000) == "e" * 3000, "a 3 KiB ECHO works")
    r.close()

    before = rss_kb(pid)
    log("%d connections, each a %d MiB command that never ends" % (CONNS, ARGS * BULK >> 20))
    socks = [huge_partial(node.resp_port) for _ in range(CONNS)]
    grown = rss_kb(pid) - before
    for i, s in enumerate(socks):
        data, closed = answer_and_close(s)
        check(b"-ERR Protocol error: command too large" in data, "conn %d: the error (%r)" % (i, data[:80]))
        check(closed, "conn %d: closed by the server" % i)
        s.close()
    log("RSS grew by %d kB" % grown)
    check(grown < 8 * 1024, "RSS stays small (+%d kB)" % grown)
    check(node.proc.alive(), "the node is alive")
    env.finish()
