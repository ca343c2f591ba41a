"""Helpers of the release-to-release upgrade tests (tests/integration/test_upgrade_*.py):
nodes that run a chosen binary, continuous load with order and duplicate checks, /ready
polled every 20 ms, and a rolling replacement of the binary node by node.

    old = releasebuild.release_binary("6ac706c")
    nodes = [VLeafd(env, "n%d" % i, props, binary=old) for i in range(3)]
    load = Load(nodes, "/api/snowflake/get/up?count=5", key=worker_of).start()
    ready = ReadyPoller(nodes).start()
    figures = rolling(nodes, LEAFD_BIN, load, ready, kill9=False)
    load.stop(); load.report("forever SIGTERM")

What the load counts (Load.figures()): requests answered, IDs checked, duplicates (every ID
of the scenario, across all nodes), IDs going backwards on one client connection, IDs going
backwards per key (worker ID for snowflake, the sequence for sequences: an ID not above the
highest ID of that key any client had received before the request was sent), and failed
requests (an error answer or a broken connection on a node in service). A node is taken out
of the clients' rotation (drained) before it is stopped and put back once /ready says 200,
as a load balancer that polls /ready would.
"""
import array
import http.client as httpclient
import os
import re
import signal
import threading
import time

from leafdtest import LEAFD_BIN, Leafd, Proc, RespError, RespStream, log, wait_until


class VLeafd(Leafd):
    """A Leafd whose binary can change between starts (self.binary)."""

    def __init__(self, env, name, props, binary=None, **kw):
        self.binary = binary or LEAFD_BIN  # before Leafd.__init__, which starts it
        super().__init__(env, name, props, **kw)
        env.servers.append(self)  # stopped at exit, as Env.leafd() does

    def start(self, wait_ready=True, extra_env=None, timeout=30):
        self.write_conf()
        e = dict(os.environ)
        e.update(self.extra_env)
        e.update(extra_env or {})
        self.proc = Proc([self.binary, "-c", self.conf], os.path.join(self.dir, "leafd.log"), env=e)
        if wait_ready and not self.wait_ready(timeout):
            raise RuntimeError("leafd %s (%s) not ready; log:\n%s"
                               % (self.name, self.binary, self.proc.log_text()[-3000:]))
        return self


