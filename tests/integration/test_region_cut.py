"""A cut between two regions under load, measured (docs/regions.md, "A cut between regions"):
region eu (ID 0) on 127.0.1.1 and us (ID 1) on 127.0.2.1, each with its own ZooKeeper, its own
MariaDB and TWO nodes, a registry ZooKeeper beside them. Every byte from one region to the other
crosses a link 40 ms long each way (tests/lib/tcpproxy.py, one proxy per node of the far region);
the nodes reach the registry through a proxy of its own.

For 60 s, clients in both regions: snowflake (HTTP and RESP), segment and UUIDv7 IDs from both
nodes of their region, and sequence clients on the sequence orders, homed in eu (us's clients
follow the redirects across the link). From t=15 s to t=45 s the link is cut (blackholed both
ways); from t=13 s to t=23 s the registry is unreachable too (its proxy blackholed): the cut
begins while each node's registry session hangs on a silent connection. Then:

- 0 duplicates across the regions for each of snowflake, segment and UUIDv7 (by value); segment
  IDs are their region's residue; each node's IDs of a mode ascend;
- not one snowflake, segment or UUIDv7 request fails, in either region, in the whole run;
- every sequence call goes through the order checker (tests/lib/ordercheck.py): 0 violations,
  0 repeats, across both regions;
- eu's sequence calls never fail; us's calls during the cut fail only with its own node's 503
  home_region_unreachable, or, in the first seconds while the node has not yet seen the cut (its
  probe runs every second), with a 307 whose follow-up dies on the cut link; each us node answers
  503 within 3 s of the cut and redirects again within 3 s of the heal, registry or not (a
  watcher asks each every 50 ms: printed); after the heal us's calls succeed again within
  seconds (printed: the first success after the heal); outside the cut they fail at most with
  the 503 of a probe that a loaded machine made slower than 0.4 s.
"""
import json
import re
import threading
import time

from leafdtest import Env, RespStream, check, free_port, http, log, seg_props, wait_until
from ordercheck import Histories
from regionservers import start_region_servers
from tcpproxy import Proxy

REGIONS = {"eu": (0, "127.0.1.1"), "us": (1, "127.0.2.1")}
LINK_DELAY = 0.040  # s each way between the regions
RUN, CUT, HEAL = 60.0, 15.0, 45.0  # s from the start of the load
# The registry goes 2 s before the cut, so the cut begins while the nodes' registry session hangs
# on a silent connection (2/3 of its timeout), and 8 s of its 10 s lie inside the cut.
REGISTRY_OFF, REGISTRY_ON = 13.0, 23.0
SEEN_CUT_S = 3.0  # a node answers 503 within a second or two of the cut (docs/regions.md)
RESUME_S = 10.0  # the first success after the heal, at the latest
SETTLED_S = 5.0  # after this much past the heal, no call of us fails
FOLLOW_TIMEOUT = 3.0  # s: a follow-up across a cut link gives up after this


def region_props(name, zk, db, registry):
    rid, ip = REGIONS[name]
    return seg_props(db, **{
        "leaf.name": "it", "leaf.snowflake.enable": "true",
        "leaf.snowflake.zk.address": zk.address(),
        "leafd.snowflake.advertise.ip": ip, "leafd.snowflake.layout": "twitter",
        "leafd.sequence.enable": "true",
        "leafd.region": name, "leafd.region.id": str(rid), "leafd.region.count": "2",
        "leafd.region.registry.zk.address": registry,
        "leafd.listen": "%s:%d" % (ip, free_port()),
        "leafd.resp.listen": "127.0.0.1:%d" % free_port()})


class Link:
    """The link from one region to the other's nodes: one delayed proxy per far node. route()
    sends an address of the far region through the link; every other address is left alone."""

    def __init__(self, far_nodes):
        self.proxies = {}
        for p in far_nodes:
            host, port = p["leafd.listen"].rsplit(":", 1)
            self.proxies[p["leafd.listen"]] = Proxy(target=(host, int(port)), delay=LINK_DELAY)

    def address(self, listen):
        return "127.0.0.1:%d" % self.proxies[listen].port

    def route(self, hostport):
        return self.address(hostport) if hostport in self.proxies else hostport

    def cut(self):
        for p in self.proxies.values():
            p.blackhole()

    def heal(self):
        for p in self.proxies.values():
            p.heal()

    def close(self):
        for p in self.proxies.values():
            p.close()


