"""A three-node sequence cluster for the failover tests (test_sequence_failover_*.py).

Starts real leafd nodes with sequences on (docs/cluster.md, "Sequences"), finds
the primary, runs a mixed workload of seqclients, and reports each fault.

It fails fast and says why when the sequence feature is absent: a node that
exits at start (e.g. "unknown key leafd.sequence.enable") or a first
GET /api/sequence/get/... that answers 404 ends the test at once with FAIL.

Assumptions, in one place so they can be adapted to what leafd ships:
- Who is primary is decided by leafd's documented behaviour, a probe:
  GET /api/sequence/get/probe (a sequence of its own) answers 200 on the
  primary and 307 (Location = the primary) on a standby.
- /ready is read only for the log (docs/cluster.md says it reports the role and the
  primary's identity; the key names are not fixed): ready_role() looks for a
  "role" key anywhere in the JSON, and a "primary" key beside it.
- A node's ZooKeeper session id: leafd logs "ZooKeeper session 0x... established"
  (zk/zk_session.c); every logged id still live in ZooKeeper's `cons` (the
  4-letter word) counts, so a node with one session for snowflake and one for
  sequences has both expired. When the log names none, `ss -tnp` maps the
  leafd pid's connections to ZooKeeper's client ports onto `cons` lines.
"""
import json
import re
import socket
import subprocess
import time

from leafdtest import check, free_port, http, log, raw, wait_until, _checks
from seqclients import (FAIL_KINDS, HttpSeqClient, Recorder, RespError, RespReader,
                        RespSeqClient, Target, resp_command,
                        event_window, handover_windows, ids_rate, max_gap, max_unavailable,
                        order_report, summary)
from zkhelpers import zk_props

PROBE = "/api/sequence/get/probe"
# (protocol, count): who asks, and how many IDs at a time.
MIX = [("http", 1), ("resp", 1), ("http", 10), ("resp", 1), ("http", 1), ("resp", 10)]


def fatal(env, msg):
    """Fails the test now with a clear message (no hanging on a missing feature)."""
    check(False, msg)
    env.finish()


def seq_props(zk_address, session_ms=4000, batch=1000, **extra):
    p = zk_props(zk_address, **{"leafd.sequence.enable": "true",
                                "leafd.sequence.autocreate": "true",
                                "leafd.sequence.batch": str(batch),
                                "leafd.zk.session.timeout.ms": str(session_ms),
                                "leafd.resp.listen": "127.0.0.1:%d" % free_port()})
    p.update(extra)
    return p


def seq_state(node):
    """/ready's "sequence" object of node ({} when the node does not answer)."""
    try:
        return json.loads(node.get("/ready", timeout=2)[1]).get("sequence", {})
    except Exception:  # noqa: BLE001
        return {}


def shard_slots(nodes):
    """Each node's slot count, when the nodes own all 16384 slots and each owns some; else None."""
    s = [seq_state(n).get("slots", 0) for n in nodes]
    return s if sum(s) == 16384 and min(s) > 0 else None


def probe(node, timeout=2):
    """(status, code, primary host:port) of one sequence request to node, no redirect followed."""
    st, body, hdr = http(node.port, PROBE, timeout=timeout)
    try:
        j = json.loads(body) if st != 200 else {}
    except ValueError:
        j = {}
    loc = hdr.get("Location") or hdr.get("location") or ""
    primary = re.sub(r"^https?://", "", loc).split("/")[0] or j.get("primary")
    return st, j.get("code"), primary