class Load:
    """Keep-alive HTTP clients (and RESP clients) hammering the nodes in service."""

    def __init__(self, nodes, path, key=None, clients=3, resp=None, follow=False, ordered=True):
        self.nodes = list(nodes)
        self.ordered = ordered      # IDs rise on a connection (opaque IDs do not: False)
        self.in_service = set(n.port for n in self.nodes)
        self.path = path
        self.key = key              # id -> key whose IDs must rise across the cluster (or None)
        self.follow = follow        # follow 307 (sequences: standbys redirect to the primary)
        self.resp = resp            # (command, args...) for RESP clients, e.g. ("INCR", "snowflake:up")
        self.nclients = clients
        self.lock = threading.Lock()
        self.ids = array.array("q")
        self.floor = {}             # key -> highest ID any client has received
        self.requests = 0
        self.failed = 0
        self.back_conn = 0
        self.back_key = 0
        self.samples = []           # the first few problems, for the log
        self.fail_times = []        # monotonic instants of the failed requests
        self.flag = threading.Event()
        self.threads = []

    # ---- rotation
    def drain(self, node):
        with self.lock:
            self.in_service.discard(node.port)
        time.sleep(0.15)  # requests in flight finish

    def restore(self, node):
        with self.lock:
            self.in_service.add(node.port)

    def _pick(self, i, current):
        with self.lock:
            ports = sorted(self.in_service)
        if not ports:
            return None
        if current in ports:
            return current
        return ports[i % len(ports)]

    # ---- recording
    def _note(self, what):
        if len(self.samples) < 10:
            self.samples.append(what)

    def _record(self, snap, last_conn, got, where):
        """got: IDs of one answer, in order. Returns the connection's new last ID."""
        with self.lock:
            self.requests += 1
            for v in got:
                if self.ordered and last_conn is not None and v <= last_conn:
                    self.back_conn += 1
                    self._note("%s: %d after %d on one connection" % (where, v, last_conn))
                last_conn = v
                if self.key is not None:
                    k = self.key(v)
                    if v <= snap.get(k, -1):
                        self.back_key += 1
                        self._note("%s: %d not above %d, the highest of %r seen before" %
                                   (where, v, snap[k], k))
            self.ids.extend(got)
            if self.key is not None:
                for v in got:
                    k = self.key(v)
                    if v > self.floor.get(k, -1):
                        self.floor[k] = v
        return last_conn

    def _fail(self, where, why):
        with self.lock:
            self.failed += 1
            self.fail_times.append(time.monotonic())
            self._note("%s: failed: %s" % (where, why))

    # ---- clients
    def _http_client(self, i):
        port, conn, last, conns = None, None, None, {}
        while not self.flag.is_set():
            p = self._pick(i, port)
            if p is None:
                time.sleep(0.02)
                continue
            if p != port:
                if conn:
                    conn.close()
                port, conn, last = p, None, None
            try:
                conn = conn or httpclient.HTTPConnection("127.0.0.1", port, timeout=5)
                with self.lock:
                    snap = dict(self.floor)
                conn.request("GET", self.path)
                r = conn.getresponse()
                body = r.read().decode()
                if r.status == 307 and self.follow:
                    loc = r.getheader("Location") or ""
                    m = re.match(r"https?://[^:/]+:(\d+)(/.*)", loc)
                    if not m:
                        raise RuntimeError("307 without a usable Location: %r" % loc)
                    tp = int(m.group(1))
                    c2 = conns.get(tp) or httpclient.HTTPConnection("127.0.0.1", tp, timeout=5)
                    conns[tp] = c2
                    try:
                        c2.request("GET", m.group(2))
                        r = c2.getresponse()
                        body = r.read().decode()
                    except Exception:
                        conns.pop(tp, None).close()
                        raise
                    if r.status == 200:
                        # one connection per target node: order is checked on it
                        key = "last%d" % tp
                        conns[key] = self._record(snap, conns.get(key), _ids(body),
                                                  "client %d via %d -> %d" % (i, port, tp))
                        continue
                if r.status != 200:
                    with self.lock:
                        in_service = port in self.in_service
                    if in_service:
                        self._fail("client %d on %d" % (i, port), "%d %s" % (r.status, body[:120]))
                    time.sleep(0.02)
                    continue
                last = self._record(snap, last, _ids(body), "client %d on %d" % (i, port))
            except Exception as e:  # a broken connection
                with self.lock:
                    in_service = port in self.in_service
                if in_service:
                    self._fail("client %d on %d" % (i, port), repr(e)[:120])
                if conn:
                    conn.close()
                conn, last = None, None
                time.sleep(0.02)

    def _resp_client(self, i):
        port, s, last = None, None, None
        while not self.flag.is_set():
            nodes = {n.port: n for n in self.nodes}
            p = self._pick(i, port)
            if p is None:
                time.sleep(0.02)
                continue
            if p != port:
                if s:
                    s.close()
                port, s, last = p, None, None
            try:
                s = s or RespStream(nodes[port].resp_port, timeout=5)
                with self.lock:
                    snap = dict(self.floor)
                v = s.call(*self.resp)
                if isinstance(v, RespError) or not isinstance(v, (int, list)):
                    with self.lock:
                        in_service = port in self.in_service
                    if in_service:
                        self._fail("resp %d on %d" % (i, port), repr(v)[:120])
                    time.sleep(0.02)
                    continue
                got = [int(x) for x in v] if isinstance(v, list) else [v]
                last = self._record(snap, last, got, "resp %d on %d" % (i, port))
            except Exception as e:
                with self.lock:
                    in_service = port in self.in_service
                if in_service:
                    self._fail("resp %d on %d" % (i, port), repr(e)[:120])
                if s:
                    s.close()
                s, last = None, None
                time.sleep(0.02)

    def start(self):
        self.threads = [threading.Thread(target=self._http_client, args=(i,), daemon=True)
                        for i in range(self.nclients)]
        if self.resp:
            self.threads.append(threading.Thread(target=self._resp_client, args=(1,), daemon=True))
        for t in self.threads:
            t.start()
        return self

    def stop(self):
        self.flag.set()
        for t in self.threads:
            t.join(10)
        return self

    def failed_between(self, t0, t1):
        with self.lock:
            return sum(1 for t in self.fail_times if t0 <= t < t1)

    def duplicates(self):
        s = sorted(self.ids)
        return sum(1 for a, b in zip(s, s[1:]) if a == b)

    def figures(self):
        return {"requests": self.requests, "ids": len(self.ids), "duplicates": self.duplicates(),
                "backwards_conn": self.back_conn, "backwards_key": self.back_key,
                "failed": self.failed}

    def report(self, label):
        f = self.figures()
        log("%s: %d requests, %d IDs checked, %d duplicates, %d backwards on a connection, "
            "%d backwards per %s, %d failed requests%s" %
            (label, f["requests"], f["ids"], f["duplicates"], f["backwards_conn"],
             f["backwards_key"], "key", f["failed"],
             ("; first problems: " + " | ".join(self.samples)) if self.samples else ""))
        return f


