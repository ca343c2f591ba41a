"""Business numbers (docs/id-shapes.md, "Business numbers") on sequence nodes
and one ZooKeeper:

- POST /api/numbering creates ORD (yyyyMMdd, width 6, daily, Asia/Shanghai)
  on one node; GET /api/numbering lists it on the other; a second create is
  409; a period finer than the date is 400;
- the two nodes asked in turn (redirects followed: the primary issues) give
  ORD<date><6 digits> strictly increasing across the cluster, the date being
  today's in Shanghai; RESP LEAF.NUMBER too;
- kill -9 of the primary under load: the standby takes over, never a repeat;
- overflow: width 1 (created and listed with tools/programs/leafctl) gives 9 numbers,
  then 503 numbering_exhausted;
- a test clock (libfaketime, wall clock only, DONT_FAKE_MONOTONIC) on three
  nodes of one cluster, in line in this order: f0 the primary, its clock
  crossing midnight in Asia/Shanghai, f1 2 s behind it (a clock a little
  off) and f2 30 s behind. Numbers asked on f1 (redirected to f0) restart
  the counter at 1 exactly once, at f0's midnight. Then f0 is demoted and
  f1 takes over, then f1 is demoted and f2 takes over; each issues the new
  date above the last number, never the old, though its own clock may still
  read the old day. That must be so for f2, or the test FAILS (it did not
  show what it is for): f2 is primary and issues while its own clock is
  before midnight, after f0 issued the new date. Why 30 s: a demote hands
  over within a ZooKeeper round trip (docs/cluster.md, "Handover"), but on a
  loaded machine the hand-over and this script's own requests can take more
  than f1's 2 s (so f1's figure is printed, not asserted); the slowest
  hand-over documented, a failover after kill -9, takes up to the session
  timeout + 2 s (8 s here), and 30 s holds two of those with room. Printed:
  how far before its midnight each node's clock was when it issued;
- a daily numbering in Europe/Berlin across the night after a daylight-saving
  change restarts at that night's midnight (23:00 UTC in winter time), not an
  hour early: one node whose clock reaches 22:00Z and one whose clock reaches
  23:00Z at the same instant.
The clocks are fixed offsets from each node's start, set so that the instant
comes 8 s after it (started again with twice the margin when the nodes were
not up 3 s before it: the margin only saves time). All on one ZooKeeper, a
cluster (leaf.name) per part. The calls of the first cluster (the two nodes, the kill, the
overflow) are recorded (tests/lib/ordercheck.py's History, each period a key of counters) and
pass the order checker. About 30 s.
"""
import json
import os
import signal
import subprocess
import threading
import time

from leafdtest import Env, RespError, RespStream, check, http, log, wait_until
from ordercheck import History, verify
from seqcluster import find_primary, probe, seq_props, start_node
from zkhelpers import FAKETIME_LIB, faketime_env

LEAFCTL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "programs", "leafctl")
ORD = {"name": "orders", "prefix": "ORD", "date": "yyyyMMdd", "width": 6, "period": "day",
       "time_zone": "Asia/Shanghai"}


def post(node, body):
    return http(node.port, "/api/numbering", method="POST", body=json.dumps(body))


def numbers(node, name, count=1, hops=3, retry_s=3.0):
    """The numbers, following the standby's 307 to the primary and retrying 503 no_primary
    (an election, a slow ZooKeeper) for up to retry_s, as sequence clients do; (status, list or
    body). Recorded in the history while there is one (HIST: the first cluster's)."""
    start = time.monotonic_ns()
    st, out = _numbers(node, name, count, hops, retry_s)
    d = DEFS.get(name)
    if HIST is not None and d is not None:
        HIST.record_numbers(name, d["prefix"], d["width"], start, time.monotonic_ns(),
                            out if st == 200 else None, error=None if st == 200 else st)
    return st, out


