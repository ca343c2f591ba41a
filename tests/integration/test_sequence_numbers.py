"""Business numbers (docs/id-shapes.md, "Business numbers") on two nodes with
sequences, one ZooKeeper:

- POST /api/numbering creates ORD (yyyyMMdd, width 6, daily, Asia/Shanghai)
  on one node; GET /api/numbering lists it on the other; a second create is
  409; a period finer than the date is 400;
- the two nodes asked in turn (redirects followed: the primary issues) give
  ORD<date><6 digits> strictly increasing across the cluster, the date being
  today's in Shanghai; RESP LEAF.NUMBER too;
- kill -9 of the primary under load: the standby takes over, never a repeat;
- overflow: width 1 (created and listed with tools/leafctl) gives 9 numbers,
  then 503 numbering_exhausted;
- a test clock (libfaketime, wall clock only, DONT_FAKE_MONOTONIC) on both
  nodes, the primary's crossing midnight in Asia/Shanghai and the other's 2 s
  behind: the counter restarts at 1 exactly once, at the primary's midnight;
  after the primary hands over (demote), the node 2 s behind goes on with the
  new date, never the old; and a daily numbering in Europe/Berlin across the
  night after a daylight-saving change restarts at that night's midnight
  (23:00 UTC in winter time), not an hour early.
"""
import json
import os
import signal
import subprocess
import threading
import time

from leafdtest import Env, RespStream, check, http, log, wait_until
from seqcluster import find_primary, seq_props, start_node
from zkhelpers import FAKETIME_LIB, faketime_env

LEAFCTL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "leafctl")
ORD = {"name": "orders", "prefix": "ORD", "date": "yyyyMMdd", "width": 6, "period": "day",
       "time_zone": "Asia/Shanghai"}


def post(node, body):
    return http(node.port, "/api/numbering", method="POST", body=json.dumps(body))


def numbers(node, name, count=1, hops=3, retry_s=3.0):
    """The numbers, following the standby's 307 to the primary and retrying 503 no_primary
    (an election, a slow ZooKeeper) for up to retry_s, as sequence clients do; (status, list or
    body)."""
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


def shanghai_today():
    t = time.gmtime(time.time() + 8 * 3600)
    return "%04d%02d%02d" % (t.tm_year, t.tm_mon, t.tm_mday)


env = Env()
zk = env.zookeeper()
SESSION_MS = 6000
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
one, many = r.call("LEAF.NUMBER", "orders"), r.call("LEAF.NUMBER", "orders", 3)
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

log("a test clock crossing midnight")
if not os.path.exists(FAKETIME_LIB):
    check(False, "libfaketime is installed at %s (package faketime)" % FAKETIME_LIB)
    env.finish()


def node_clock(node):
    """The node's wall clock (s), faked or not: /api/snowflake/time answers it."""
    return json.loads(http(node.port, "/api/snowflake/time")[1])["timestamp"] / 1000.0


def clock_node(name, zk_address, offset_s):
    """A sequence node whose wall clock runs offset_s seconds from the real one, from its start
    on (a clock stepped by hours under a running ZooKeeper client would break the client's
    own timeouts: a fixed offset from the start is what a node with a wrong clock has)."""
    p = seq_props(zk_address, SESSION_MS, **{"leaf.snowflake.enable": "false"})
    # (snowflake off: its start-up check refuses a clock hours away from ZooKeeper's)
    n = env.leafd(name, p, wait_ready=False, extra_env=faketime_env(spec="%+d" % offset_s))
    n.resp_port = int(p["leafd.resp.listen"].rsplit(":", 1)[1])
    if not wait_until(lambda: n.proc.alive() and http(n.port, "/health")[0] == 200, 30):
        log("%s did not start (a loaded machine: ZooKeeper not reached in time?): %s"
            % (name, n.log_text()[-300:]))
        n.stop()
        return None
    return n


def primary_before(name, zk_address, target, margin=25):
    """A node whose clock is still more than 3 s before target once it is the sequence primary:
    started margin s before target, again with twice the margin when its start took longer."""
    for _ in range(3):
        n = clock_node(name, zk_address, int(target - margin - time.time()))
        if n is not None and find_primary([n], timeout=30) is n and node_clock(n) < target - 3:
            return n
        log("%s: not primary 3 s before the target; again with a wider margin" % name)
        if n is not None:
            n.stop()
        margin *= 2
    check(False, "%s never became primary in time" % name)
    env.finish()


def wait_clock(node, at):
    """Sleeps until node's clock reads `at` (s)."""
    left = at - node_clock(node)
    if left > 0:
        time.sleep(left)


zk2 = env.zookeeper(name="zk2")
SH_MIDNIGHT = 1795881600  # 2026-11-28T16:00:00Z: midnight in Shanghai (UTC+8)
f0 = primary_before("f0", zk2.address(), SH_MIDNIGHT)
f1 = clock_node("f1", zk2.address(), round(node_clock(f0) - time.time()) - 2)  # 2 s behind
check(f1 is not None, "the node 2 s behind runs")
st, _, _ = post(f0, ORD)
check(st == 201, "ORD created on the test clock")
check(node_clock(f0) < SH_MIDNIGHT - 3, "started before midnight - 3 s (%.1f s before)"
      % (SH_MIDNIGHT - node_clock(f0)))
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
log("demote: the node 2 s behind (still 20261128 by its clock) takes over")
http(f0.port, "/api/cluster/demote", method="POST")
check(find_primary([f1], timeout=10) is f1, "the node behind is primary now")
st, nums = numbers(f1, "orders", 3)
behind = node_clock(f1)
log("the node behind, primary with its clock %.2f s %s midnight, issues %s" % (
    abs(behind - SH_MIDNIGHT), "before" if behind < SH_MIDNIGHT else "after", nums))
check(st == 200 and all(n.startswith("ORD20261129") for n in nums) and nums[0] > seq[-1],
      "it goes on with the new date, never the old: %s (its clock %.2f s %s midnight)"
      % (nums, abs(behind - SH_MIDNIGHT), "before" if behind < SH_MIDNIGHT else "after"))
for n in (f0, f1):
    n.stop()

log("Europe/Berlin, the night after the switch to winter time")
# 2026-10-25: the clocks go back at 01:00Z; that night's midnight is 23:00Z (in summer
# time it would have been 22:00Z).
BERLIN_MIDNIGHT = 1792969200
zk3 = env.zookeeper(name="zk3")
at = {}
for label, target in (("22:00Z", BERLIN_MIDNIGHT - 3600), ("23:00Z", BERLIN_MIDNIGHT)):
    b = primary_before("b" + label[:2], zk3.address(), target)
    if label == "22:00Z":
        st, _, _ = post(b, dict(ORD, name="berlin", time_zone="Europe/Berlin"))
        check(st == 201, "a daily numbering in Europe/Berlin")
    wait_clock(b, target - 1)
    before = numbers(b, "berlin")
    wait_clock(b, target + 1)
    after = numbers(b, "berlin")
    at[label] = (before, after)
    b.stop()
(b1, a1), (b2, a2) = at["22:00Z"], at["23:00Z"]
check(b1[0] == 200 and a1[0] == 200 and b1[1][0][3:11] == a1[1][0][3:11] == "20261025" and
      a1[1][0][11:] != "000001", "no restart at 22:00Z, an hour early: %s" % (at["22:00Z"],))
check(b2[0] == 200 and a2[0] == 200 and b2[1][0][3:11] == "20261025" and
      a2[1][0] == "ORD20261026000001", "the restart at 23:00Z, local midnight: %s"
      % (at["23:00Z"],))
env.finish()
