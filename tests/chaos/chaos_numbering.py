#!/usr/bin/env python3
"""Chaos of business numbers at a period boundary (docs/id-shapes.md, "Business
numbers"): kill -9 of the sequence primary, again and again, around the
midnight of the numbering's time zone.

    tests/chaos/chaos_numbering.py [--kills N]

Three sequence nodes on one ZooKeeper (session 4 s, the default batch of
10,000), each under libfaketime (wall clock only, DONT_FAKE_MONOTONIC) with
one fixed offset, so that the cluster's clock reaches midnight in
Asia/Shanghai about 14 s after the start. Two numberings: ORD (width 4,
daily, yyyyMMdd) and SML (width 3, daily, yyMMdd). Clients (two threads per
numbering) ask random nodes, redirects followed, and record each answer with
its send and receive times. The primary is killed (-9) and restarted at once
N times (default 4): before midnight, around it, and after; each kill hands
over to a standby after the session timeout.

Checked, per numbering, over every answer (chaos_numbering_verify()):
- no number twice;
- order in real time: an answer received before another was sent holds the
  smaller (date, counter); so within a period the numbers are strictly
  increasing, and the date never goes back;
- never a period ahead of the clock: the date is at most the clock's date in
  Shanghai when the answer came back (and at least its date when it was
  sent: every node has the same clock here).
Every call is also recorded (tests/lib/ordercheck.py's History, on CLOCK_MONOTONIC, each
period a key of counters; failed calls kept) and the history passes the order checker.
Keyed sequences ride along (KEYED_SPACE, step 100): an HTTP and a RESP client process, their
calls through the order checker too, and the failover jump bound (a call's first ID at most a
step per kill between above its section's highest, plus a count).
The verification is a function of its own, so that chaos.py can call it on
histories it collects. About 45 s.
"""
import argparse
import json
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import keyedclients  # noqa: E402
from leafdtest import Env, check, http, log  # noqa: E402
from ordercheck import Histories, History, verify  # noqa: E402
from seqcluster import find_primary, probe, seq_props  # noqa: E402
from zkhelpers import FAKETIME_LIB, faketime_env  # noqa: E402

SH = 8 * 3600  # Asia/Shanghai: UTC+8, no daylight saving
DEFS = ({"name": "ORD", "prefix": "ORD", "date": "yyyyMMdd", "width": 4, "period": "day",
         "time_zone": "Asia/Shanghai"},
        {"name": "SML", "prefix": "S", "date": "yyMMdd", "width": 3, "period": "day",
         "time_zone": "Asia/Shanghai"})
SESSION_MS = 4000
TO_MIDNIGHT_S = 14  # from the nodes' start; at least 8 s once they serve (else new nodes)
# Keyed sequences beside the numberings (docs/keyed-sequences.md): one HTTP and one RESP client
# process (tests/lib/keyedclients.py) on KEYED_KEYS of a space with a small step, so that each
# kill -9 hands sections over with their maxima not given back.
KEYED_SPACE, KEYED_STEP = "nk", 100
KEYED_KEYS = ["k%d" % i for i in range(100)] + ["{t%d}:k%d" % (i % 5, i) for i in range(20)]
KEYED_COUNTS = (1, 1, 2, 5)


def sh_day(t):
    """The Shanghai date of the UNIX time t as yyyyMMdd."""
    g = time.gmtime(t + SH)
    return "%04d%02d%02d" % (g.tm_year, g.tm_mon, g.tm_mday)


def split(d, number):
    """(yyyyMMdd, counter) of a number of definition d."""
    rest = number[len(d["prefix"]):]
    n = len(rest) - d["width"]
    date = rest[:n]
    return ("20" + date if len(date) == 6 else date), int(rest[n:])


