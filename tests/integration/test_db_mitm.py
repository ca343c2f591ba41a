"""Database credentials under a man in the middle (README.md,
"Database TLS"): with sslMode=REQUIRED or VERIFY_CA the login leaves only over
TLS set up on the connection that carries it, and no plug-in that sends the
password in clear is accepted without TLS.

A small TCP proxy sits between leafd and a MariaDB that offers TLS. It clears
the SSL capability bit in the server's greeting ("strip"), of every
connection or of all but the first (a TLS probe on a connection of its own
then sees TLS, and the login goes over a later one); "+clear" also answers
the client's handshake response with an AuthSwitch to mysql_clear_password,
recording what comes back. Under REQUIRED and VERIFY_CA no handshake
response and no password byte may cross the proxy in clear; where every
connection is stripped leafd stops, naming the cause in its last line.
Under PREFERRED (TLS optional) the AuthSwitch to mysql_clear_password is
refused too: the password never crosses in clear.
"""
import os
import socket
import subprocess
import threading

from leafdtest import Env, check, log, seg_props

CLIENT_SSL = 0x0800
PASSWORD = b"leafpw"


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


def read_packet(sock):
    head = b""
    while len(head) < 4:
        got = sock.recv(4 - len(head))
        if not got:
            return None
        head += got
    n = head[0] | head[1] << 8 | head[2] << 16
    body = b""
    while len(body) < n:
        got = sock.recv(n - len(body))
        if not got:
            return None
        body += got
    return head + body


def packet(seq, payload):
    n = len(payload)
    return bytes([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, seq]) + payload


class Proxy:
    def __init__(self, upstream_port, mode, honest_first):
        self.upstream = upstream_port
        self.mode = mode
        self.honest_first = honest_first
        self.seen = bytearray()      # every byte the client sent, in the clear
        self.responses_in_clear = 0  # handshake responses without CLIENT_SSL
        self.conns = 0
        self.lock = threading.Lock()
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            with self.lock:
                self.conns += 1
                first = self.honest_first and self.conns == 1
            threading.Thread(target=self.one, args=(c, first), daemon=True).start()

    def pipe(self, a, b, record):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                if record:
                    with self.lock:
                        self.seen += d
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def one(self, c, first):
        c.settimeout(10)
        u = socket.create_connection(("127.0.0.1", self.upstream), timeout=10)
        if first:  # the probe, or an honest connection: untouched
            threading.Thread(target=self.pipe, args=(u, c, False), daemon=True).start()
            self.pipe(c, u, True)
            return
        try:
            g = bytearray(read_packet(u))
            at = g.index(b"\0", 5) + 1 + 4 + 8 + 1
            g[at] &= ~(CLIENT_SSL & 0xff)
            g[at + 1] &= ~(CLIENT_SSL >> 8)
            c.sendall(bytes(g))
            resp = read_packet(c)
            if resp is None:
                return
            with self.lock:
                self.seen += resp
                caps = resp[4] | resp[5] << 8
                if not caps & CLIENT_SSL:
                    self.responses_in_clear += 1
            if self.mode == "strip+clear":
                c.sendall(packet(resp[3] + 1, b"\xfemysql_clear_password\0" + b"x" * 20 + b"\0"))
                got = read_packet(c)
                if got is not None:
                    with self.lock:
                        self.seen += got
            else:
                u.sendall(resp)
                threading.Thread(target=self.pipe, args=(u, c, False), daemon=True).start()
                self.pipe(c, u, True)
        except (OSError, TypeError, ValueError):
            pass
        finally:
            c.close()
            u.close()

    def close(self):
        self.srv.close()


with Env() as env:
    d = os.path.join(env.dir, "certs")
    os.makedirs(d)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=ca", cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "db.key", "-out", "db.csr",
            "-subj", "/CN=db", cwd=d)
    openssl("x509", "-req", "-in", "db.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "db.pem", "-days", "2", "-extfile", "san.ext", cwd=d)
    db = env.mariadb(name="tlsdb", args=["--ssl-cert=" + os.path.join(d, "db.pem"),
                                         "--ssl-key=" + os.path.join(d, "db.key")])
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('t', 1, 100)")
    ca = os.path.join(d, "ca.pem")

    def run(name, mode, ssl_mode, expect_exit, honest_first=False):
        proxy = Proxy(db.port, mode, honest_first)
        url = "jdbc:mysql://127.0.0.1:%d/leaf?sslMode=%s" % (proxy.port, ssl_mode)
        p = seg_props(db, **{"leaf.jdbc.url": url, "leafd.db.tls.ca.file": ca,
                             "leafd.db.timeout.ms": "3000"})
        node = env.leafd(name, p, wait_ready=False)
        rc = node.wait_exit(25 if expect_exit else 8)
        if rc is None:
            node.stop()
        text = node.log_text()
        proxy.close()
        with proxy.lock:
            seen, clear = bytes(proxy.seen), proxy.responses_in_clear
        check(PASSWORD not in seen, "%s: no password byte crossed the proxy in clear" % name)
        if ssl_mode != "PREFERRED":
            check(clear == 0, "%s: no handshake response crossed in clear (%d)" % (name, clear))
        lines = [l for l in text.splitlines() if "connect(" in l]
        log("%s: %s" % (name, lines[-1] if lines else "(no connect line)"))
        if expect_exit:
            check(rc == 1, "%s: exit 1 (%r)\n%s" % (name, rc, text[-800:]))
            last = text.strip().splitlines()[-1] if text.strip() else ""
            check("offers no TLS" in last and "sslMode=" in last,
                  "%s: the last line names the cause: %s" % (name, last))
        return text

    for ssl_mode in ("REQUIRED", "VERIFY_CA"):
        for mode in ("strip", "strip+clear"):
            name = "%s-%s" % (ssl_mode.lower(), mode.replace("+", "-"))
            log("%s through a proxy that does '%s' after an honest first connection" % (ssl_mode, mode))
            run(name + "-probe", mode, ssl_mode, False, honest_first=True)
            log("%s through a proxy that does '%s' on every connection" % (ssl_mode, mode))
            run(name, mode, ssl_mode, True)

    log("PREFERRED through 'strip': a plain login to the real server still works")
    proxy = Proxy(db.port, "strip", False)
    n = env.leafd("preferred-plain", seg_props(db, **{
        "leaf.jdbc.url": "jdbc:mysql://127.0.0.1:%d/leaf?sslMode=PREFERRED" % proxy.port}))
    check(n.get_ids("/api/segment/get/t")[0] > 0, "segment IDs over a plain connection")
    check("plain text" in n.log_text(), "the log says the connection is plain text")
    n.stop()
    proxy.close()

    log("PREFERRED: an AuthSwitch to mysql_clear_password without TLS is refused")
    text = run("preferred-clear", "strip+clear", "PREFERRED", False)

    env.finish()