def await_serving(env, node, timeout=40):
    """Waits until node answers the probe with 200 or 307; fails fast on a
    dead process or a 404 (feature absent)."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        if not node.proc.alive():
            fatal(env, "leafd %s exited at start (rc %s): is the sequence feature built? log:\n%s"
                  % (node.name, node.proc.p.returncode, node.log_text()[-1500:]))
        try:
            last = probe(node)
        except OSError as e:
            last = repr(e)
        if isinstance(last, tuple):
            if last[0] == 404:
                fatal(env, "GET %s on %s answered 404 (%s): the sequence HTTP API "
                      "(docs/cluster.md, 'Sequences') is not there" % (PROBE, node.name, last))
            if last[0] in (200, 307):
                return last
        time.sleep(0.1)
    fatal(env, "leafd %s never served sequences within %d s (last probe: %s); log:\n%s"
          % (node.name, timeout, last, node.log_text()[-1500:]))


def start_node(env, name, props):
    """Starts one node, waits until it serves sequences (as primary or standby)."""
    n = env.leafd(name, props, wait_ready=False)
    n.resp_port = int(props["leafd.resp.listen"].rsplit(":", 1)[1])
    st = await_serving(env, n)
    log("%s: http %d resp %d, probe -> %s" % (name, n.port, n.resp_port, st))
    return n


def restart_node(env, node):
    node.start(wait_ready=False)
    return await_serving(env, node)


def find_primary(nodes, timeout=20, exclude=None):
    """The node that answers the probe with 200 (None on timeout)."""
    def one():
        for n in nodes:
            if n is exclude or not n.proc or not n.proc.alive():
                continue
            try:
                if probe(n, timeout=1)[0] == 200:
                    return n
            except OSError:
                pass
        return None
    return wait_until(one, timeout, interval=0.05)


def ready_role(node):
    """(role, primary) as /ready reports them, or (None, None): see the module doc."""
    try:
        st, body, _ = node.get("/ready", timeout=2)
        doc = json.loads(body)
    except (OSError, ValueError):
        return None, None
    stack = [doc]
    while stack:
        d = stack.pop()
        if isinstance(d, dict):
            if "role" in d:
                return d.get("role"), d.get("primary")
            stack.extend(d.values())
    return None, None


def zk_cons(zk):
    """[(client port, session id as int)] of one ZooKeeper server's connections."""
    try:
        out = raw(zk.port, b"cons", timeout=2).decode("utf-8", "replace")
    except OSError:
        return []
    res = []
    for m in re.finditer(r"/127\.0\.0\.1:(\d+)\[\d+\]\(([^)]*)\)", out):
        sid = re.search(r"sid=(0x[0-9a-f]+)", m.group(2))
        if sid:
            res.append((int(m.group(1)), int(sid.group(1), 16)))
    return res


def node_sessions(node, zks):
    """The node's live ZooKeeper session ids as hex strings, and how they were found."""
    live = {sid for z in zks for _, sid in zk_cons(z)}
    # Both of the node's sessions: the snowflake node's ("... established") and
    # the sequence election's (logged by the sequence service by name).
    pairs = re.findall(r"(?:ZooKeeper session (0x[0-9a-f]+) established|election runs on "
                       r"ZooKeeper session (0x[0-9a-f]+))", node.log_text())
    logged = [int(x, 16) for pair in pairs for x in pair if x]
    found = [s for s in dict.fromkeys(logged) if s in live]
    if found:
        return ["0x%x" % s for s in found], "leafd log + cons"
    ports = {z.port for z in zks}
    out = subprocess.run(["ss", "-tnpH"], capture_output=True, text=True).stdout
    mine = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 6 and "pid=%d," % node.proc.p.pid in line and \
                int(f[4].rsplit(":", 1)[1]) in ports:
            mine.add(int(f[3].rsplit(":", 1)[1]))
    found = [sid for z in zks for port, sid in zk_cons(z) if port in mine]
    if found:
        return ["0x%x" % s for s in found], "ss -tnp + cons"
    return (["0x%x" % logged[-1]], "leafd log (not seen in cons)") if logged else ([], "none")


def zk_server_of(sid_hex, zks):
    sid = int(sid_hex, 16)
    for z in zks:
        if any(s == sid for _, s in zk_cons(z)):
            return z
    return None


class Workload:
    """The MIX of clients over all nodes, plus optional pinned probes of one node."""

    def __init__(self, nodes, seq="s", mix=MIX, max_s=240, pause=0.001):
        self.rec = Recorder()
        self.seq = seq
        self.targets = [Target(n.name, n.port, n.resp_port) for n in nodes]
        self.clients = []
        for i, (proto, count) in enumerate(mix):
            cls = HttpSeqClient if proto == "http" else RespSeqClient
            self.clients.append(cls("%s%d" % (proto, i), self.rec, self.targets, seq,
                                    count=count, start=i, max_s=max_s, pause=pause))

    def pin(self, node, proto="http", max_s=240):
        """A client that asks node only and never follows: what node itself answers."""
        cls = HttpSeqClient if proto == "http" else RespSeqClient
        t = [x for x in self.targets if x.name == node.name]
        c = cls("pin-%s-%s" % (proto, node.name), self.rec, t, self.seq, follow=False,
                max_s=max_s, pause=0.002)
        self.clients.append(c)
        return c

    def start(self):
        for c in self.clients:
            c.start()

    def stop(self):
        for c in self.clients:
            c.stop()
        for c in self.clients:
            c.join(10)

    def settle(self, timeout=20):
        """True once every following client got an answer after now."""
        base = {c: c.answers for c in self.clients if c.follow}
        return wait_until(lambda: all(c.answers > n for c, n in base.items()), timeout,
                          interval=0.05)


def gap_bound(batch, rate):
    """At most one batch; the batch may grow with the rate (about 10 writes
    a second), so a rate-based batch with a factor 3 of slack too."""
    return max(batch, int(rate * 0.3))