def chaos_numbering_verify(d, answers, offset_s):
    """Checks one numbering's answers [(number, sent, received)] (real UNIX times; the
    cluster's clock runs offset_s from them). Returns a list of failures (empty: fine)."""
    bad, seen = [], {}
    for num, _, _ in answers:
        seen[num] = seen.get(num, 0) + 1
    bad += ["%s issued %d times" % (n, c) for n, c in seen.items() if c > 1][:5]
    for num, sent, recv in answers:
        date, _ = split(d, num)
        lo, hi = sh_day(sent + offset_s), sh_day(recv + offset_s)
        if date > hi:
            bad.append("%s: a period ahead of the clock (%s when it came back)" % (num, hi))
        elif date < lo:
            bad.append("%s: a period behind the clock (%s when it was sent)" % (num, lo))
    by_recv = sorted(answers, key=lambda a: a[2])
    by_sent = sorted(answers, key=lambda a: a[1])
    # for each answer b, every answer a received before b was sent must be smaller
    best, j = None, 0
    for num, sent, _ in by_sent:
        while j < len(by_recv) and by_recv[j][2] < sent:
            k = split(d, by_recv[j][0])
            best = k if best is None or k > best[0:2] else best
            j += 1
        if best is not None and split(d, num) <= best:
            bad.append("%s after %s%s%04d in real time: not increasing"
                       % (num, d["prefix"], best[0], best[1]))
    return bad[:20]


