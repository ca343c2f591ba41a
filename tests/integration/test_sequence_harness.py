"""The sequence test harness tested on its own, without leafd: the checkers of
tests/lib/seqclients.py on hand-made records (they find duplicates, order
violations, non-ascending answers; they pass correct concurrent answers;
gap, unavailability and handover figures are right; 200k records in a few
seconds), and the clients against an in-process mock cluster of three nodes
that speaks leafd's documented HTTP and RESP shapes (200 IDs; 307 + Location +
{"code":"not_primary","primary"}; 503 no_primary; -MOVED; -TRYAGAIN): they
follow the primary through a 100 ms election, a crashed node and a handover,
and what they record passes the checks. About 10 s."""
import json
import random
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from leafdtest import check, log, _checks
from seqclients import (Event, Record, check_strict_order, event_window, handover_windows,
                        max_gap, max_unavailable, summary)
from seqcluster import Workload


def rec(client, send, recv, ids, node="n"):
    return Record(client, send, recv, min(ids), max(ids), tuple(ids), node)


# ---- checkers on hand-made records -------------------------------------------
ok = [rec("a", 0.0, 1.0, [1, 2]), rec("b", 0.5, 1.5, [3]), rec("a", 1.1, 1.2, [4]),
      rec("c", 0.2, 3.0, [5]),  # concurrent with everything: any order is fine
      rec("b", 1.6, 1.7, [10, 11])]
check(check_strict_order(ok) == [], "correct concurrent answers pass: %s" % check_strict_order(ok))
conc = [rec("a", 0.0, 1.0, [7]), rec("b", 0.5, 1.5, [3])]  # overlapping in time: fine
check(check_strict_order(conc) == [], "a smaller ID to a concurrent request is allowed")
v = check_strict_order([rec("a", 0.0, 1.0, [9]), rec("b", 1.01, 1.02, [8])])
check(len(v) == 1 and v[0].startswith("order:"), "a smaller ID after a received one is found: %s" % v)
v = check_strict_order([rec("a", 0.0, 1.0, [9]), rec("b", 0.5, 0.9, [9])])
check(any("duplicate" in x for x in v), "a repeated ID is found: %s" % v)
v = check_strict_order([rec("a", 0, 1, [1, 5]), Record("b", 0, 1, 3, 3, (3,), "n"),
                        Record("c", 2, 3, 2, 4, range(2, 5), "n")])
check(any("duplicate ID 3" in x for x in v), "a repeat inside overlapping ranges is found: %s" % v)
v = check_strict_order([Record("a", 0, 1, 3, 5, (5, 3), "n")])
check(any("ascending" in x for x in v), "a non-ascending answer is found: %s" % v)
check(max_gap(ok)[0] == 4, "the largest gap is 6..9: %s" % (max_gap(ok),))
un = max_unavailable(ok, 1.0, 4.0)
check(abs(un[0] - 1.3) < 1e-9 and un[1] == 1.7, "longest stretch without answers: %s" % (un,))

# the handover of one client: failing from 2.0 to its next answer at 2.25
evs = [Event("a", 2.0, "redirect", "n0", ""), Event("a", 2.1, "tryagain", "n1", ""),
       Event("b", 2.05, "conn", "n0", "")]
recs = [rec("a", 1.0, 1.9, [1]), rec("a", 2.2, 2.25, [2]), rec("b", 2.1, 2.15, [3])]
hw = handover_windows(recs, evs, 1.95, 3.0)
check(abs(hw["a"] - 0.25) < 1e-9 and abs(hw["b"] - 0.10) < 1e-9, "handover per client: %s" % hw)
check(event_window(evs, 1.95, 3.0)[0] == 2, "conn is not a redirect/TRYAGAIN event")

# 200k records from 8 concurrent clients, one ID each, issued in order
random.seed(7)
big, t, nxt = [], 0.0, 1
for i in range(200000):
    t += 0.00005
    lat = random.random() * 0.002
    big.append(Record("c%d" % (i % 8), t - lat, t + 0.0001, nxt, nxt, range(nxt, nxt + 1), "n"))
    nxt += random.choice((1, 1, 1, 2))
t0 = time.monotonic()
v = check_strict_order(big)
took = time.monotonic() - t0
log("check_strict_order on 200k records: %.2f s" % took)
check(v == [] and took < 10, "200k correct records pass in %.2f s: %s" % (took, v))
bad = list(big)
bad[150000] = bad[150000]._replace(lo=bad[100000].lo, hi=bad[100000].hi, ids=bad[100000].ids)
check(check_strict_order(bad) != [], "one stale ID in 200k records is found")