def _ids(body):
    return [int(x) for x in body.split("\n") if x.strip()]


class ReadyPoller:
    """Polls every node's /ready every 20 ms; not_ready_ms(node, t0, t1) sums the time its
    answers were not 200 (refused connections included) between two monotonic instants."""

    def __init__(self, nodes, interval=0.02):
        self.nodes = list(nodes)
        self.interval = interval
        self.samples = {n.port: [] for n in self.nodes}
        self.flag = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(n,), daemon=True)
                        for n in self.nodes]

    def _run(self, node):
        conn = None
        while not self.flag.is_set():
            t = time.monotonic()
            ok = False
            try:
                conn = conn or httpclient.HTTPConnection("127.0.0.1", node.port, timeout=1)
                conn.request("GET", "/ready")
                r = conn.getresponse()
                r.read()
                ok = r.status == 200
            except Exception:
                if conn:
                    conn.close()
                conn = None
            self.samples[node.port].append((t, ok))
            time.sleep(max(0.0, self.interval - (time.monotonic() - t)))

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def stop(self):
        self.flag.set()
        for t in self.threads:
            t.join(5)

    def ready_since(self, node, t0):
        """The first instant after t0 at which /ready answered 200 (None if not yet)."""
        for t, ok in list(self.samples[node.port]):
            if t >= t0 and ok:
                return t
        return None

    def not_ready_ms(self, node, t0, t1):
        s = [x for x in list(self.samples[node.port]) if t0 <= x[0] <= t1]
        total = 0.0
        for (t, ok), (tn, _) in zip(s, s[1:]):
            if not ok:
                total += tn - t
        return int(total * 1000)


def replace_binary(node, binary, load, ready, kill9=False, timeout=40):
    """Drains node, stops it (SIGTERM, or kill -9), starts binary on the same config and data
    dir, waits for /ready 200 and puts it back. Returns the ms /ready was not 200, from the
    stop to the new process's first 200 (a graceful stop may answer 200 while it drains)."""
    load.drain(node)
    t0 = time.monotonic()
    if kill9:
        node.proc.kill9()
    else:
        node.proc.stop(signal.SIGTERM)
    node.binary = binary
    node.start(wait_ready=False)
    t_new = time.monotonic()  # a 200 counts from the new process only
    if not wait_until(lambda: ready.ready_since(node, t_new) is not None, timeout, interval=0.02):
        load.restore(node)
        raise RuntimeError("%s not ready %d s after the new binary started; log:\n%s"
                           % (node.name, timeout, node.log_text()[-3000:]))
    t1 = ready.ready_since(node, t_new)
    load.restore(node)
    return ready.not_ready_ms(node, t0, t1)


def rolling(nodes, binary, load, ready, kill9=False, settle=1.0):
    """Replaces the binary of every node in turn under load; returns {name: not-ready ms}."""
    out = {}
    for n in nodes:
        t0 = time.monotonic()
        out[n.name] = replace_binary(n, binary, load, ready, kill9=kill9)
        time.sleep(settle)
        log("  %s -> %s after %s: not ready %d ms; %d failed requests meanwhile" %
            (n.name, "this build" if binary == LEAFD_BIN else os.path.basename(os.path.dirname(
                os.path.dirname(binary)))[:7], "kill -9" if kill9 else "SIGTERM", out[n.name],
             load.failed_between(t0, time.monotonic())))
    return out
