"""tools/bench --idle-conns N: the memory an idle keep-alive connection holds.

For each binary: start leafd (static snowflake mode, leafd.http.max.connections
above 2N: one address may hold half), read its VmRSS, open N keep-alive
connections from this process (non-blocking sockets and a selector), each of which sends one
`GET /api/snowflake/get/x HTTP/1.1` and reads the whole response, then stays
open without sending anything. VmRSS is read right after the last response
("busy": every connection has just been used) and again after --idle-wait
seconds ("idle"). Reports (idle - before) / N in KB.

VmRSS counts what leafd's heap keeps resident, so memory a connection gives
back to malloc but malloc keeps for reuse still counts; the kernel's socket
buffers do not count (they are not in the process's pages).
"""
import selectors
import socket
import statistics
import tempfile
import time
import shutil

REQUEST = b"GET /api/snowflake/get/x HTTP/1.1\r\nHost: x\r\n\r\n"
BATCH = 500          # connections in flight at once (the listen backlog is 4096)
OPEN_TIMEOUT = 120.0  # seconds for all N connections
IDLE_WAIT = 3.0       # the new leafd releases buffers after 1 s idle, swept once a second


def response_complete(buf):
    """True once buf holds one whole response (headers and Content-Length bytes)."""
    head, sep, body = buf.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            return len(body) >= int(v)
    return True


def open_batch(port, n, deadline):
    """Opens n connections, sends one request on each, reads each response.
    Returns the sockets (left open); raises if a response is not 200."""
    sel = selectors.DefaultSelector()
    socks, bufs = [], {}
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        sel.register(s, selectors.EVENT_WRITE)
        socks.append(s)
    left = n
    while left and time.time() < deadline:
        for key, ev in sel.select(1.0):
            s = key.fileobj
            if ev & selectors.EVENT_WRITE:
                s.send(REQUEST)  # 47 bytes fit in any fresh socket buffer
                bufs[s] = b""
                sel.modify(s, selectors.EVENT_READ)
                continue
            chunk = s.recv(4096)
            if not chunk:
                raise SystemExit("leafd closed a connection before answering")
            bufs[s] += chunk
            if response_complete(bufs[s]):
                if not bufs[s].startswith(b"HTTP/1.1 200"):
                    raise SystemExit("unexpected response: %r" % bufs[s][:200])
                sel.unregister(s)
                left -= 1
    sel.close()
    if left:
        raise SystemExit("%d connections not answered in time" % left)
    return socks


def measure(b, args, who, binary):
    n = args.idle_conns
    tmp = tempfile.mkdtemp(prefix="leafd-bench-idle-")
    socks = []
    # Every connection comes from 127.0.0.1, which may hold half of the limit
    # (leafd.http.max.connections.per.address); no new key, so an older binary starts too.
    extra = {"leafd.http.max.connections": str(2 * n + 1000)}
    p, port, _ = b.start_leafd(binary, tmp, args.threads, extra, name=who)
    try:
        b.http_get(port, "/api/snowflake/get/x")  # first-use allocations out of the figure
        time.sleep(1.5)
        before = b.rss_kb(p.pid)
        deadline = time.time() + OPEN_TIMEOUT
        t0 = time.time()
        while len(socks) < n:
            socks += open_batch(port, min(BATCH, n - len(socks)), deadline)
        opened_s = time.time() - t0
        busy = b.rss_kb(p.pid)
        time.sleep(IDLE_WAIT)
        idle = b.rss_kb(p.pid)
        st, body = b.http_get(port, "/metrics")
        conns = b.metric(body.decode(), "leafd_http_connections")
        alive = p.poll() is None
    finally:
        for s in socks:
            s.close()
        b.stop(p)
        shutil.rmtree(tmp, ignore_errors=True)
    r = {"before": before, "busy": busy, "idle": idle, "open_s": opened_s, "conns": conns,
         "alive": alive}
    print("  %s: RSS before %d KB, after opening %d (%.1f s) %d KB, after %.0f s idle %d KB; "
          "leafd_http_connections %s: %.2f KB per idle connection (%.2f just after use)"
          % (who, before, n, opened_s, busy, IDLE_WAIT, idle, conns,
             (idle - before) / n, (busy - before) / n), flush=True)
    return r


def run(args, binaries, b):
    n = args.idle_conns
    got = b.raise_nofile(n + 200)
    if got < n + 200:
        raise SystemExit("RLIMIT_NOFILE is %d, need %d" % (got, n + 200))
    print("idle connections: %d, leafd.threads = %d, RLIMIT_NOFILE %d (leafd inherits it)"
          % (n, args.threads, got))
    rounds = {who: [] for who, _ in binaries}
    for r in range(args.rounds):
        order = binaries if r % 2 == 0 else list(reversed(binaries))
        for who, binary in order:
            rounds[who].append(measure(b, args, who, binary))
    print("\n| binary | RSS before (KB, median) | RSS with %d idle conns (KB, median) | "
          "KB per idle connection (median of rounds) | KB per connection just after its "
          "request |" % n)
    print("|---|---|---|---|---|")
    for who, _ in binaries:
        rs = rounds[who]
        per = [(x["idle"] - x["before"]) / n for x in rs]
        busy = [(x["busy"] - x["before"]) / n for x in rs]
        print("| %s | %d | %d | %s | %.2f |" % (
            who, statistics.median(x["before"] for x in rs),
            statistics.median(x["idle"] for x in rs), b.med(per, "%.2f"),
            statistics.median(busy)))
