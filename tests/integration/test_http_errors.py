"""Every bad input of the HTTP API gets the right status and the JSON
error shape {"code":"<snake_case>","message":"..."} (application/json).

Tags, counts, routes, methods, decode arguments, malformed request lines and
the size limits (URL 414, head 431, body 413). After each connection-level
error the server keeps serving other clients, and no ID endpoint ever answers
200 with 0 or a negative number (also not with an epoch in the future).
"""
import json
import re
import time

from leafdtest import (Env, HttpStream, check, free_port, get_request, http, log, port_open, raw,
                       static_props, wait_until)

NO_ALLOW = []  # 405 answers without an Allow header
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def parse_raw_response(data):
    """(status, headers lower-case, body) of the first response in data, or None."""
    if b"\r\n\r\n" not in data:
        return None
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ")[1])
    except (IndexError, ValueError):
        return None
    hdr = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdr[k.strip().lower()] = v.strip()
    n = int(hdr.get("content-length", "0"))
    return status, hdr, body[:n]


def check_error(name, status, want_status, ctype, body, want_code=None):
    """Checks status, Content-Type and the JSON error shape."""
    check(status == want_status, "%s: status %d (got %d, body %r)" % (name, want_status, status, body[:200]))
    check((ctype or "").startswith("application/json"),
          "%s: Content-Type application/json (got %r)" % (name, ctype))
    try:
        err = json.loads(body)
    except ValueError:
        check(False, "%s: body is JSON (got %r)" % (name, body[:200]))
        return
    ok = isinstance(err, dict) and set(err) == {"code", "message"}
    check(ok, "%s: JSON has exactly code and message (got %r)" % (name, err))
    if not ok:
        return
    check(isinstance(err["code"], str) and SNAKE.match(err["code"]) is not None,
          "%s: code is snake_case (got %r)" % (name, err["code"]))
    check(isinstance(err["message"], str) and err["message"] != "",
          "%s: message is non-empty text" % name)
    if want_code:
        check(err["code"] == want_code, "%s: code %s (got %s)" % (name, want_code, err["code"]))


def raw_request(port, method, path, body=b""):
    """One request with exactly these path bytes (latin-1), on a fresh connection."""
    s = HttpStream(port, timeout=5)
    try:
        data = ("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n"
                % (method, path, len(body))).encode("latin-1") + body
        s.send(data)
        r = s.read_response()
    finally:
        s.close()
    if r is None:
        return 0, "", {}
    return r[0], r[2].decode("utf-8", "replace"), {"Content-Type": r[1].get("content-type"),
                                                   "Allow": r[1].get("allow")}


def get_error(port, path, want_status, want_code=None, method="GET"):
    st, body, hdr = raw_request(port, method, path)
    if want_status == 405:
        # RFC 9110 15.5.6: a 405 answer MUST carry an Allow header.
        if "GET" not in (hdr.get("Allow") or ""):
            NO_ALLOW.append("%s %s" % (method, path))
    check_error("%s %r" % (method, path[:80]), st, want_status, hdr.get("Content-Type"), body, want_code)


def served(port, name):
    """Another client still gets IDs."""
    st, body, _ = http(port, "/api/snowflake/get/after?count=3", timeout=5)
    ok = st == 200 and all(x.isdigit() and int(x) > 0 for x in body.split("\n"))
    return check(ok, "after %s: a second connection gets IDs (got %d %r)" % (name, st, body[:100]))


