"""Helpers of the bounded-lead tests (docs/reference/guarantees.md, "The bounded lead"): a wall clock
stepped through libfaketime's timestamp file, and clients that keep several
keep-alive connections busy and record every answer per connection."""
import http.client as httpclient
import os
import threading
import time

from leafdtest import check


class FakeClock:
    """The offset file libfaketime reads on every clock_gettime
    (FAKETIME_NO_CACHE=1); replaced atomically, never half-written."""

    def __init__(self, path):
        self.path = path
        self.set("+0")

    def set(self, spec):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(spec + "\n")
        os.rename(tmp, self.path)


class Conn(threading.Thread):
    """One keep-alive connection requesting IDs back to back."""

    def __init__(self, port, count=10, pause=0.002, max_s=60):
        super().__init__(daemon=True)
        self.port, self.count, self.pause, self.max_s = port, count, pause, max_s
        self.stop_flag = threading.Event()
        self.ids = []
        self.failures = []  # (monotonic time, status or exception, body)
        self.requests = 0

    def run(self):
        c = None
        end = time.monotonic() + self.max_s
        while not self.stop_flag.is_set() and time.monotonic() < end:
            try:
                c = c or httpclient.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/api/snowflake/get/lead?count=%d" % self.count)
                r = c.getresponse()
                body = r.read().decode()
                self.requests += 1
                if r.status == 200:
                    self.ids.extend(int(x) for x in body.split("\n"))
                else:
                    self.failures.append((time.monotonic(), r.status, body[:200]))
            except Exception as e:  # a broken connection is a failure too
                self.failures.append((time.monotonic(), "exception", repr(e)))
                c = None
            time.sleep(self.pause)


class Clients:
    """Several connections to one node."""

    def __init__(self, port, n=4, **kw):
        self.conns = [Conn(port, **kw) for _ in range(n)]
        for c in self.conns:
            c.start()

    def stop(self):
        for c in self.conns:
            c.stop_flag.set()
        for c in self.conns:
            c.join(15)

    def failures(self):
        return [f for c in self.conns for f in c.failures]

    def ids(self):
        return [i for c in self.conns for i in c.ids]

    def requests(self):
        return sum(c.requests for c in self.conns)

    def check_order(self, what):
        """Strictly increasing per connection, no duplicate at all."""
        for k, c in enumerate(self.conns):
            check(all(a < b for a, b in zip(c.ids, c.ids[1:])),
                  "%s: connection %d's %d IDs strictly increase" % (what, k, len(c.ids)))
        ids = self.ids()
        check(len(set(ids)) == len(ids), "%s: no duplicate among %d IDs" % (what, len(ids)))
