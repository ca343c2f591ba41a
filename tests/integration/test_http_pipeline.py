"""HTTP/1.1 pipelining and connection handling (keep-alive, pipelining, answers in order).

- 200 mixed requests (IDs, /health, 404s, bad counts, decode) sent in one
  write: the answers come back in request order.
- The same stream written one byte at a time.
- HTTP/1.0 without keep-alive: one answer, then the server closes.
- HTTP/1.0 with Connection: keep-alive: the connection stays open.
- HTTP/1.1 with Connection: close: closed after the answer.
"""
import json
import random
import socket
import time

from leafdtest import (Env, HttpStream, check, get_request, log, static_props)


def mixed_requests(n, seed):
    """n (request bytes, expected status, kind) in a reproducible random mix."""
    rnd = random.Random(seed)
    out = []
    for k in range(n):
        kind = rnd.choice(["id", "ids", "health", "404", "badcount", "decode", "badtag"])
        if kind == "id":
            out.append((get_request("/api/snowflake/get/p%d" % k), 200, kind, 1))
        elif kind == "ids":
            c = rnd.randint(2, 50)
            out.append((get_request("/api/snowflake/get/p?count=%d" % c), 200, kind, c))
        elif kind == "health":
            out.append((get_request("/health"), 200, kind, 0))
        elif kind == "404":
            out.append((get_request("/no/such/path/%d" % k), 404, kind, 0))
        elif kind == "badcount":
            out.append((get_request("/api/snowflake/get/p?count=%s" %
                                    rnd.choice(["0", "10001", "-1", "abc", ""])), 400, kind, 0))
        elif kind == "decode":
            out.append((get_request("/decodeSnowflakeId?snowflakeId=%d" % (k << 22 | k)), 200, kind, k))
        else:
            out.append((get_request("/api/snowflake/get/bad%%2Ftag%d" % k), 400, kind, 0))
    return out


def check_in_order(name, reqs, resps):
    """Checks that each response matches its request; returns the IDs seen."""
    check(len(resps) == len(reqs), "%s: %d responses (got %d)" % (name, len(reqs), len(resps)))
    ids, mismatches = [], []
    for k, ((_, want, kind, arg), (st, hdr, body)) in enumerate(zip(reqs, resps)):
        ok = st == want
        text = body.decode("utf-8", "replace")
        if ok and kind in ("id", "ids"):
            lines = text.split("\n")
            ok = len(lines) == arg and all(x.isdigit() and int(x) > 0 for x in lines)
            if ok:
                ids += [int(x) for x in lines]
        elif ok and kind == "health":
            ok = hdr.get("content-type", "").startswith("application/json")
        elif ok and kind == "decode":
            # The k-th request decodes k << 22 | k: its sequence is k, which
            # pins the answer to its request.
            ok = json.loads(text).get("sequenceId") == str(arg)
        elif ok and kind in ("404", "badcount", "badtag"):
            err = json.loads(text)
            ok = set(err) == {"code", "message"} and {
                "404": "not_found", "badcount": "bad_count", "badtag": "bad_tag"}[kind] == err["code"]
        if not ok:
            mismatches.append("#%d %s: want %d, got %d %r" % (k, kind, want, st, body[:80]))
    check(not mismatches, "%s: every response matches its request in order: %s" % (name, mismatches[:3]))
    check(all(a < b for a, b in zip(ids, ids[1:])), "%s: IDs ascending across the stream" % name)
    return ids


