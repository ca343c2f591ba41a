"""Helpers of the identity tests (tests/integration/test_identity_*.py,
docs/IDENTITY.md): parallel hammering with a duplicate count, a fake peer, Leaf-shaped znodes."""
import array
import http.client as httpclient
import http.server
import json
import socket
import threading
import time

from leafdtest import free_port, log, reserve_port, zkcli
from zkhelpers import cli_list, zk_props


class Hammer:
    """Requests snowflake IDs from every node in parallel (one thread per node, keep-alive)
    until stop(); keeps every ID answered with 200. Nodes that are down or answer 503 are
    simply retried: the point is what was issued, and whether any ID was issued twice."""

    def __init__(self, nodes, count=10, key="dup"):
        self.nodes = list(nodes)
        self.count = count
        self.key = key
        # 8 bytes an ID: a 10 s hammer of two nodes keeps a few million.
        self.ids = {n.port: array.array("q") for n in self.nodes}
        self.status = {n.port: {} for n in self.nodes}
        self.flag = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(n,), daemon=True)
                        for n in self.nodes]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def _run(self, node):
        conn = None
        path = "/api/snowflake/get/%s?count=%d" % (self.key, self.count)
        while not self.flag.is_set():
            proc = getattr(node, "proc", None)
            if proc is None or not proc.alive():
                # Its port is free again: another test's server may take it and answer, and
                # those IDs would count as this node's (a twin seen issuing after its exit).
                if conn:
                    conn.close()
                conn = None
                time.sleep(0.05)
                continue
            try:
                conn = conn or httpclient.HTTPConnection(getattr(node, "host", "127.0.0.1"), node.port,
                                                       timeout=5)
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read().decode()
                st = self.status[node.port]
                st[r.status] = st.get(r.status, 0) + 1
                if r.status == 200:
                    self.ids[node.port].extend(int(x) for x in body.split("\n") if x)
                else:
                    time.sleep(0.02)
            except Exception:
                conn = None
                time.sleep(0.05)

    def stop(self):
        self.flag.set()
        for t in self.threads:
            t.join(10)
        return self

    def total(self):
        return sum(len(v) for v in self.ids.values())

    def duplicates(self):
        """IDs issued more than once, across all nodes (and within one)."""
        return count_duplicates(self.ids.values())

    def summary(self):
        return ", ".join("%d: %d IDs %s" % (p, len(self.ids[p]), self.status[p])
                         for p in self.ids)


def count_duplicates(lists):
    """How many IDs of the lists (arrays) repeat an earlier one: sorted, then scanned."""
    merged = array.array("q")
    for ids in lists:
        merged.extend(ids)
    merged = sorted(merged)
    return sum(1 for a, b in zip(merged, merged[1:]) if a == b)


def hammer(nodes, seconds, **kw):
    """Hammers nodes for `seconds`; returns the stopped Hammer."""
    h = Hammer(nodes, **kw).start()
    time.sleep(seconds)
    h.stop()
    log("hammer %ds: %s; %d duplicate(s)" % (seconds, h.summary(), h.duplicates()))
    return h


class FakePeer:
    """A peer that answers GET /api/snowflake/time with its own wall clock shifted by offset_ms,
    listed under leaf_temporary as a PERSISTENT znode (an ephemeral one would end with zkCli's
    session): leafd lists it as a live peer and asks it."""

    def __init__(self, zk, name, offset_ms):
        self.port = free_port()
        offset = offset_ms

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = json.dumps({"timestamp": int(time.time() * 1000) + offset}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.identity = "127.0.0.1:%d" % self.port
        self.path = "/snowflake/%s/leaf_temporary/%s" % (name, self.identity)
        data = compact({"ip": "127.0.0.1", "port": str(self.port),
                        "timestamp": int(time.time() * 1000) + offset})
        zk_batch(zk, ensure_cmds("/snowflake/%s/leaf_temporary" % name) +
                 ["create %s %s" % (self.path, data)])

    def close(self, zk):
        zk.cli("delete", self.path)
        self.server.shutdown()


def compact(obj):
    """JSON without spaces: zkCli splits its command line on them."""
    return json.dumps(obj, separators=(",", ":"))


def zk_batch(zk, cmds):
    """Runs zkCli.sh commands in one session (one JVM), connected first; returns their answers
    (leafdtest.zkcli: zkCli's own noise left out)."""
    return zkcli(zk.address(), cmds)[0]


def ensure_cmds(path):
    """zkCli commands creating every component of path (an existing one just fails)."""
    parts = path.strip("/").split("/")
    return ['create %s ""' % ("/" + "/".join(parts[:i])) for i in range(1, len(parts) + 1)]


def leaf_register(zk, name, nodes):
    """Registers nodes exactly as Meituan Leaf does: for each (ip, port, timestamp_ms) a
    PERSISTENT_SEQUENTIAL /snowflake/{name}/forever/{ip}:{port}- holding Leaf's JSON (port a
    string), in order. Returns {ip:port: (child name, worker ID)}."""
    cmds = ensure_cmds("/snowflake/%s/forever" % name)
    for ip, port, ts in nodes:
        cmds.append("create -s /snowflake/%s/forever/%s:%d- %s" % (
            name, ip, port, compact({"ip": ip, "port": str(port), "timestamp": ts})))
    zk_batch(zk, cmds)
    out = {}
    for child in cli_list(zk, "/snowflake/%s/forever" % name) or []:
        out[child.rsplit("-", 1)[0]] = (child, int(child.rsplit("-", 1)[1]))
    return out


def znode_stat(zk, path):
    """zkCli stat of path as a dict (None when missing)."""
    out = zk.cli("stat", path)
    st = {}
    for line in out.splitlines():
        if " = " in line:
            k, v = line.split(" = ", 1)
            st[k.strip()] = v.strip()
    return st or None


def free_port_on(ip):
    """A free TCP port on one loopback address (127.0.0.x), held for this test process as
    free_port holds its ports."""
    while True:
        with socket.socket() as s:
            s.bind((ip, 0))
            port = s.getsockname()[1]
        if reserve_port(port):
            return port


def named(zk_address, name, ip, data_dir=None, session_ms=6000):
    """Properties of a node named `name` (leafd.snowflake.identity) serving on ip (127.0.0.x)."""
    p = zk_props(zk_address, **{"leafd.zk.session.timeout.ms": str(session_ms),
                                "leafd.snowflake.identity": name,
                                "leafd.snowflake.advertise.ip": ip})
    p["leafd.listen"] = "%s:%d" % (ip, free_port_on(ip))
    if data_dir:
        p["leafd.data.dir"] = data_dir
    return p


def worker_of(node):
    """The worker ID of a snowflake ID the node issues now."""
    ident = node.get_ids("/api/snowflake/get/w")[0]
    _, body, _ = node.get("/decodeSnowflakeId?snowflakeId=%d" % ident)
    return int(json.loads(body)["workerId"])


class Puller:
    """Pulls IDs from one node in a loop; keeps (receive time, ids) of each 200."""

    def __init__(self, node):
        self.node = node
        self.got = []
        self.flag = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.flag.is_set():
            if not self.node.proc.alive():
                time.sleep(0.05)
                continue
            try:
                st, body, _ = self.node.get("/api/snowflake/get/p?count=5", timeout=2)
                if st == 200:
                    self.got.append((time.time(), [int(x) for x in body.split("\n") if x]))
                else:
                    time.sleep(0.01)
            except OSError:
                time.sleep(0.05)

    def stop(self):
        self.flag.set()
        self.t.join(5)

    def ids(self):
        return [i for _, ids in self.got for i in ids]

