"""HTTP/1.1 by RFC 9112: raw requests to the real leafd, one expected answer each.

The table is leafd's answer to each case (the robustness work compared 66 such
requests against nginx). A "close" case must be answered and then closed;
a "keep" case must leave the connection open for the next request. With
LEAFD_RFC_NGINX=1 and nginx installed, the same table is also sent to an
nginx serving a fixed body, and each answer printed beside leafd's (for the
record only: the checks are leafd's).

Decisions written down here and in docs/reference/http.md:
- a request line without a version ("GET /health") is refused with 400 and
  a close (HTTP/0.9 is not served);
- obs-fold is refused with 400 (the RFC allows that or replacing it by SP);
- HEAD on an endpoint that issues IDs gets 405 with "Allow: GET": it must
  not spend an ID that nobody sees.
"""
import os
import shutil
import socket
import subprocess
import time

from leafdtest import (Env, HttpStream, check, free_port, log, static_props, wait_until)

H = b"Host: 127.0.0.1\r\n"

# (name, raw request, expected status, "close" or "keep")
CASES = [
    ("plain GET", b"GET /health HTTP/1.1\r\n" + H + b"\r\n", 200, "keep"),
    ("HTTP/1.0 without Host", b"GET /health HTTP/1.0\r\n\r\n", 200, "close"),
    ("absolute form", b"GET http://127.0.0.1/health HTTP/1.1\r\n" + H + b"\r\n", 200, "keep"),
    ("Host with port and blanks", b"GET /health HTTP/1.1\r\nHost:\t127.0.0.1:8080 \r\n\r\n", 200, "keep"),
    ("empty Host", b"GET /health HTTP/1.1\r\nHost:\r\n\r\n", 200, "keep"),
    ("IPv6 Host", b"GET /health HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", 200, "keep"),
    # Smuggling-relevant: each 400 and close.
    ("whitespace before colon", b"GET /health HTTP/1.1\r\nHost : x\r\n\r\n", 400, "close"),
    ("two Host headers", b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "close"),
    ("Host with a space", b"GET /health HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "close"),
    ("Host with a slash", b"GET /health HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "close"),
    ("chunked in HTTP/1.0",
     b"POST /api/leaf HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400, "close"),
    ("obs-fold", b"GET /health HTTP/1.1\r\n" + H + b"X-A: a\r\n b\r\n\r\n", 400, "close"),
    ("obs-fold of an empty value", b"GET /health HTTP/1.1\r\nX-A:\r\n\tb\r\n" + H + b"\r\n", 400, "close"),
    ("Content-Length and chunked",
     b"POST /api/leaf HTTP/1.1\r\n" + H + b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"0\r\n\r\n", 400, "close"),
    ("two Content-Lengths", b"POST /api/leaf HTTP/1.1\r\n" + H + b"Content-Length: 1\r\nContent-Length: 2\r\n\r\nab",
     400, "close"),
    ("chunked not final", b"POST /api/leaf HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked, gzip\r\n\r\n",
     400, "close"),
    ("gzip alone", b"POST /api/leaf HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip\r\n\r\n", 400, "close"),
    ("bad chunk size", b"POST /api/leaf HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400,
     "close"),
    ("space before the header name", b"GET /health HTTP/1.1\r\n" + H + b" X-A: a\r\n\r\n", 400, "close"),
    ("header without colon", b"GET /health HTTP/1.1\r\n" + H + b"NoColon\r\n\r\n", 400, "close"),
    ("lower-case method", b"get /health HTTP/1.1\r\n" + H + b"\r\n", 400, "close"),
    ("lower-case version", b"GET /health http/1.1\r\n" + H + b"\r\n", 400, "close"),
    ("bare LF line ends", b"GET /health HTTP/1.1\n" + H.replace(b"\r", b"") + b"\n", 400, "close"),
    # Versions and Host.
    ("HTTP/1.1 without Host", b"GET /health HTTP/1.1\r\n\r\n", 400, "close"),
    ("HTTP/2.0", b"GET /health HTTP/2.0\r\n" + H + b"\r\n", 505, "close"),
    ("HTTP/3.0", b"GET /health HTTP/3.0\r\n" + H + b"\r\n", 505, "close"),
    ("HTTP/1.2 served as 1.1", b"GET /health HTTP/1.2\r\n" + H + b"\r\n", 200, "keep"),
    ("no version", b"GET /health\r\n\r\n", 400, "close"),
    ("HTTP/0.9", b"GET /health HTTP/0.9\r\n\r\n", 400, "close"),
    ("two-digit minor", b"GET /health HTTP/1.10\r\n" + H + b"\r\n", 400, "close"),
    # Transfer codings and expectations.
    ("chunked body", b"POST /health HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
     405, "keep"),
    ("gzip, chunked", b"POST /api/leaf HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip, chunked\r\n\r\n"
     b"2\r\n{}\r\n0\r\n\r\n", 501, "close"),
    ("unknown expectation", b"POST /api/leaf HTTP/1.1\r\n" + H + b"Expect: magic\r\nContent-Length: 2\r\n\r\n{}",
     417, "close"),
    # Methods.
    ("HEAD on /health", b"HEAD /health HTTP/1.1\r\n" + H + b"\r\n", 200, "keep"),
    ("HEAD on a snowflake ID", b"HEAD /api/snowflake/get/rfc HTTP/1.1\r\n" + H + b"\r\n", 405, "keep"),
    ("HEAD on a segment ID", b"HEAD /api/segment/get/rfc HTTP/1.1\r\n" + H + b"\r\n", 405, "keep"),
    ("HEAD on /api/leaf", b"HEAD /api/leaf?biz_tag=rfc HTTP/1.1\r\n" + H + b"\r\n", 405, "keep"),
    ("OPTIONS", b"OPTIONS /health HTTP/1.1\r\n" + H + b"\r\n", 405, "keep"),
    ("unknown method", b"BREW /health HTTP/1.1\r\n" + H + b"\r\n", 400, "close"),
    ("Connection: close", b"GET /health HTTP/1.1\r\n" + H + b"Connection: close\r\n\r\n", 200, "close"),
]


def exchange(port, data, head_only=False):
    """Sends data; returns (status, headers, closed) of the first answer, or None."""
    s = HttpStream(port, timeout=3)
    try:
        s.send(data)
        r = read_one(s, head_only)
        if r is None:
            return None
        st, hdr = r
        if st >= 400 and hdr.get("connection", "").lower() == "close":
            closed = s.closed_by_server(2.0)
        else:
            # Still open? Another request on the same connection is served.
            try:
                s.send(b"GET /health HTTP/1.1\r\n" + H + b"\r\n")
                closed = read_one(s, False) is None
            except OSError:
                closed = True
        return st, hdr, closed
    except OSError as e:
        log("exchange: %s" % e)
        return None
    finally:
        s.close()


def read_one(s, head_only):
    """One response by Content-Length (none after HEAD); skips 1xx answers."""
    while True:
        while b"\r\n\r\n" not in s.buf:
            if not s._fill():
                return None
        head, s.buf = s.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        st = int(lines[0].split()[1])
        hdr = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdr[k.strip().lower()] = v.strip()
        if 100 <= st < 200:
            continue
        n = 0 if head_only else int(hdr.get("content-length", "0"))
        while len(s.buf) < n:
            if not s._fill():
                return None
        s.buf = s.buf[n:]
        return st, hdr


def check_table(port, nginx_port=None):
    for name, data, want, conn in CASES:
        r = exchange(port, data, head_only=data.startswith(b"HEAD"))
        theirs = ""
        if nginx_port:
            o = exchange(nginx_port, data, head_only=data.startswith(b"HEAD"))
            theirs = " | nginx: %s" % ("no answer" if o is None else "%d %s" % (o[0], "close" if o[2] else "keep"))
        if not check(r is not None, "%s: answered" % name):
            continue
        st, hdr, closed = r
        log("%-28s leafd: %d %s%s" % (name, st, "close" if closed else "keep", theirs))
        check(st == want, "%s: status %d (got %d)" % (name, want, st))
        check(closed == (conn == "close"), "%s: connection %s (closed=%s)" % (name, conn, closed))
        if want == 405 and data.startswith(b"HEAD /api"):
            allow = hdr.get("allow", "")
            check(allow.startswith("GET") and "HEAD" not in allow,
                  "%s: Allow: GET..., without HEAD (got %r)" % (name, allow))


def check_expect_continue(port):
    """Expect: 100-continue: the interim 100 comes before the body is sent (curl waits 1 s for it)."""
    s = HttpStream(port, timeout=3)
    body = b'{"biz_tag":"x"}'
    s.send(b"POST /api/leaf HTTP/1.1\r\n" + H + b"Expect: 100-continue\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body))
    t = time.monotonic()
    s.sock.settimeout(1.0)
    try:
        while b"\r\n\r\n" not in s.buf and s._fill():
            pass
    except OSError:
        pass
    s.sock.settimeout(3.0)
    got = b"\r\n\r\n" in s.buf
    dt = time.monotonic() - t
    check(got and s.buf.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"),
          "Expect: 100-continue answered 100 before the body (got %r after %.3f s)" % (s.buf[:40], dt))
    s.buf = s.buf[len(b"HTTP/1.1 100 Continue\r\n\r\n"):]
    s.send(body)
    r = read_one(s, False)
    check(r is not None and r[0] not in (100, 400, 417),
          "Expect: 100-continue: the final answer follows the body (got %r)" % (r,))
    s.close()
    curl = shutil.which("curl")
    if curl:
        t = time.monotonic()
        subprocess.run([curl, "-s", "-o", "/dev/null", "-H", "Expect: 100-continue", "--data-binary", "x" * 2000,
                        "http://127.0.0.1:%d/api/leaf" % port], timeout=10)
        dt = time.monotonic() - t
        check(dt < 0.8, "curl POST with Expect: 100-continue takes %.3f s (< 0.8 s; no 1 s wait)" % dt)


def start_nginx(env):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.environ.get("LEAFD_RFC_NGINX") or not os.path.exists(nginx):
        return None, None
    port = free_port()
    d = os.path.join(env.dir, "nginx")
    os.makedirs(d, exist_ok=True)
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write("daemon off; pid %s/pid; error_log %s/error.log; events {}\n"
                "http { access_log off; client_body_temp_path %s;"
                " server { listen 127.0.0.1:%d; location / { return 200 ok; } } }\n" % (d, d, d, port))
    p = subprocess.Popen([nginx, "-c", conf, "-p", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: socket.create_connection(("127.0.0.1", port), 0.2).close() or True, 5)
    return p, port


def main():
    with Env() as env:
        node = env.leafd(props=static_props())
        ngx, ngx_port = start_nginx(env)
        try:
            check_table(node.port, ngx_port)
        finally:
            if ngx:
                ngx.terminate()
        check_expect_continue(node.port)
        st = node.get("/ready")[0]
        check(st == 200, "leafd still ready after the table (got %d)" % st)
        check(node.proc.alive(), "leafd alive")
        env.finish()


if __name__ == "__main__":
    main()