def main():
    with Env() as env:
        node = env.leafd("pipe", static_props(9))
        port = node.port

        # 1. 200 mixed requests in one send.
        reqs = mixed_requests(200, 1)
        s = HttpStream(port)
        s.send(b"".join(r[0] for r in reqs))
        resps = s.read_responses(len(reqs))
        ids1 = check_in_order("one write", reqs, resps)
        check(not s.closed_by_server(0.3), "one write: connection still open after 200 answers")
        s.close()

        # 2. The same kind of stream, one byte per write.
        reqs = mixed_requests(200, 2)
        data = b"".join(r[0] for r in reqs)
        s = HttpStream(port, timeout=30)
        s.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        start = time.monotonic()
        for k in range(len(data)):
            s.send(data[k:k + 1])
            if k < 400:
                time.sleep(0.001)  # the first requests surely arrive byte by byte
        log("%d bytes written one at a time in %.2f s" % (len(data), time.monotonic() - start))
        resps = s.read_responses(len(reqs))
        ids2 = check_in_order("1-byte writes", reqs, resps)
        s.close()
        check(ids1 and ids2 and ids2[0] > ids1[-1], "IDs of the second stream above the first")

        # 3. HTTP/1.0 without keep-alive: one answer, then close. A second
        #    request in the same write must not be answered.
        s = HttpStream(port)
        s.send(get_request("/api/snowflake/get/h10", "1.0") + get_request("/health", "1.0"))
        r = s.read_response()
        check(r is not None and r[0] == 200 and r[2].isdigit(), "HTTP/1.0: one ID answered (%r)" % (r,))
        check(s.read_response() is None and s.eof, "HTTP/1.0 without keep-alive: server closes after one answer")
        s.close()

        # 4. HTTP/1.0 with Connection: keep-alive stays open, for several requests.
        s = HttpStream(port)
        ka = {"Connection": "keep-alive"}
        for k in range(3):
            s.send(get_request("/api/snowflake/get/h10ka", "1.0", ka))
            r = s.read_response()
            check(r is not None and r[0] == 200, "HTTP/1.0 keep-alive: answer %d is 200 (%r)" % (k, r))
            if r:
                check(r[1].get("connection", "").lower() == "keep-alive",
                      "HTTP/1.0 keep-alive: response says Connection: keep-alive (%r)" % r[1])
        check(not s.closed_by_server(0.5), "HTTP/1.0 keep-alive: connection stays open")
        s.close()

        # 5. HTTP/1.1 Connection: close: answered, then closed; pipelined
        #    requests after it are not answered.
        s = HttpStream(port)
        s.send(get_request("/health") + get_request("/api/snowflake/get/c", headers={"Connection": "close"}) +
               get_request("/health"))
        rs = s.read_responses(3)
        check(len(rs) == 2 and rs[0][0] == 200 and rs[1][0] == 200,
              "Connection: close: the requests up to it are answered (%d answers)" % len(rs))
        if len(rs) >= 2:
            check(rs[1][1].get("connection", "").lower() == "close",
                  "Connection: close: the last answer says Connection: close")
        check(s.eof, "Connection: close: server closes after the answer")
        s.close()

        # 6. Large requests near the limits, pipelined across the server's
        #    input buffer: 16384-byte bodies (Content-Length and chunked) and
        #    ~8 kB heads, interleaved with small requests.
        big = []
        for k in range(6):
            if k % 3 == 0:
                big.append(b"GET /api/snowflake/get/big%d HTTP/1.1\r\nHost: x\r\nContent-Length: 16384\r\n\r\n" % k
                           + b"b" * 16384)
            elif k % 3 == 1:
                big.append(b"GET /api/snowflake/get/big%d HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                           % k + (b"1000\r\n" + b"c" * 4096 + b"\r\n") * 4 + b"0\r\n\r\n")
            else:
                big.append(get_request("/api/snowflake/get/big%d" % k, headers={"X-Pad": "p" * 7900}))
            big.append(get_request("/api/snowflake/get/small%d" % k))
        s = HttpStream(port)
        s.send(b"".join(big))
        rs = s.read_responses(len(big))
        check(len(rs) == len(big) and all(r[0] == 200 and r[2].isdigit() for r in rs),
              "large pipelined requests: %d answers, all 200 IDs (got %s)" % (len(big), [r[0] for r in rs]))
        got = [int(r[2]) for r in rs if r[0] == 200 and r[2].isdigit()]
        check(all(a < b for a, b in zip(got, got[1:])), "large pipelined requests: IDs in request order")
        s.close()

        # 7. HEAD: whatever the status (200, or 405 if HEAD is not served),
        #    the answer carries no body (RFC 9110 9.3.2), so the next pipelined
        #    answer starts right after its head.
        s = HttpStream(port)
        s.send(b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n" + get_request("/health", headers={"Connection": "close"}))
        data = b""
        while True:
            chunk = s.sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        check(head.startswith(b"HTTP/1.1 ") and rest.startswith(b"HTTP/1.1 200"),
              "HEAD /health: answer without a body, next answer follows its head (got %r)" % data[:300])
        s.close()

        # 8. Plain HTTP/1.1 keeps the connection open (no Connection header).
        s = HttpStream(port)
        s.send(get_request("/health"))
        r = s.read_response()
        check(r is not None and r[0] == 200, "HTTP/1.1: answered")
        check(not s.closed_by_server(0.5), "HTTP/1.1: connection stays open by default")
        s.close()
        check(node.proc.alive(), "server alive at the end")
        env.finish()


if __name__ == "__main__":
    main()