def _numbers(node, name, count, hops, retry_s):
    end = time.monotonic() + retry_s
    while True:
        port = node.port
        for _ in range(hops):
            st, body, hdr = http(port, "/api/number/get/%s?count=%d" % (name, count))
            if st != 307:
                break
            loc = hdr.get("Location") or hdr.get("location")
            port = int(loc.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        if st == 503 and "no_primary" in body and time.monotonic() < end:
            time.sleep(0.05)
            continue
        return st, body.split("\n") if st == 200 else body


def resp_numbers(r, name, *count):
    """LEAF.NUMBER name [count] on the RESP stream r, recorded in the history."""
    start = time.monotonic_ns()
    v = r.call("LEAF.NUMBER", name, *count)
    nums = None if isinstance(v, RespError) else [v] if isinstance(v, str) else \
        v if isinstance(v, list) else None
    HIST.record_numbers(name, ORD["prefix"], ORD["width"], start, time.monotonic_ns(), nums,
                        error=None if nums else repr(v))
    return v


def shanghai_today():
    t = time.gmtime(time.time() + 8 * 3600)
    return "%04d%02d%02d" % (t.tm_year, t.tm_mon, t.tm_mday)


env = Env()
zk = env.zookeeper()
SESSION_MS = 6000
HISTORY = os.path.join(env.dir, "history")
HIST = History(HISTORY, "test")
DEFS = {"orders": ORD, "tiny": {"prefix": "T", "width": 1}}
nodes = [start_node(env, "n%d" % i, seq_props(zk.address(), SESSION_MS)) for i in (0, 1)]
primary = find_primary(nodes)
check(primary is not None, "a sequence primary")

log("create and list")
st, body, _ = post(nodes[1], ORD)
check(st == 201 and json.loads(body)["name"] == "orders", "POST /api/numbering: 201 (%d %s)"
      % (st, body))
st, body, _ = post(nodes[0], ORD)
check(st == 409 and "numbering_exists" in body, "the same name again: 409 (%d %s)" % (st, body))
st, body, _ = post(nodes[0], dict(ORD, name="bad", date="yyyyMM"))
check(st == 400 and "would come again" in body, "a day period with a month date: 400 (%s)" % body)
st, body, _ = post(nodes[0], dict(ORD, name="bad", time_zone="Mars/Olympus"))
check(st == 400 and "time_zone" in body, "an unknown time zone: 400 (%s)" % body)
st, body, _ = http(nodes[0].port, "/api/numbering")
check(st == 200 and [d["name"] for d in json.loads(body)] == ["orders"] and
      json.loads(body)[0] == ORD, "GET /api/numbering lists it as created: %s" % body)
st, body = numbers(nodes[0], "nosuch")
check(st == 404 and "unknown_numbering" in body, "an unknown numbering: 404 (%s %s)" % (st, body))

log("two nodes in turn")
got = []
for i in range(300):
    st, nums = numbers(nodes[i % 2], "orders", 1 + i % 3)
    check(st == 200, "numbers from %s: %s %s" % (nodes[i % 2].name, st, nums))
    got += nums if st == 200 else []
today = shanghai_today()
ok_shape = all(len(n) == 3 + 8 + 6 and n.startswith("ORD" + today) for n in got)
check(ok_shape, "every one is ORD<today in Shanghai><6 digits> (%s .. %s)" % (got[0], got[-1]))
check(got == sorted(set(got)) and got[0] == "ORD%s000001" % today,
      "%d numbers strictly increasing across the two nodes, from 000001" % len(got))
r = RespStream(primary.resp_port)
one, many = resp_numbers(r, "orders"), resp_numbers(r, "orders", 3)
check(isinstance(one, str) and one > got[-1] and isinstance(many, list) and
      many == sorted(many) and many[0] > one, "RESP LEAF.NUMBER: %r then %r" % (one, many))
r.close()
last = many[-1] if isinstance(many, list) else got[-1]

log("kill -9 of the primary under load")
seen, stop = [], threading.Event()


def load(node):
    while not stop.is_set():
        try:
            st, nums = numbers(node, "orders")
        except OSError:
            continue
        if st == 200:
            seen.extend(nums)


standby = nodes[1] if primary is nodes[0] else nodes[0]
threads = [threading.Thread(target=load, args=(standby,), daemon=True) for _ in range(2)]
for t in threads:
    t.start()
time.sleep(1.0)
primary.stop(signal.SIGKILL)
new = find_primary([standby], timeout=20)
check(new is standby, "the standby becomes primary")
time.sleep(1.5)
stop.set()
for t in threads:
    t.join(5)
check(len(seen) > 20 and len(seen) == len(set(seen)) and min(seen) > last,
      "%d numbers through the kill, none repeated, all above the last before it" % len(seen))
primary.start(wait_ready=False)

log("overflow")
r = subprocess.run([LEAFCTL, "numbering", "add", "tiny", "--prefix", "T", "--date", "",
                    "--width", "1", "--period", "never", "--time-zone", "UTC", "-c", standby.conf],
                   capture_output=True, text=True, timeout=30)
check(r.returncode == 0 and '"name":"tiny"' in r.stdout,
      "leafctl numbering add: a numbering of width 1 (%s%s)" % (r.stdout, r.stderr))
r = subprocess.run([LEAFCTL, "numbering", "list", "-c", standby.conf], capture_output=True,
                   text=True, timeout=30)
check(r.returncode == 0 and [d["name"] for d in json.loads(r.stdout)] == ["orders", "tiny"],
      "leafctl numbering list: %s" % r.stdout.strip())
st, nums = numbers(standby, "tiny", 9)
check(st == 200 and nums == ["T%d" % i for i in range(1, 10)], "T1 .. T9 (%s)" % (nums,))
st, body = numbers(standby, "tiny")
check(st == 503 and "numbering_exhausted" in body, "the tenth: 503 numbering_exhausted (%s)"
      % body)
for n in nodes:
    n.stop()
HIST.close()
HIST = None  # the clusters below have numberings of their own names
ok, text = verify(HISTORY)
log(text)
check(ok, "the first cluster's calls pass the order checker: %s" % text)

log("a test clock crossing midnight")
if not os.path.exists(FAKETIME_LIB):
    check(False, "libfaketime is installed at %s (package faketime)" % FAKETIME_LIB)
    env.finish()


def node_clock(node):
    """The node's wall clock (s), faked or not: /api/snowflake/time answers it."""
    return json.loads(http(node.port, "/api/snowflake/time")[1])["timestamp"] / 1000.0


def clock_node(name, cluster, offset_s, expect):
    """A sequence node of cluster (leaf.name; each its own, on the one ZooKeeper) whose wall
    clock runs offset_s seconds from the real one, from its start on (a clock stepped by hours
    under a running ZooKeeper client would break the client's own timeouts: a fixed offset from
    the start is what a node with a wrong clock has). Returned once its probe answers expect:
    200 as the primary, 307 as a standby in line (it lists the line only after its election
    node is created); None when it does not, in 30 s."""
    p = seq_props(zk.address(), SESSION_MS, **{"leaf.name": cluster,
                                               "leaf.snowflake.enable": "false"})
    # (snowflake off: its start-up check refuses a clock hours away from ZooKeeper's)
    n = env.leafd(name, p, wait_ready=False, extra_env=faketime_env(spec="%+d" % offset_s))
    n.resp_port = int(p["leafd.resp.listen"].rsplit(":", 1)[1])
    if not wait_until(lambda: n.proc.alive() and probe(n)[0] == expect, 30):
        log("%s did not answer %d (a loaded machine: ZooKeeper not reached in time?): %s"
            % (name, expect, n.log_text()[-300:]))
        n.stop()
        return None
    return n


def clock_set(what, target, start, margin=8):
    """The nodes start(attempt, offset) starts (the first the sequence primary, whose clock
    runs offset s from the real one), once the first one's clock is still more than 3 s before
    target with all of them up: started margin s before target, again with twice the margin
    (and new names) when that took longer. The margin only saves time; a loaded machine costs
    a try, never a check."""
    for attempt in range(4):
        ns = start(attempt, int(target - margin - time.time()))
        if ns is not None and node_clock(ns[0]) < target - 3:
            return ns
        log("%s: not up 3 s before the target with a %d s margin; again with %d s"
            % (what, margin, 2 * margin))
        for n in ns or []:
            n.stop()
        margin *= 2
    check(False, "%s never came up in time" % what)
    env.finish()


def start_line(cluster, names, offset, lags, numbering):
    """Nodes names[i] of a new cluster whose clocks run lags[i] s behind offset, in line in
    this order, the first the primary with numbering created; None (all stopped) when one
    fails."""
    started = []
    for i, lag in enumerate(lags):
        n = clock_node(names[i], cluster, offset - lag, 200 if i == 0 else 307)
        if n is None:
            break
        started.append(n)
        if i == 0 and post(n, numbering)[0] != 201:
            log("creating %s on %s failed" % (numbering["name"], n.name))
            break
    else:
        return started
    for n in started:
        n.stop()
    return None


def wait_clock(node, at):
    """Sleeps until node's clock reads `at` (s)."""
    left = at - node_clock(node)
    if left > 0:
        time.sleep(left)


def before_or_after(d):
    return "%.2f s %s" % (abs(d), "before" if d < 0 else "after")


SH_MIDNIGHT = 1795881600  # 2026-11-28T16:00:00Z: midnight in Shanghai (UTC+8)
FAR_S = 30  # see the module's docstring
t_clock = time.monotonic()
f0, f1, f2 = clock_set("f0, f1 (2 s behind), f2 (%d s behind)" % FAR_S, SH_MIDNIGHT,
                       lambda a, o: start_line("sh%d" % a, ["f0", "f1", "f2"] if a == 0 else
                                               ["f%d-%d" % (i, a) for i in range(3)],
                                               o, (0, 2, FAR_S), ORD))
log("%s primary, %s and %s in line, %.1f s before midnight by the primary's clock"
    % (f0.name, f1.name, f2.name, SH_MIDNIGHT - node_clock(f0)))
wait_clock(f0, SH_MIDNIGHT - 2.5)
seq, when = [], []
while node_clock(f0) < SH_MIDNIGHT + 0.5:
    st, nums = numbers(f1, "orders")  # asked on the node 2 s behind: redirected
    if st == 200:
        seq.append(nums[0])
        when.append(node_clock(f0) - SH_MIDNIGHT)
    time.sleep(0.01)
dates = [n[3:11] for n in seq]
restarts = [i for i in range(1, len(seq)) if seq[i][11:] == "000001"]
check(dates and dates[0] == "20261128" and dates[-1] == "20261129" and dates == sorted(dates),
      "the date moves from 20261128 to 20261129 once: %s .. %s (%d numbers)"
      % (seq[0] if seq else None, seq[-1] if seq else None, len(seq)))
if len(restarts) == 1:
    k = restarts[0]
    log("%d numbers; the last of 20261128 (%s) answered by %.3f s, the first of 20261129 (%s) "
        "by %.3f s of the primary's clock from midnight" % (len(seq), seq[k - 1], when[k - 1],
                                                           seq[k], when[k]))
    check(when[k - 1] < 0.2 and when[k] > -0.2, "the restart at the primary's midnight")
check(len(restarts) == 1 and seq[restarts[0]] == "ORD20261129000001",
      "the counter restarts at 1 exactly once: %s" % [seq[i] for i in restarts])
last, behind = seq[-1] if seq else "", {}
for old, new, lag in ((f0, f1, 2), (f1, f2, FAR_S)):
    log("demote %s: %s, %d s behind, takes over" % (old.name, new.name, lag))
    st, body, _ = http(old.port, "/api/cluster/demote", method="POST")
    check(st == 200, "POST /api/cluster/demote on %s: %d %s" % (old.name, st, body))
    check(find_primary([new], timeout=FAR_S) is new, "%s is primary now" % new.name)
    st, nums = numbers(new, "orders", 3, hops=1)  # issued by new itself, not redirected
    behind[new] = node_clock(new) - SH_MIDNIGHT  # read after the answer: its clock then or later
    log("%s, primary with its clock %s midnight, issues %s"
        % (new.name, before_or_after(behind[new]), nums))
    check(st == 200 and all(n.startswith("ORD20261129") for n in nums) and nums[0] > last,
          "%s goes on with the new date, never the old, above %s: %s (its clock %s midnight)"
          % (new.name, last, nums, before_or_after(behind[new])))
    last = nums[-1] if st == 200 else last
check(behind[f2] < 0, "decisive: %s, %d s behind, issued while its own clock was still before "
      "midnight, after the primary had issued the new date (its clock %s midnight)"
      % (f2.name, FAR_S, before_or_after(behind[f2])))
for n in (f0, f1, f2):
    n.stop()

log("Europe/Berlin, the night after the switch to winter time")
# 2026-10-25: the clocks go back at 01:00Z; that night's midnight is 23:00Z (in summer
# time it would have been 22:00Z). One node (and cluster) per instant, their clocks reaching
# them together: 22:00Z must not restart the counter, 23:00Z must.
BERLIN_MIDNIGHT = 1792969200
TARGETS = (("22:00Z", BERLIN_MIDNIGHT - 3600), ("23:00Z", BERLIN_MIDNIGHT))
BERLIN = dict(ORD, name="berlin", time_zone="Europe/Berlin")


def start_berlin(attempt, offset):
    started = []
    for label, target in TARGETS:
        name = "b%s" % label[:2] + ("-%d" % attempt if attempt else "")
        n = start_line(name, [name], offset + target - TARGETS[0][1], (0,), BERLIN)
        if n is None:
            for b in started:
                b.stop()
            return None
        started += n
    return started


bs = clock_set("the nodes at 22:00Z and 23:00Z", TARGETS[0][1], start_berlin)
at = {}
for b, (label, target) in zip(bs, TARGETS):
    wait_clock(b, target - 1)
    at[label] = [numbers(b, "berlin")]
for b, (label, target) in zip(bs, TARGETS):
    wait_clock(b, target + 1)
    at[label].append(numbers(b, "berlin"))
for b in bs:
    b.stop()
(b1, a1), (b2, a2) = at["22:00Z"], at["23:00Z"]
check(b1[0] == 200 and a1[0] == 200 and b1[1][0][3:11] == a1[1][0][3:11] == "20261025" and
      a1[1][0][11:] != "000001", "no restart at 22:00Z, an hour early: %s" % (at["22:00Z"],))
check(b2[0] == 200 and a2[0] == 200 and b2[1][0][3:11] == "20261025" and
      a2[1][0] == "ORD20261026000001", "the restart at 23:00Z, local midnight: %s"
      % (at["23:00Z"],))
log("the clock part took %.1f s" % (time.monotonic() - t_clock))
env.finish()