class SeqClient(threading.Thread):
    """Asks one node for the sequence until stopped, following redirects (across the link
    through it); every call goes into hist and into self.calls as (start, end, first answer,
    what came of it: "ok" or why it failed)."""

    def __init__(self, hist, who, node, link):
        super().__init__(daemon=True)
        self.hist, self.who, self.node, self.link = hist, who, node, link
        self.calls, self.stop_flag = [], False

    def one(self):
        start = time.monotonic_ns()
        host, port, path = self.node.host, self.node.port, "/api/sequence/get/orders?count=5"
        first, outcome, ids = None, None, None
        for hop in range(4):
            try:
                st, body, hdr = http(port, path, host=host,
                                     timeout=5 if hop == 0 else FOLLOW_TIMEOUT)
            except OSError as e:
                outcome = "%s after %s" % (type(e).__name__, first)
                break
            code = json.loads(body).get("code", "") if body.startswith("{") else ""
            first = first or "%d %s" % (st, code)
            if st == 200:
                ids, outcome = [int(x) for x in body.split("\n")], "ok"
                break
            if st != 307:
                outcome = "%d %s" % (st, code)
                break
            hostport, rest = hdr["Location"][len("http://"):].split("/", 1)
            host, port = self.link.route(hostport).rsplit(":", 1)
            port, path = int(port), "/" + rest
        end = time.monotonic_ns()
        if ids:
            self.hist.add(self.who, "orders", start, end, ids=ids)
        else:
            self.hist.add(self.who, "orders", start, end, error=outcome or "redirect loop")
        self.calls.append((start, end, first, outcome or "redirect loop"))
        return outcome == "ok"

    def run(self):
        while not self.stop_flag:
            time.sleep(0.01 if self.one() else 0.05)  # a steady load: other tests run beside


class Watcher(threading.Thread):
    """Asks one node of us for the sequence every 50 ms without following, and keeps each
    change of its answer (307 to eu, 503 home_region_unreachable) with its time."""

    def __init__(self, node):
        super().__init__(daemon=True)
        self.node, self.changes, self.stop_flag = node, [], False

    def run(self):
        last = None
        while not self.stop_flag:
            at_ns = time.monotonic_ns()
            try:
                st, body, _ = self.node.get("/api/sequence/get/orders", timeout=5)
                answer = "%d %s" % (st, json.loads(body).get("code", "") if body.startswith("{")
                                    else "")
            except OSError as e:
                answer = type(e).__name__
            if answer != last:
                self.changes.append((at_ns, answer))
                last = answer
            time.sleep(0.05)

    def first(self, answer, after_ns):
        """Seconds from after_ns to the first change to answer after it, or None."""
        return next(((t - after_ns) / 1e9 for t, a in self.changes if t >= after_ns and
                     a == answer), None)


class IdClient(threading.Thread):
    """Pulls one mode from the nodes of one region in turn until stopped, over HTTP or (path
    None) RESP LEAF.IDS; keeps each node's IDs in order and every failure."""

    def __init__(self, region, nodes, mode, path=None, resp=None):
        super().__init__(daemon=True)
        self.region, self.nodes, self.mode, self.path, self.resp = region, nodes, mode, path, resp
        self.ids = {n.name: [] for n in nodes}
        self.errors, self.stop_flag = [], False

    def fetch(self, node, streams):
        if self.resp is None:
            st, body, _ = node.get(self.path, timeout=5)
            if st != 200:
                return "%d %s" % (st, body[:120])
            if self.mode == "uuid":  # compared by value
                return [int(x.replace("-", ""), 16) for x in body.split("\n")]
            return [int(x) for x in body.split("\n")]
        if node.name not in streams:
            streams[node.name] = RespStream(node.resp_port)
        got = streams[node.name].call("LEAF.IDS", self.resp, "20")
        return got if isinstance(got, list) else "RESP %r" % (got,)

    def run(self):
        streams, turn = {}, 0
        while not self.stop_flag:
            node = self.nodes[turn % len(self.nodes)]
            turn += 1
            try:
                got = self.fetch(node, streams)
            except (OSError, EOFError) as e:
                streams.pop(node.name, None)
                got = "%s on %s" % (type(e).__name__, node.name)
            if isinstance(got, str):
                self.errors.append(got)
                time.sleep(0.05)
                continue
            self.ids[node.name] += [int(x) for x in got]
            time.sleep(0.02)  # a steady load, not a benchmark: the machine runs other tests
        for s in streams.values():
            s.close()


def phase(start, end, cut_ns, heal_ns):
    """Where a call of us lies against the cut and the heal."""
    if end < cut_ns:
        return "before the cut"
    if start < cut_ns:
        return "over the cut"
    if end <= heal_ns:
        return "inside the cut"
    if start < heal_ns:
        return "over the heal"
    return "settling" if start < heal_ns + SETTLED_S * 1e9 else "settled"


