"""The partition proxy of the sequence tests (tests/lib/tcpproxy.py), tested on
its own: an echo server through it with several concurrent connections;
blackhole() delivers nothing either way yet keeps every socket open, holds a
close until heal(), and never joins a connection born during it; heal()
resumes; reset_all() resets. Then the real ZooKeeper through it: `ruok`, a
real client (zkCli.sh `ls /`), and a raw client session (connect handshake
and pings) that works, stalls silently when blackholed, survives a short
partition, and after one longer than its session timeout sees the server's
close only once healed. Needs no leafd; about 20 s."""
import socket
import struct
import threading
import time

from leafdtest import Env, check, log, raw, zkcli
from tcpproxy import Proxy


class Echo:
    """A threaded echo server on loopback that notes each client's EOF."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.eofs = 0
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self.running:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        with c:
            while True:
                try:
                    d = c.recv(65536)
                except OSError:
                    d = b""
                if not d:
                    self.eofs += 1
                    return
                c.sendall(d)

    def close(self):
        self.running = False
        self.sock.close()


def conn(port):
    return socket.create_connection(("127.0.0.1", port), timeout=2)


def recv_exact(s, n, timeout=2.0):
    """n bytes, or what came before timeout; b'' plus EOF flag when closed."""
    s.settimeout(timeout)
    out = b""
    try:
        while len(out) < n:
            d = s.recv(n - len(out))
            if not d:
                return out, True
            out += d
    except socket.timeout:
        pass
    except ConnectionResetError:
        return out, True
    return out, False


def silent_and_open(s, wait=0.6):
    """True when nothing arrives within wait and the socket is not closed."""
    data, eof = recv_exact(s, 1, timeout=wait)
    return data == b"" and not eof


def wait_for(fn, timeout=3.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if fn():
            return True
        time.sleep(0.02)
    return False


# ---- echo server through the proxy -----------------------------------------
echo = Echo()
p = Proxy(target=("127.0.0.1", echo.port))
conns = [conn(p.port) for _ in range(4)]
for i, s in enumerate(conns):
    s.sendall(b"hello %d" % i)
replies = [recv_exact(s, 7)[0] for s in conns]
check(replies == [b"hello %d" % i for i in range(4)], "4 concurrent connections echo: %s" % replies)
check(wait_for(lambda: p.connections() == 4), "the proxy counts 4 connections")

p.blackhole()
for s in conns:
    s.sendall(b"lost")
check(all(silent_and_open(s) for s in conns[:2]), "blackholed: nothing delivered, sockets open")
check(p.stats["dropped"] >= 8, "blackholed bytes were read and dropped: %s" % p.stats)
late = conn(p.port)  # born in the blackhole: accepted, never joined
late.sendall(b"x")
check(silent_and_open(late, 0.3), "a connection opened while blackholed stays silent and open")
conns[3].shutdown(socket.SHUT_WR)
time.sleep(0.4)
check(echo.eofs == 0, "a client's close is held while blackholed (server saw %d EOF)" % echo.eofs)

p.heal()
for i, s in enumerate(conns[:3]):
    s.sendall(b"again %d" % i)
replies = [recv_exact(s, 7)[0] for s in conns[:3]]
check(replies == [b"again %d" % i for i in range(3)],
      "healed: new bytes flow, the blackholed ones stayed dropped: %s" % replies)
check(wait_for(lambda: echo.eofs >= 1), "the held close reached the server on heal")
check(recv_exact(late, 1, 2)[1], "the connection born in the blackhole is closed on heal")
p.reset_all()
data, eof = recv_exact(conns[0], 1, 2)
check(eof, "reset_all closes the live connections (%r, eof=%s)" % (data, eof))
after = conn(p.port)
after.sendall(b"ping")
check(recv_exact(after, 4)[0] == b"ping", "new connections still work after reset_all")
for s in conns + [late, after]:
    s.close()
p.close()
echo.close()
check(not p._thread.is_alive(), "close() ends the accept thread")

# ---- the real ZooKeeper through the proxy ----------------------------------


def zk_packet(body):
    return struct.pack(">i", len(body)) + body


def zk_read(s, timeout):
    """One framed ZooKeeper reply: (payload, eof)."""
    head, eof = recv_exact(s, 4, timeout)
    if len(head) < 4:
        return None, eof
    body, eof = recv_exact(s, struct.unpack(">i", head)[0], timeout)
    return body, eof


def zk_session(port, timeout_ms):
    """A raw ZooKeeper client session: ConnectRequest, returns (socket, sid, timeout)."""
    s = conn(port)
    req = struct.pack(">iqiqi", 0, 0, timeout_ms, 0, 16) + b"\0" * 16 + b"\0"
    s.sendall(zk_packet(req))
    body, _ = zk_read(s, 5)
    if not body or len(body) < 16:
        return s, 0, 0
    _, to, sid = struct.unpack(">iiq", body[:16])
    return s, sid, to


def zk_ping(s, timeout):
    """True when a ping is answered within timeout; None when the socket closed."""
    s.sendall(zk_packet(struct.pack(">ii", -2, 11)))
    body, eof = zk_read(s, timeout)
    if eof:
        return None
    return bool(body) and struct.unpack(">i", body[:4])[0] == -2


env = Env()
zk = env.zookeeper()
zp = Proxy(target=("127.0.0.1", zk.port))
check(raw(zp.port, b"ruok", timeout=2) == b"imok", "ruok through the proxy answers imok")
answer, errors = zkcli("127.0.0.1:%d" % zp.port, [["ls", "/"]])
check("[zookeeper]" in answer, "zkCli.sh through the proxy lists / : %r" % (answer + errors)[-200:])

s, sid, to = zk_session(zp.port, 2000)
log("raw session 0x%x through the proxy, negotiated timeout %d ms" % (sid, to))
check(sid != 0 and to > 0, "a ZooKeeper session is established through the proxy")
check(zk_ping(s, 2) is True, "the session's ping is answered")
zp.blackhole()
check(raw(zp.port, b"ruok", timeout=1) == b"", "blackholed: ruok gets no answer")
check(zk_ping(s, 0.6) is False, "blackholed: the ping stalls, no answer and no close")
time.sleep(0.3)
zp.heal()
check(zk_ping(s, 2) is True, "healed before the timeout: the same session answers again")

zp.blackhole()
t0 = time.monotonic()
check(zk_ping(s, 1.0) is False, "blackholed again: stalled")
time.sleep(max(0.0, 2.0 * to / 1000.0 - (time.monotonic() - t0)))
still_open = silent_and_open(s, 0.3)
check(still_open, "after twice the session timeout the client still sees an open, silent socket")
zp.heal()
body, eof = zk_read(s, 3)
check(eof, "healed after the session expired: the server's close arrives now (eof=%s)" % eof)
s.close()
zp.close()
env.finish()