def connection_error(port, name, data, want_status, want_code=None):
    """Sends data on a fresh connection: one error answer, then the server closes.
    Another connection opened while this one is still open is served."""
    s = HttpStream(port, timeout=5)
    try:
        s.send(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may close before reading all of a huge request
    other = served(port, name + " (while open)")
    try:
        r = s.read_response()
    except OSError as e:
        r = None
        log("%s: %s" % (name, e))
    if check(r is not None, "%s: an answer before close" % name):
        st, hdr, body = r
        check_error(name, st, want_status, hdr.get("content-type"), body, want_code)
        check(hdr.get("connection", "").lower() == "close", "%s: answer says Connection: close" % name)
    try:
        closed = s.read_response() is None and s.eof
    except OSError:
        closed = False
    check(closed, "%s: server closes the connection after the error" % name)
    s.close()
    if other:
        served(port, name)


def main():
    with Env() as env:
        node = env.leafd("errors", static_props(5))
        port = node.port

        # Tags: 1..128 bytes of [A-Za-z0-9._:-].
        ok_tags = ["a", "A.b_c:d-e", "x" * 128, "0", "leaf-segment-test"]
        for t in ok_tags:
            st, body, _ = http(port, "/api/snowflake/get/" + t)
            check(st == 200 and body.isdigit() and int(body) > 0, "tag %r -> 200 ID (got %d %r)" % (t[:20], st, body))
        bad_tags = ["", "x" * 129, "a%2Fb", "%2F", "a%20b", "a+b", "a b".replace(" ", "%20"), "a/b", "/a",
                    "a/", "%61", "a%", "a*b", "a,b", "a;b", "a'b", "\u00e9".encode().decode("latin-1"),
                    "a%00b", "..%2F..", "a#b"]
        for t in bad_tags:
            if t == "a#b":
                # A fragment never reaches a server from a browser, but raw it is a bad byte in the path.
                data = get_request("/api/snowflake/get/a#b")
                r = parse_raw_response(raw(port, data + get_request("/health", headers={"Connection": "close"})))
                check(r is not None and r[0] in (400, 404), "tag 'a#b' rejected (got %r)" % (r,))
                continue
            get_error(port, "/api/snowflake/get/" + t, 400, "bad_tag")
        for t in ("", "x" * 129, "a%2Fb", "a/b"):
            get_error(port, "/api/segment/get/" + t, 400, "bad_tag")

        # Counts: 1..10000.
        for c in ("0", "10001", "-1", "abc", "1.5", "", "+5", "0x10", " 5", "5 ", "1e3", "99999999999",
                  "18446744073709551617", "%31"):
            get_error(port, "/api/snowflake/get/t?count=" + c.replace(" ", "%20"), 400, "bad_count")
        for c in ("0", "10001", "abc", ""):
            get_error(port, "/api/segment/get/t?count=" + c, 400)
        for c, n in (("1", 1), ("10000", 10000), ("007", 7)):
            st, body, _ = http(port, "/api/snowflake/get/t?count=" + c)
            check(st == 200 and len(body.split("\n")) == n, "count=%s -> %d IDs (got %d)" % (c, n, st))

        # Routes and methods. ("/" is the index page.)
        st, body, _ = http(port, "/")
        check(st == 200 and "<html" in body, "GET / answers the index page (got %d)" % st)
        for p in ("/api", "/api/snowflake", "/api/snowflake/get", "/api/snowflake/gets/x", "/nope",
                  "/health/x", "/decodeSnowflakeIdX", "/API/snowflake/get/x", "/metrics/"):
            get_error(port, p, 404, "not_found")
        for m, p in (("POST", "/api/snowflake/get/x"), ("PUT", "/api/snowflake/get/x"),
                     ("DELETE", "/api/snowflake/get/x"), ("POST", "/health"), ("POST", "/decodeSnowflakeId"),
                     ("PATCH", "/ready")):
            get_error(port, p, 405, "method_not_allowed", method=m)
        check(not NO_ALLOW, "405 answers carry an Allow header listing GET (RFC 9110 15.5.6); missing on %s"
              % NO_ALLOW)

        # Decode arguments.
        for q in ("", "?", "?snowflakeId", "?snowflakeId=", "?snowflakeId=-1", "?snowflakeId=abc",
                  "?snowflakeId=1.5", "?snowflakeId=99999999999999999999", "?snowflakeId=9223372036854775808",
                  "?snowflakeId=18446744073709551615", "?snowflakeId=%2D1", "?snowflakeId=+1",
                  "?snowflakeId=1x", "?snowflakeid=1", "?id=1"):
            get_error(port, "/decodeSnowflakeId" + q, 400)
        st, body, _ = http(port, "/decodeSnowflakeId?snowflakeId=9223372036854775807")
        check(st in (200, 400), "decode of max int64: 200 or 400, never 5xx (got %d)" % st)
        if st == 400:
            check_error("decode max int64", st, 400, "application/json", body)

        # Connection-level errors: answered, closed, others served.
        connection_error(port, "malformed request line", b"GARBAGE\r\n\r\n", 400)
        connection_error(port, "binary junk", b"\x00\x01\x02\x03 \xff\xfe\r\n\r\n", 400)
        # A request line without a version (HTTP/0.9) is refused: 400 and close.
        data = raw(port, b"GET /health\r\n\r\n")
        r = parse_raw_response(data)
        check(r is not None and r[0] == 400 and r[1].get("connection", "").lower() == "close",
              "request line without version: 400 and close (got %r)" % data[:200])
        connection_error(port, "bad version", b"GET /health HTTX/1.1\r\nHost: x\r\n\r\n", 400)
        connection_error(port, "space in URL", b"GET /api/snowflake/get/a b HTTP/1.1\r\nHost: x\r\n\r\n", 400)
        connection_error(port, "bad header line", b"GET /health HTTP/1.1\r\nNoColonHere\r\n\r\n", 400)
        connection_error(port, "URL of 3000 bytes",
                         get_request("/api/snowflake/get/" + "a" * 3000), 414)
        connection_error(port, "URL of 2049 bytes in the query",
                         get_request("/health?" + "q" * (2049 - len("/health?"))), 414)
        hdrs = {"X-Pad-%03d" % k: "v" * 88 for k in range(200)}  # 200 headers of ~100 bytes
        connection_error(port, "200 headers of 100 bytes", get_request("/health", headers=hdrs), 431)
        connection_error(port, "one 17000-byte header",
                         get_request("/health", headers={"X-Big": "b" * 17000}), 431)
        connection_error(port, "Content-Length 20000",
                         b"POST /api/snowflake/get/x HTTP/1.1\r\nHost: x\r\nContent-Length: 20000\r\n\r\n"
                         + b"z" * 20000, 413)
        chunk = b"4000\r\n" + b"c" * 0x4000 + b"\r\n"
        connection_error(port, "chunked body over 16384",
                         b"POST /api/snowflake/get/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                         + chunk * 2 + b"0\r\n\r\n", 413)
        connection_error(port, "Content-Length and chunked together",
                         b"GET /api/snowflake/get/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400)
        connection_error(port, "two different Content-Lengths",
                         b"GET /api/snowflake/get/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
                         b"Content-Length: 2\r\n\r\nab", 400)
        connection_error(port, "bad chunk size",
                         b"GET /api/snowflake/get/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                         b"zz\r\n", 400)
        # The limits are not off by much: just under each limit is served.
        url = "/api/snowflake/get/t?pad=" + "p" * (2048 - len("/api/snowflake/get/t?pad="))
        st, body, _ = http(port, url)
        check(st == 200, "URL of exactly 2048 bytes -> 200 (got %d %r)" % (st, body[:100]))
        st, body, _ = http(port, "/api/snowflake/get/t", headers={"X-Pad": "p" * 7000})
        check(st == 200, "head of ~7 kB -> 200 (got %d)" % st)
        st, body, _ = http(port, "/api/snowflake/get/t", method="GET", body=b"b" * 16384)
        check(st == 200, "GET with a 16384-byte body -> 200 (got %d %r)" % (st, body[:100]))
        # An error answer in the middle of a pipelined stream keeps the order
        # and (for request-level errors) the connection.
        s = HttpStream(port)
        s.send(get_request("/api/snowflake/get/ok") + get_request("/api/snowflake/get/b%2Fd") +
               get_request("/nope") + get_request("/api/snowflake/get/ok"))
        rs = s.read_responses(4)
        check([r[0] for r in rs] == [200, 400, 404, 200],
              "request-level errors in a pipeline: 200 400 404 200 (got %s)" % [r[0] for r in rs])
        check(not s.closed_by_server(0.3), "request-level errors keep the connection open")
        s.close()
        check(node.proc.alive(), "server alive after every bad input")

        # Never 200 with 0 or negative: an epoch in the future makes every
        # timestamp negative, so the server must refuse.
        future = int(time.time() * 1000) + 86400 * 1000
        node2 = env.leafd("future", static_props(0, **{"leafd.snowflake.epoch": str(future)}),
                          wait_ready=False)
        node2.wait_ready(5)
        if check(node2.proc.alive() or node2.proc.p.returncode == 1,
                 "epoch in the future: runs (refusing IDs) or refuses to start with exit 1"):
            if node2.proc.alive():
                for path in ("/api/snowflake/get/f", "/api/snowflake/get/f?count=10"):
                    st, body, hdr = http(node2.port, path)
                    check(st != 200, "epoch in the future: %s not 200 (got %d %r)" % (path, st, body[:80]))
                    if st != 200:
                        check_error("epoch in the future " + path, st, 503, hdr.get("Content-Type"), body)

        # A mode that is off: 503 JSON, not an ID. (A node with both off refuses to
        # start, so snowflake is off on a segment node whose database is not there.)
        node3 = env.leafd("disabled", {"leaf.name": "it", "leaf.segment.enable": "true",
                                       "leaf.jdbc.url": "jdbc:mysql://127.0.0.1:%d/leaf" % free_port(),
                                       "leaf.jdbc.username": "root"}, wait_ready=False)
        wait_until(lambda: port_open(node3.port), 10)
        st, body, hdr = http(node3.port, "/api/snowflake/get/x")
        check_error("snowflake disabled", st, 503, hdr.get("Content-Type"), body)
        st, body, hdr = http(node.port, "/api/segment/get/x")
        check_error("segment disabled", st, 503, hdr.get("Content-Type"), body)
        env.finish()


if __name__ == "__main__":
    main()