def at(t0, seconds, what, fn):
    """Waits until t0 + seconds, does fn and logs it; returns when it was done (monotonic ns)."""
    time.sleep(max(0.0, t0 + seconds - time.monotonic()))
    fn()
    log("t=%.1f s: %s" % (time.monotonic() - t0, what))
    return time.monotonic_ns()


env = Env()
servers = start_region_servers(env)
registry_proxy = Proxy(target=("127.0.0.1", servers["registry"].port))
registry = "127.0.0.1:%d" % registry_proxy.port
props = {(r, i): region_props(r, servers["zk-" + r], servers["db-" + r], registry)
         for r in REGIONS for i in (1, 2)}
links = {"us": Link([props["eu", 1], props["eu", 2]]),
         "eu": Link([props["us", 1], props["us", 2]])}
for (r, i), p in props.items():
    other = "us" if r == "eu" else "eu"
    p["leafd.region.peers"] = "%s=%s" % (other, links[r].address(props[other, 1]["leafd.listen"]))
nodes = {(r, i): env.leafd("%s%d" % (r, i), props[r, i]) for (r, i) in sorted(props)}
eu, us = [nodes["eu", 1], nodes["eu", 2]], [nodes["us", 1], nodes["us", 2]]

log("the link is 40 ms long each way")
start = time.monotonic()
st, _, _ = http(links["us"].proxies[props["eu", 1]["leafd.listen"]].port, "/ready")
rtt = time.monotonic() - start
check(st == 200 and rtt >= 2 * LINK_DELAY,
      "GET /ready on eu1 from us across the link: %d in %.0f ms (>= %.0f ms)"
      % (st, rtt * 1000, 2000 * LINK_DELAY))

log("the sequence orders, homed in eu; us knows its home")
st, body, hdr = eu[0].get("/api/sequence", method="POST", body='{"name":"orders","start":100}')
if st == 307:  # eu1 is not eu's primary: the create goes there
    hostport, rest = hdr["Location"][len("http://"):].split("/", 1)
    host, port = hostport.rsplit(":", 1)
    st, body, _ = http(int(port), "/" + rest, method="POST", host=host,
                       body='{"name":"orders","start":100}')
check(st == 201, "POST /api/sequence orders in eu: 201 (%d %s)" % (st, body))
for n in us:
    check(wait_until(lambda n=n: n.get("/api/sequence/get/orders")[0] == 307, 15),
          "%s redirects orders to eu once it has read the home" % n.name)
probe = Histories()
for n in eu + us:
    check(SeqClient(probe, "probe", n, links[n.props["leafd.region"]]).one(),
          "a sequence call on %s gets IDs (following redirects)" % n.name)

log("clients in both regions for %.0f s; the link cut at %.0f s, healed at %.0f s; the registry "
    "unreachable from %.0f s to %.0f s" % (RUN, CUT, HEAL, REGISTRY_OFF, REGISTRY_ON))
hist = Histories()
seq = [SeqClient(hist, "%s-%s" % (n.name, r), n, links[r]) for r, ns in (("eu", eu), ("us", us))
       for n in ns]
ids = []
for r, ns in (("eu", eu), ("us", us)):
    ids += [IdClient(r, ns, "snowflake", "/api/snowflake/get/k?count=20"),
            IdClient(r, ns, "segment", "/api/segment/get/orders?count=20"),
            IdClient(r, ns, "uuid", "/api/uuid/get/k?count=20"),
            IdClient(r, ns, "snowflake", resp="snowflake:k")]
watch = [Watcher(n) for n in us]
t0 = time.monotonic()
for c in seq + ids + watch:
    c.start()
done = {}
for when, what, fn in sorted([
        (CUT, "the link between the regions cut", lambda: [l.cut() for l in links.values()]),
        (HEAL, "the link healed", lambda: [l.heal() for l in links.values()]),
        (REGISTRY_OFF, "the registry unreachable", registry_proxy.blackhole),
        (REGISTRY_ON, "the registry reachable", registry_proxy.heal),
        (RUN, "the clients stop", lambda: None)], key=lambda e: e[0]):
    done[when] = at(t0, when, what, fn)
cut_ns, heal_ns = done[CUT], done[HEAL]
for c in seq + ids + watch:
    c.stop_flag = True
for c in seq + ids + watch:
    c.join(15)
log("the run took %.1f s" % (time.monotonic() - t0))