def report(wl, label, t_fault, t_to, batch):
    """Prints and checks what every phase must hold; returns the figures."""
    records, events = wl.rec.snapshot()
    bad, line = order_report(records, events, "sequence:" + wl.seq)
    log("%s: %s" % (label, line))
    check(not bad, "%s: strict real-time order and unique IDs over %d answers: %s"
          % (label, len(records), bad))
    win = [r for r in records if r.recv >= t_fault - 1.0 and r.send <= t_to]
    gap, a, b = max_gap(win)
    rate = ids_rate(records, t_fault - 1.0, t_fault)
    bound = gap_bound(batch, rate)
    check(gap <= bound, "%s: gap in the sequence %d (after %s, before %s) <= one batch %d "
          "(configured %d, rate %.0f IDs/s)" % (label, gap, a, b, bound, batch, rate))
    un = max_unavailable(records, t_fault, t_to)
    hw = handover_windows(records, events, t_fault, t_to)
    hw = {c: v for c, v in hw.items() if not c.startswith("pin-")}  # pins never follow
    worst = max(hw.items(), key=lambda kv: kv[1]) if hw else ("-", 0.0)
    n_ev, first, last = event_window(events, t_fault, t_to)
    other = [e for e in events if t_fault <= e.t <= t_to and e.kind not in FAIL_KINDS]
    log("%s: %s" % (label, summary(records, events)))
    log("%s: longest time without any answer %.1f ms (from +%.1f ms); worst client handover "
        "%.1f ms (%s); %d redirect/TRYAGAIN/no_primary events%s; %d other errors %s" % (
            label, un[0] * 1000, (un[1] - t_fault) * 1000, worst[1] * 1000, worst[0], n_ev,
            " spanning %.1f ms" % ((last - first) * 1000) if n_ev else "", len(other),
            sorted({"%s@%s" % (e.kind, e.node) for e in other})))
    return {"gap": gap, "unavailable": un[0], "handover": worst[1], "other": other,
            "fail_events": n_ev, "records": records, "events": events}


def resp_get(node, key, hops=3):
    """GET key over RESP on node, following -MOVED; the reply (int, str, None or RespError)."""
    port = node.resp_port
    for _ in range(hops):
        with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
            s.sendall(resp_command("GET", key))
            v = RespReader(s).read()
        if not (isinstance(v, RespError) and v.startswith("MOVED ")):
            return v
        port = int(v.split()[-1].rsplit(":", 1)[1])
    return v


def final_checks(env, wl, nodes, zk, name="it"):
    """After the run, clients stopped: the persisted max covers every ID seen
    (every ID ever issued is <= max), and RESP GET sequence:<name> (the last
    ID issued, cluster-wide) is at least the highest ID seen, at most max."""
    records, _ = wl.rec.snapshot()
    seen = max((r.hi for r in records), default=0)
    out = zk.cli("get", "/leafd/%s/sequences/%s" % (name, wl.seq))
    m = re.search(r'\{\s*"max"\s*:\s*(\d+)\s*\}', out)
    mx = int(m.group(1)) if m else None
    check(mx is not None and mx >= seen,
          "persisted max %s >= highest ID seen %d" % (mx if m else out[-200:], seen))
    live = [n for n in nodes if n.proc and n.proc.alive()]
    try:
        v = resp_get(live[0], "sequence:" + wl.seq)
    except OSError as e:
        v = e
    ok = not isinstance(v, (RespError, OSError)) and v is not None and \
        seen <= int(v) <= (mx if mx is not None else int(v))
    check(ok, "GET sequence:%s = %r: between the highest ID seen %d and the persisted max %s"
          % (wl.seq, v, seen, mx))
    return _checks["failed"] == 0


def boot(env, props_list, names=("n0", "n1", "n2"), pins=()):
    """Starts the nodes in order (the first becomes primary), then the
    workload; fails fast when anything does not come up. pins: (index,
    proto) pairs of pinned probe clients. Returns (nodes, primary, workload)."""
    nodes = [start_node(env, nm, p) for nm, p in zip(names, props_list)]
    primary = find_primary(nodes)
    if primary is None:
        fatal(env, "no node answers %s with 200: no sequence primary was elected" % PROBE)
    for n in nodes:
        log("%s: /ready role %s" % (n.name, ready_role(n)))
    wl = Workload(nodes)
    for i, proto in pins:
        wl.pin(nodes[i], proto)
    wl.start()
    if not wl.settle(20):
        wl.stop()
        r, e = wl.rec.snapshot()
        fatal(env, "the clients did not all get sequence IDs within 20 s: %s; last events %s"
              % (summary(r, e), e[-5:]))
    log("primary %s; clients running" % primary.name)
    return nodes, primary, wl
