"""The Python binding of libleafd-client (src/client/python/leafd) against a fake node: a thread of
this test that answers the library's requests with ranges of one counter, or with one hostile
answer. No leafd, no database: a few seconds.
- multiprocessing with the fork start method: the child never hands out an ID its parent had
  buffered (they are a gap in the child), and serves, while a thread of the parent takes IDs;
- next_many with a count the library cannot serve (negative, above leafd.MANY_MAX) raises
  leafd.Error(EINVAL), and later IDs still ascend;
- an answer with Content-Length: -8 (or 2^64 - 1) is refused: leafd.Error, not a crash of the
  interpreter; an error's text says what the node said (leafd_client_error);
- a strict key (sequence:<name>): Python threads calling at once share round trips (the C calls
  release the GIL, so the library batches them), and a planted fault, the node answering an ID
  below one the handle already handed out, raises leafd.Error(EORDER) and the ID never comes out."""
import multiprocessing
import os
import socket
import subprocess
import sys
import threading
import time

from clientbinding import import_leafd

leafd = import_leafd()
import leafdtest  # noqa: E402
from leafdtest import check, log  # noqa: E402


class FakeNode:
    """Answers GET /api/segment/range/<tag>?count=N with the next N IDs of one counter, or with
    self.hostile when set. Serves the connections of forked children too (they share the port)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.next = 1000
        self.hostile = None
        self.seq_delay = 0  # seconds before a sequence answer: a round trip
        self.seq_requests = 0
        self.lower_once = False  # the next sequence answer is below what was issued
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.endpoint = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def sequence(self, n):
        """n IDs of the one counter, one a line (or, once, IDs issued long before)."""
        time.sleep(self.seq_delay)
        with self.lock:
            self.seq_requests += 1
            start, self.next = self.next, self.next + n
            if self.lower_once:
                self.lower_once, start, self.next = False, start - 500, start
        body = b"\n".join(b"%d" % i for i in range(start, start + n))
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)

    def answer(self, req):
        if self.hostile is not None:
            return self.hostile
        if req.startswith(b"GET /api/sequence/"):
            return self.sequence(int(req.split(b"count=", 1)[1].split(b" ", 1)[0]))
        n = int(req.split(b"count=", 1)[1].split(b" ", 1)[0]) if b"count=" in req else 1
        with self.lock:
            start, self.next = self.next, self.next + n
        body = b'{"biz_tag":"t","start":"%d","end":"%d"}' % (start, start + n - 1)
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)

    def serve(self, conn):
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    got = conn.recv(4096)
                    if not got:
                        return
                    buf += got
                req, buf = buf.split(b"\r\n\r\n", 1)
                conn.sendall(self.answer(req))


def child_takes(client, q):
    ids, errors = [], []
    for _ in range(2000):
        try:
            ids.append(client.next("segment:f"))
        except leafd.Error as e:
            errors.append(str(e))
            if len(errors) > 3:
                break
    q.put((ids, errors))


def check_fork(node):
    c = leafd.Client(node.endpoint, options="log=0;wait.ms=2000;prefetch.min=20000")
    parent, stop = [], threading.Event()

    def busy():
        while not stop.is_set():
            parent.extend(c.next_many("segment:f", 10))

    t = threading.Thread(target=busy, daemon=True)
    t.start()
    while len(parent) < 1000:
        stop.wait(0.001)
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child_takes, args=(c, q))
    p.start()
    child, errors = q.get(timeout=60)
    p.join(30)
    stop.set()
    t.join()
    parent += c.next_many("segment:f", 30000)
    both = set(child) & set(parent)
    log("fork: parent %d IDs, child %d IDs (%d failed calls), %d in both"
        % (len(parent), len(child), len(errors), len(both)))
    check(not both, "the child hands out none of its parent's IDs: %d in both" % len(both))
    check(len(child) == 2000 and not errors, "the child serves: %d IDs, %r" % (len(child), errors[:2]))
    check(p.exitcode == 0, "the child exits 0: %r" % p.exitcode)
    c.close()


def check_counts(node):
    with leafd.Client(node.endpoint, options="log=0;wait.ms=2000") as c:
        last = c.next_many("segment:n", 10)[-1]
        for n in (-1, -8, 2 ** 63, 2 ** 64 - 1, leafd.MANY_MAX + 1):
            try:
                c.next_many("segment:n", n)
                check(False, "next_many(%d) refused" % n)
            except leafd.Error as e:
                check(e.code == leafd.EINVAL, "next_many(%d): EINVAL, %s" % (n, e))
            except Exception as e:  # noqa: BLE001 - anything but leafd.Error fails the check
                check(False, "next_many(%d): %r, not leafd.Error" % (n, e))
        ids = c.next_many("segment:n", 100)
        check(ids[0] > last and ids == sorted(ids), "IDs still ascend after the refusals")


def check_hostile(node):
    for head in (b"Content-Length: -8", b"Content-Length: 18446744073709551615"):
        node.hostile = b"HTTP/1.1 200 OK\r\n" + head + b"\r\n\r\n"
        with leafd.Client(node.endpoint, options="log=0;wait.ms=300") as c:
            try:
                c.next("segment:h")
                check(False, "%s refused" % head.decode())
            except leafd.Error as e:
                check(e.code == leafd.EUNAVAILABLE, "%s: %s" % (head.decode(), e))
                check(node.endpoint[7:] in str(e), "the error names the node: %s" % e)
    # A refusal: the error says what the node said (leafd_client_error).
    body = b'{"code":"unknown_tag","message":"no such tag"}'
    node.hostile = b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    with leafd.Client(node.endpoint, options="log=0;wait.ms=1000") as c:
        try:
            c.next("segment:gone")
            check(False, "a 404 refused")
        except leafd.Error as e:
            check(e.code == leafd.ENOTFOUND and "404 unknown_tag" in str(e), "404: %s" % e)
    node.hostile = None


def check_strict(node):
    node.seq_delay = 0.01
    with leafd.Client(node.endpoint, options="log=0;timeout.ms=5000") as c:
        got = {}

        def caller(i):
            got[i] = [c.next("sequence:p") for _ in range(20)]
        before = node.seq_requests
        threads = [threading.Thread(target=caller, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        trips = node.seq_requests - before
        ids = [x for v in got.values() for x in v]
        log("strict: 16 Python threads, %d calls in %d round trips" % (len(ids), trips))
        check(len(ids) == 320 and len(set(ids)) == 320, "every call served, no ID twice")
        check(all(v == sorted(v) for v in got.values()), "each thread's IDs ascend")
        check(trips * 2 < len(ids), "threads share round trips: %d for %d calls" % (trips, len(ids)))
        node.seq_delay = 0
        last = c.next("sequence:p")
        node.lower_once = True
        try:
            v = c.next("sequence:p")
            check(False, "an answer below %d refused, not %d handed out" % (last, v))
        except leafd.Error as e:
            check(e.code == leafd.EORDER, "an answer below the last ID: EORDER, %s" % e)
        after = c.next("sequence:p")
        check(after > last, "the next honest answer serves: %d > %d" % (after, last))


def main():
    node = FakeNode()
    check_counts(node)
    check_hostile(node)
    check_strict(node)
    lib = os.environ.get("LIBLEAFD_CLIENT", "")
    if lib and "libtsan" in subprocess.run(["ldd", lib], capture_output=True, text=True).stdout:
        # ThreadSanitizer stops a child of a multi-threaded fork that starts a thread
        # (die_after_fork): the fork is checked in the other builds.
        log("fork: skipped under ThreadSanitizer")
    else:
        check_fork(node)
    c = leafdtest._checks
    print("%d passed, %d failed" % (c["passed"], c["failed"]))
    sys.exit(1 if c["failed"] else 0)


if __name__ == "__main__":
    main()
