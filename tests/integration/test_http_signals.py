"""SIGTERM / SIGINT drain in-flight requests and exit 0 (graceful stop).

- A client pipelines 2000 heavy requests (count=1000) and reads nothing until
  the signal is sent, so most of them are still queued when SIGTERM arrives:
  every complete request sent before the signal is answered, the process exits
  0 within a few seconds, and the port is closed afterwards.
- The same with SIGINT.
- An idle keep-alive connection does not block the exit; a connection with a
  half-sent request head does not block it for long either.
"""
import signal
import socket
import threading
import time

from leafdtest import (Env, HttpStream, check, get_request, http, log, port_open, static_props)

N_REQ = 2000


class Sender(threading.Thread):
    """Writes all request bytes (blocking as the server applies back-pressure)."""

    def __init__(self, sock, data):
        super().__init__(daemon=True)
        self.sock, self.data, self.done, self.error = sock, data, False, None

    def run(self):
        try:
            self.sock.sendall(self.data)
            self.done = True
        except OSError as e:
            self.error = e


def drain(env, name, sig, port_reuse=None):
    node = env.leafd(name, static_props(21))
    port = node.port
    # An idle keep-alive connection (one answered request, then nothing).
    idle = HttpStream(port)
    idle.send(get_request("/health"))
    r = idle.read_response()
    check(r is not None and r[0] == 200, "%s: idle client's first answer" % name)

    s = HttpStream(port, timeout=20)
    s.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    reqs = [get_request("/api/snowflake/get/drain?count=%d" % (1000 if k % 2 == 0 else 1)) for k in range(N_REQ)]
    sender = Sender(s.sock, b"".join(reqs))
    sender.start()
    sender.join(10)
    check(sender.done, "%s: all %d requests written before the signal (error %s)" % (name, N_REQ, sender.error))
    time.sleep(0.3)  # the server has started on them and is held back by the client
    t_sig = time.monotonic()
    node.proc.p.send_signal(sig)
    resps = []
    try:
        resps = s.read_responses(N_REQ)
    except OSError as e:
        log("%s: reading answers: %s" % (name, e))
    log("%s: %d of %d answers after the signal" % (name, len(resps), N_REQ))
    check(len(resps) == N_REQ, "%s: every request sent before the signal answered (%d of %d)"
          % (name, len(resps), N_REQ))
    bad = [k for k, r in enumerate(resps) if r[0] != 200 or
           len(r[2].split(b"\n")) != (1000 if k % 2 == 0 else 1)]
    check(not bad, "%s: every answer 200 with the requested count (bad: %s)" % (name, bad[:5]))
    ids = [int(x) for r in resps if r[0] == 200 for x in r[2].split(b"\n")]
    check(all(a < b for a, b in zip(ids, ids[1:])), "%s: IDs ascending across the drained answers" % name)
    if resps:
        check(resps[-1][1].get("connection", "").lower() == "close" or s.read_response() is None,
              "%s: the connection closes after the last answer" % name)
    rc = node.wait_exit(10)
    dt = time.monotonic() - t_sig
    log("%s: exit %s %.2f s after the signal" % (name, rc, dt))
    check(rc == 0, "%s: exit code 0 (got %s)" % (name, rc))
    check(dt < 5, "%s: exited within 5 s of the signal (%.2f s)" % (name, dt))
    check(idle.closed_by_server(1.0) or idle.eof, "%s: idle connection closed by the server" % name)
    check(not port_open(port), "%s: port closed after exit" % name)
    text = node.log_text()
    check("drain" in text.lower() or "stop" in text.lower(), "%s: log mentions the shutdown" % name)
    idle.close()
    s.close()
    if node.proc.p.returncode is None:
        node.stop(signal.SIGKILL)


def idle_only(env, name, sig):
    """Idle keep-alive clients and connected-but-silent clients do not hold
    the exit up."""
    node = env.leafd(name, static_props(22))
    port = node.port
    idle = []
    for _ in range(5):
        c = HttpStream(port)
        c.send(get_request("/api/snowflake/get/i"))
        r = c.read_response()
        check(r is not None and r[0] == 200, "%s: idle client answered" % name)
        idle.append(c)
    fresh = [HttpStream(port) for _ in range(5)]  # connected, never sent a byte
    time.sleep(0.2)
    t = time.monotonic()
    node.proc.p.send_signal(sig)
    rc = node.wait_exit(15)
    dt = time.monotonic() - t
    log("%s: exit %s %.2f s after the signal" % (name, rc, dt))
    check(rc == 0, "%s: exit code 0 (got %s)" % (name, rc))
    check(dt < 2, "%s: idle clients do not delay the exit (%.2f s)" % (name, dt))
    check(not port_open(port), "%s: port closed after exit" % name)
    for c in idle + fresh:
        c.close()
    if node.proc.p.returncode is None:
        node.stop(signal.SIGKILL)


def half_sent(env, name):
    """A client that sent half a request head when the signal came: the head is
    not a complete request, so it need not be answered, and it must not hold
    the exit up until leafd.http.request.timeout.ms (10 s by default)."""
    node = env.leafd(name, static_props(24))
    port = node.port
    half = HttpStream(port)
    half.send(b"GET /api/snowflake/get/h HTTP/1.1\r\nHost:")
    time.sleep(0.2)
    t = time.monotonic()
    node.proc.p.send_signal(signal.SIGTERM)
    rc = node.wait_exit(15)
    dt = time.monotonic() - t
    log("%s: exit %s %.2f s after the signal" % (name, rc, dt))
    check(rc == 0, "%s: exit code 0 (got %s)" % (name, rc))
    check(dt < 3, "%s: a half-sent request head does not delay the exit by the request timeout (%.2f s)"
          % (name, dt))
    half.close()
    if node.proc.p.returncode is None:
        node.stop(signal.SIGKILL)


def new_connections_refused_while_draining(env):
    """After the signal, with one client still being drained, new clients are
    not accepted (or are closed without an ID)."""
    node = env.leafd("refuse", static_props(23))
    port = node.port
    s = HttpStream(port, timeout=20)
    s.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.send(get_request("/api/snowflake/get/r?count=1000") * 400)
    time.sleep(0.3)
    node.proc.p.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    served_new = False
    try:
        st, body, _ = http(port, "/api/snowflake/get/new", timeout=2)
        served_new = st == 200
    except OSError:
        pass
    resps = s.read_responses(400)
    check(len(resps) == 400, "refuse: the draining client still gets all 400 answers (%d)" % len(resps))
    log("refuse: a new client during the drain was %s" % ("served" if served_new else "refused"))
    rc = node.wait_exit(10)
    check(rc == 0, "refuse: exit 0 (got %s)" % rc)
    s.close()


def main():
    with Env() as env:
        drain(env, "sigterm", signal.SIGTERM)
        drain(env, "sigint", signal.SIGINT)
        idle_only(env, "idle-sigterm", signal.SIGTERM)
        idle_only(env, "idle-sigint", signal.SIGINT)
        half_sent(env, "half-sent")
        new_connections_refused_while_draining(env)
        env.finish()


if __name__ == "__main__":
    main()