class Clients:
    """Threads asking random nodes for numbers of each definition; answers kept per name."""

    def __init__(self, nodes, history):
        self.nodes, self.stop, self.hist = nodes, threading.Event(), history
        self.answers = {d["name"]: [] for d in DEFS}
        self.errors = 0
        self.threads = [threading.Thread(target=self.run, args=(d["name"], i), daemon=True)
                        for d in DEFS for i in range(2)]

    def one(self, name, count):
        port = random.choice(self.nodes).port
        for _ in range(3):
            st, body, hdr = http(port, "/api/number/get/%s?count=%d" % (name, count), timeout=5)
            if st != 307:
                return st, body
            loc = hdr.get("Location") or hdr.get("location")
            port = int(loc.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        return st, body

    def run(self, name, i):
        rnd = random.Random(i)
        d = next(x for x in DEFS if x["name"] == name)
        while not self.stop.is_set():
            sent, s0 = time.time(), time.monotonic_ns()
            try:
                st, body = self.one(name, rnd.choice((1, 1, 2, 5)))
            except OSError:
                st, body = 0, ""
            recv, s1 = time.time(), time.monotonic_ns()
            self.hist.record_numbers(name, d["prefix"], d["width"], s0, s1,
                                     body.split("\n") if st == 200 else None,
                                     error=None if st == 200 else str(st))
            if st == 200:
                self.answers[name] += [(n, sent, recv) for n in body.split("\n")]
            else:
                self.errors += 1
                time.sleep(0.02)

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(10)


def start_nodes(env, zk, offset_s, prefix):
    nodes = []
    for i in range(3):
        p = seq_props(zk.address(), SESSION_MS, batch=10000,
                      **{"leaf.name": prefix + "n", "leaf.snowflake.enable": "false"})
        n = env.leafd("%s%d" % (prefix, i), p, wait_ready=False,
                      extra_env=faketime_env(spec="%+d" % offset_s))
        nodes.append(n)
    return nodes


def serving(nodes, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if all(n.proc.alive() and probe(n)[0] in (200, 307) for n in nodes):
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def up(env, zk, attempt):
    """Three nodes whose clock reaches a Shanghai midnight TO_MIDNIGHT_S s (+ start-up) from
    now, with the numberings created: (nodes, offset_s, midnight), or Nones (all stopped) when
    that took until 8 s before it (a loaded machine: the caller tries again)."""
    now = time.time()
    midnight = (int(now + SH) // 86400 + 3 + attempt) * 86400 - SH  # days ahead: always whole
    offset_s = int(midnight - now - TO_MIDNIGHT_S - 6)
    nodes = start_nodes(env, zk, offset_s, "c%d" % attempt if attempt else "c")
    ok = serving(nodes) and find_primary(nodes) is not None
    for d in DEFS if ok else ():
        st, body, _ = http(find_primary(nodes).port, "/api/numbering", method="POST",
                           body=json.dumps(d))
        ok = ok and check(st == 201, "POST /api/numbering %s: %d %s" % (d["name"], st, body))
    if ok:
        st, body, _ = http(find_primary(nodes).port, "/api/keyed", method="POST",
                           body=json.dumps({"name": KEYED_SPACE, "step": KEYED_STEP}))
        ok = check(st == 201, "POST /api/keyed %s: %d %s" % (KEYED_SPACE, st, body))
    if ok and midnight - offset_s - time.time() > 8:
        return nodes, offset_s, midnight
    log("not up 8 s before the cluster's midnight: again with new nodes")
    for n in nodes:
        n.stop()
    return None, None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=4)
    args = ap.parse_args()
    env = Env()
    if not os.path.exists(FAKETIME_LIB):
        check(False, "libfaketime is installed at %s (package faketime)" % FAKETIME_LIB)
        env.finish()
    zk = env.zookeeper()
    for attempt in range(3):
        nodes, offset_s, midnight = up(env, zk, attempt)
        if nodes is not None:
            break
    else:
        check(False, "the cluster never came up 8 s before its midnight")
        env.finish()
    log("the cluster's clock reaches Shanghai midnight (%s) in %.1f s"
        % (sh_day(midnight), midnight - offset_s - time.time()))
    history = os.path.join(env.dir, "history")
    clients = Clients(nodes, History(history, "numbering-clients"))
    clients.start()
    keyed_stop = os.path.join(env.dir, "keyed-stop")
    keyed = [keyedclients.start(proto, "keyed-" + proto, KEYED_SPACE, history, keyed_stop,
                                time.time() + 120,
                                [n.port if proto == "http" else n.resp_port for n in nodes],
                                KEYED_KEYS, KEYED_COUNTS) for proto in ("http", "resp")]
    kills = []  # (start, end) on time.monotonic_ns(): from the kill to the restart
    t_mid = midnight - offset_s  # real time of the cluster's midnight
    plan = [t_mid - 6, t_mid - 0.5, t_mid + 0.5, t_mid + 7][:args.kills]
    for at in plan:
        time.sleep(max(0.0, at - time.time()))
        p = find_primary(nodes, timeout=15)
        if p is None:
            check(False, "a primary before the kill at %+.1f s from midnight" % (at - t_mid))
            continue
        log("kill -9 %s at %+.1f s from midnight" % (p.name, time.time() - t_mid))
        k0 = time.monotonic_ns()
        p.stop(signal.SIGKILL)
        p.start(wait_ready=False)
        kills.append((k0, time.monotonic_ns()))
    time.sleep(max(0.0, t_mid + 7 + SESSION_MS / 1000.0 + 4 - time.time()))
    clients.finish()
    check(keyedclients.stop(keyed, keyed_stop) == [0, 0], "the keyed clients ended cleanly")
    check(find_primary(nodes, timeout=15) is not None, "a primary at the end")
    for d in DEFS:
        a = clients.answers[d["name"]]
        dates = sorted(set(split(d, n)[0] for n, _, _ in a))
        log("%s: %d numbers, dates %s, %s .. %s" % (d["name"], len(a), dates,
                                                     min(a)[0] if a else "-",
                                                     max(a)[0] if a else "-"))
        bad = chaos_numbering_verify(d, a, offset_s)
        check(len(a) > 50 and len(dates) == 2,
              "%s: numbers on both sides of midnight (%d, dates %s)" % (d["name"], len(a), dates))
        check(not bad, "%s: no repeat, in order, never a period ahead of the clock: %s"
              % (d["name"], bad))
    clients.hist.close()
    ok, text = verify(history)
    log(text)
    check(ok, "the clients' history passes the order checker (the keyed calls included): %s"
          % text)
    calls = keyedclients.section_calls(Histories().load(history), KEYED_SPACE)
    worst, breaches = keyedclients.jump_bound(calls, KEYED_SPACE, KEYED_STEP, max(KEYED_COUNTS),
                                              kills)
    log("keyed: %d calls answered; largest first ID above its section's highest %d (%s, %d "
        "kills between)" % (len(calls), worst[0], worst[1], worst[2]))
    check(len(calls) > 100 and all(c[3] >= 1 for c in calls),
          "keyed calls answered through the kills, IDs >= 1 (%d)" % len(calls))
    check(not breaches, "keyed: no first ID more than a step per kill between above its "
          "section's highest: %s" % breaches[:5])
    log("%d requests failed (503 during the hand-overs)" % clients.errors)
    for n in nodes:
        n.stop()
    env.finish()


if __name__ == "__main__":
    main()
