"""Keyed sequences in the chaos run (docs/keyed-sequences.md; docs/reference/guarantees.md,
"Order, per mode").

Before the faults begin, the space `chaoskeyed` is created with a small step (STEP, 100) so that
the run's failovers, restarts and rebalancings cross section boundaries. Four client processes
(tests/lib/keyedclients.py: two over HTTP, two over RESP; separate processes, so the order
checker sees real-time order across processes) then ask for IDs of KEYS (plain keys and
hash-tagged ones, whose keys share a slot and a section) from random nodes until the run stops
them. Each call follows the cluster for up to 8 s (307, -MOVED, another node after an error);
every call is recorded in an order checker history (tests/lib/ordercheck.py), a call that ran
out of time as a failed one.

The checks, after the run:
- the order checker over every call: 0 violations, 0 repeats;
- the jump bound (docs/keyed-sequences.md, "Costs"): a key's first ID of a call is at most
  step x t + count above the highest ID of its section seen before, where t is 1, or twice the
  faults whose windows overlap the time since that highest ID (a fault can move a section away
  and back: two takeovers, "each takeover in a row with no ID issued in between adds at most one
  more step"); a jump of more than step + count with no fault in between is a failure;
- IDs >= 1, and the clients got answers (at least MIN_OK)."""
import http.client as httpclient
import json
import os
import time

import keyedclients
from ordercheck import Histories

SPACE = "chaoskeyed"
STEP = 100
KEYS = (["u%d" % i for i in range(300)] +
        ["{conv%d}:m%d" % (i % 12, i) for i in range(120)] +  # 12 tags: 12 slots, 12 sections
        ["room/%d" % i for i in range(20)])  # a / in a key: percent-encoded over HTTP
COUNTS = (1, 1, 1, 1, 3, 10)  # HTTP's ?count=, RESP's INCRBY
PROCESSES = ("http0", "http1", "resp0", "resp1")
MIN_OK = 200
SHOW = 5


class KeyedClients:
    """The client processes of one run and the checks on their histories."""

    def __init__(self, cluster, seconds, say):
        self.cluster, self.say = cluster, say
        self.dir = os.path.join(cluster.dir, "keyed-history")
        self.stop_file = os.path.join(cluster.dir, "keyed-stop")
        self.deadline = time.time() + seconds + 300  # past the run's watchdog: never orphaned
        self.procs, self.rcs = [], None
        self.created = False

    def create_space(self, timeout=30):
        """POST /api/keyed on any node until one answers 201 (409: it exists)."""
        body = json.dumps({"name": SPACE, "step": STEP})
        end = time.time() + timeout
        while time.time() < end:
            for n in self.cluster.nodes:
                try:
                    conn = httpclient.HTTPConnection("127.0.0.1", n.port, timeout=5)
                    conn.request("POST", "/api/keyed", body,
                                 {"Content-Type": "application/json"})
                    st = conn.getresponse().status
                    conn.close()
                except OSError:
                    continue
                if st in (201, 409):
                    self.created = True
                    return True
            time.sleep(0.2)
        return False

    def start(self):
        if not self.create_space():
            self.say("keyed: the space %s could not be created: no keyed clients" % SPACE)
            return
        for name in PROCESSES:
            proto = name[:4]
            ports = [n.port if proto == "http" else n.resp_port for n in self.cluster.nodes]
            self.procs.append(keyedclients.start(proto, name, SPACE, self.dir, self.stop_file,
                                                 self.deadline, ports, KEYS, COUNTS))

    def stop(self):
        if self.procs and self.rcs is None:
            self.rcs = keyedclients.stop(self.procs, self.stop_file)

    def check(self, verdict, windows, stats):
        """The order checker and the jump bound over every call; adds to stats."""
        if not self.created:
            verdict.bad("keyed clients", "the space %s was never created" % SPACE)
            return
        if any(rc != 0 for rc in self.rcs or ()):
            verdict.bad("keyed clients", "client processes exited %s" % self.rcs)
        h = Histories().load(self.dir)
        bad, text = h.report(SHOW)
        for x in bad[:SHOW]:
            verdict.bad("keyed strictly increasing", str(x))
        if len(bad) > SHOW:
            verdict.bad("keyed strictly increasing", "... and %d more" % (len(bad) - SHOW))
        verdict.notes.append("keyed: " + text.split("\n", 1)[0])
        calls = keyedclients.section_calls(h, SPACE)
        stats["keyed_calls"] = len(calls)
        stats["keyed_failed"] = sum(len(kl.failed) for kl in h.keys.values())
        stats["keyed_ids"] = sum(c[4] - c[3] + 1 for c in calls)
        if len(calls) < MIN_OK:
            verdict.bad("keyed clients", "only %d keyed calls answered (at least %d expected)"
                        % (len(calls), MIN_OK))
        if any(c[3] < 1 for c in calls):
            verdict.bad("keyed IDs >= 1", "a keyed ID below 1")
        stats["keyed_jump"] = self._jumps(verdict, calls, windows)

    def _jumps(self, verdict, calls, windows):
        """The jump bound, two takeovers per fault; returns the worst (jump, key, faults)."""
        off = time.monotonic_ns() - int(time.time() * 1e9)  # windows are on time.time()
        spans = {}
        for w in windows:  # one span per fault: its windows' union
            a, b = spans.get(w.fid, (w.start, w.end))
            spans[w.fid] = (min(a, w.start), max(b, w.end))
        faults = [(int(a * 1e9) + off, int(b * 1e9) + off) for a, b in spans.values()]
        worst, breaches = keyedclients.jump_bound(calls, SPACE, STEP, max(COUNTS), faults, 2)
        for text in breaches[:SHOW]:
            verdict.bad("keyed jump bound", text)
        return worst