# ---- the clients against a mock cluster ---------------------------------------
class Mock:
    """Three fake nodes sharing one counter; `primary` is an index or None."""

    def __init__(self):
        self.lock = threading.Lock()
        self.next = 1
        self.primary = 0
        self.dead = set()
        self.nodes = []
        for i in range(3):
            h = ThreadingHTTPServer(("127.0.0.1", 0), self.http_handler(i))
            r = socketserver.ThreadingTCPServer(("127.0.0.1", 0), self.resp_handler(i))
            for s in (h, r):
                s.daemon_threads = True
                threading.Thread(target=s.serve_forever, args=(0.05,), daemon=True).start()
            self.nodes.append(type("N", (), {"name": "m%d" % i, "port": h.server_address[1],
                                             "resp_port": r.server_address[1], "srv": (h, r)}))

    def ask(self, i, n):
        """('ids', [..]) | ('moved', node) | ('none', None) | ('dead', None)"""
        with self.lock:
            if i in self.dead:
                return "dead", None
            if self.primary is None:
                return "none", None
            if self.primary != i:
                return "moved", self.nodes[self.primary]
            ids = list(range(self.next, self.next + n))
            self.next += n
            return "ids", ids

    def http_handler(self, i):
        mock = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                n = int(self.path.split("count=")[1]) if "count=" in self.path else 1
                what, arg = mock.ask(i, n)
                if what == "dead":
                    self.close_connection = True
                    self.connection.close()
                    return
                hdr = {}
                if what == "ids":
                    st, body = 200, "\n".join(map(str, arg))
                elif what == "moved":
                    st, body = 307, json.dumps({"code": "not_primary", "message": "m",
                                                "primary": "127.0.0.1:%d" % arg.port})
                    hdr["Location"] = "http://127.0.0.1:%d%s" % (arg.port, self.path)
                else:
                    st, body = 503, json.dumps({"code": "no_primary", "message": "m"})
                self.send_response(st)
                for k, v in hdr.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())
        return H

    def resp_handler(self, i):
        mock = self

        class R(socketserver.StreamRequestHandler):
            def handle(self):
                while True:
                    line = self.rfile.readline()
                    if not line:
                        return
                    args = []
                    for _ in range(int(line[1:])):
                        ln = int(self.rfile.readline()[1:])
                        args.append(self.rfile.read(ln + 2)[:-2].decode())
                    n = int(args[2]) if args[0] == "LEAF.IDS" else 1
                    what, arg = mock.ask(i, n)
                    if what == "dead":
                        return
                    if what == "moved":
                        out = "-MOVED 1234 127.0.0.1:%d\r\n" % arg.resp_port
                    elif what == "none":
                        out = "-TRYAGAIN no primary\r\n"
                    elif args[0] == "INCR":
                        out = ":%d\r\n" % arg[0]
                    else:
                        out = "*%d\r\n" % n + "".join(":%d\r\n" % x for x in arg)
                    self.wfile.write(out.encode())
        return R


mock = Mock()
wl = Workload(mock.nodes, max_s=30)
wl.start()
check(wl.settle(5), "all clients get IDs from the mock primary")
time.sleep(0.5)
t_elect = time.monotonic()
mock.primary = None        # an election of 100 ms
time.sleep(0.1)
mock.primary = 1
check(wl.settle(5), "clients follow the new primary")
time.sleep(0.5)
t_crash = time.monotonic()
mock.dead.add(1)           # the primary crashes; 300 ms later node 2 takes over
mock.primary = None
time.sleep(0.3)
mock.primary = 2
check(wl.settle(5), "clients find the third node after the crash")
time.sleep(0.5)
t_end = time.monotonic()
wl.stop()
records, events = wl.rec.snapshot()
log("mock run: " + summary(records, events))
check(check_strict_order(records) == [], "the mock's answers pass the order check")
check({r.node for r in records} == {"m0", "m1", "m2"}, "answers came from all three nodes")
kinds = {e.kind for e in events}
check({"redirect", "tryagain", "no_primary", "conn"} <= kinds,
      "redirect, TRYAGAIN, 503 no_primary and connection errors were all seen: %s" % kinds)
hw = max(handover_windows(records, events, t_elect, t_crash).values())
log("mock election of 100 ms: worst client handover %.1f ms" % (hw * 1000))
check(0.05 <= hw < 0.5, "the handover measure sees the 100 ms election (%.1f ms)" % (hw * 1000))
un = max_unavailable(records, t_crash, t_end)[0]
check(0.25 <= un < 1.0, "the unavailability measure sees the 300 ms crash (%.1f ms)" % (un * 1000))
for n in mock.nodes:
    for s in n.srv:
        s.shutdown()
print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
raise SystemExit(1 if _checks["failed"] else 0)