log("snowflake, segment and UUIDv7: never failed, no duplicate across the regions")
by_mode = {}
for c in ids:
    how = "RESP" if c.resp else "HTTP"
    check(not c.errors, "%s %s in %s (%s): no request failed (%d failed: %r)"
          % (c.mode, how, c.region, "+".join(c.ids), len(c.errors), c.errors[:3]))
    for name, got in c.ids.items():
        check(len(got) > 0 and all(a < b for a, b in zip(got, got[1:])),
              "%s %s from %s: %d IDs, ascending" % (c.mode, how, name, len(got)))
        if c.mode == "segment":
            rid = REGIONS[c.region][0]
            check(all(i % 2 == rid for i in got), "segment IDs from %s are %s's residue" % (name, c.region))
    n = sum(len(v) for v in c.ids.values())
    log("  %-9s %-4s %s: %7d IDs" % (c.mode, how, c.region, n))
    by_mode.setdefault(c.mode, []).extend(i for v in c.ids.values() for i in v)
for mode, got in sorted(by_mode.items()):
    check(len(got) == len(set(got)), "%s: 0 duplicates across the regions among %d IDs (%d)"
          % (mode, len(got), len(got) - len(set(got))))

log("sequences: the order checker, then each region's calls")
bad, text = hist.report()
log(text)
ok_calls, failed_calls, n_ids = hist.counts()
check(not bad and n_ids > 0, "order check: %d IDs in %d calls, 0 violations, 0 repeats across "
      "both regions" % (n_ids, ok_calls))
for c in seq:
    oks = sum(1 for call in c.calls if call[3] == "ok")
    log("  %s: %d calls, %d with IDs" % (c.who, len(c.calls), oks))
    check(oks > 0, "%s got IDs" % c.who)
for c in seq[:2]:
    failed = [call for call in c.calls if call[3] != "ok"]
    check(not failed, "%s (eu's own): no call failed (%d: %r)" % (c.who, len(failed), failed[:3]))


failures = {}  # phase -> {what failed: calls}
first_ok = None
for c in seq[2:]:
    for start, end, first, outcome in c.calls:
        if outcome != "ok":
            what = outcome if outcome == first else "%s -> %s" % (first, outcome)
            kinds = failures.setdefault(phase(start, end, cut_ns, heal_ns), {})
            kinds[what] = kinds.get(what, 0) + 1
        elif start >= heal_ns and (first_ok is None or end < first_ok):
            first_ok = end
log("  us's failed calls: %r" % failures)
inside = failures.get("inside the cut", {})
check(inside.get("503 home_region_unreachable", 0) > 0 and
      all(k == "503 home_region_unreachable" or re.fullmatch(r"307 not_primary -> \w+ after 307 "
                                                             r"not_primary", k) for k in inside),
      "us's calls during the cut fail only with 503 home_region_unreachable (or a 307 given "
      "before the node saw the cut, whose follow-up died on the cut link): %r" % inside)
for w in watch:
    seen, back = w.first("503 home_region_unreachable", cut_ns), w.first("307 not_primary", heal_ns)
    log("  %s: 503 home_region_unreachable %s after the cut, 307 again %s after the heal" % (
        w.node.name, "%.2f s" % seen if seen is not None else "never",
        "%.2f s" % back if back is not None else "never"))
    check(seen is not None and seen <= SEEN_CUT_S and back is not None and back <= SEEN_CUT_S,
          "%s sees the cut and the heal within %.0f s (%r, %r; its answers %r)"
          % (w.node.name, SEEN_CUT_S, seen, back, w.changes))
resumed = (first_ok - heal_ns) / 1e9 if first_ok else None
log("  the first success of us after the heal: %s" % ("%.2f s" % resumed if resumed else "none"))
check(resumed is not None and resumed <= RESUME_S,
      "us's calls succeed again within %.0f s of the heal (%r)" % (RESUME_S, resumed))
# Outside the cut only a probe of eu that took over 0.4 s (a loaded machine: the proxies share this
# process with the clients) may turn a call away, and only with the 503 the node's log explains.
blips = {k: v for ph in ("before the cut", "settled") for k, v in failures.get(ph, {}).items()}
check(set(blips) <= {"503 home_region_unreachable"},
      "no call of us fails before the cut, nor from %.0f s after the heal on, but for a slow "
      "probe's 503 (%r)" % (SETTLED_S, failures))

for n in eu + us:
    check(n.stop() == 0, "%s stops cleanly" % n.name)
for l in links.values():
    l.close()
registry_proxy.close()
env.finish()
