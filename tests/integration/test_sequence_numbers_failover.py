"""Business numbers through a kill -9 of the sequence primary, and a numbering's
counter out of the sequence routes' reach (docs/id-shapes.md, "Business
numbers"), on two sequence nodes with the default batch (10,000):

- W (width 4, daily, UTC) issues 7 numbers; INV- (width 5, never) 95,000;
- the counter is not a sequence: GET /api/sequence/get/numbering:T?count=996
  and RESP INCRBY on it leave T (width 3, never) alone (its next number is
  T006, never T002 again), the sequence routes refuse the numbering's own
  name (@T: 400 / an error), and a sequence numbering:later created first with
  a huge start is not adopted by the numbering "later" (its first number is
  L001, not numbering_exhausted);
- kill -9 of the primary: the standby's first W number carries today's date
  (UTC) with a counter above 7, and INV- goes on above 95000 or answers
  numbering_exhausted, never a number issued before.
Every call for numbers is recorded (tests/lib/ordercheck.py's History, each period a key of
counters) and the history passes the order checker. About 20 s.
"""
import json
import os
import signal
import time

from leafdtest import Env, RespStream, check, http, log
from ordercheck import History, verify
from seqcluster import find_primary, seq_props, start_node

W = {"name": "W", "prefix": "W", "date": "yyyyMMdd", "width": 4, "period": "day",
     "time_zone": "UTC"}
INV = {"name": "INV", "prefix": "INV-", "date": "", "width": 5, "period": "never",
       "time_zone": "UTC"}
T = {"name": "T", "prefix": "T", "date": "", "width": 3, "period": "never", "time_zone": "UTC"}
LATER = dict(T, name="later", prefix="L")


def post(node, body):
    return http(node.port, "/api/numbering", method="POST", body=json.dumps(body))


def numbers(node, name, count=1, retry_s=20.0):
    """The numbers (redirects followed, 503 no_primary retried for retry_s): (status, list or
    body); the call is recorded in the history."""
    d = DEFS[name]
    start = time.monotonic_ns()
    st, out = _numbers(node, name, count, retry_s)
    hist.record_numbers(name, d["prefix"], d["width"], start, time.monotonic_ns(),
                        out if st == 200 else None, error=None if st == 200 else st)
    return st, out


def _numbers(node, name, count, retry_s):
    end = time.monotonic() + retry_s
    while True:
        port = node.port
        for _ in range(3):
            st, body, hdr = http(port, "/api/number/get/%s?count=%d" % (name, count))
            if st != 307:
                break
            loc = hdr.get("Location") or hdr.get("location")
            port = int(loc.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        if st == 503 and ("no_primary" in body or "not_primary" in body) and \
                time.monotonic() < end:
            time.sleep(0.1)
            continue
        return st, body.split("\n") if st == 200 else body


def utc_today():
    t = time.gmtime()
    return "%04d%02d%02d" % (t.tm_year, t.tm_mon, t.tm_mday)


DEFS = {d["name"]: d for d in (W, INV, T, LATER)}
env = Env()
zk = env.zookeeper()
HISTORY = os.path.join(env.dir, "history")
hist = History(HISTORY, "test")
nodes = [start_node(env, "n%d" % i, seq_props(zk.address(), 6000, batch=10000)) for i in (0, 1)]
primary = find_primary(nodes)
check(primary is not None, "a sequence primary")
standby = nodes[1] if primary is nodes[0] else nodes[0]

log("a sequence numbering:later with a huge start, before the numbering")
st, body, _ = http(primary.port, "/api/sequence", method="POST",
                   body=json.dumps({"name": "numbering:later", "start": 999000000}))
log("POST /api/sequence numbering:later: %d %s" % (st, body))
for d in (W, INV, T, LATER):
    st, body, _ = post(primary, d)
    check(st == 201, "POST /api/numbering %s: 201 (%d %s)" % (d["name"], st, body))
st, nums = numbers(primary, "later")
check(st == 200 and nums == ["L001"], "the numbering later starts at L001, the sequence "
      "numbering:later not adopted (%s %s)" % (st, nums))

log("the counter out of the sequence routes' reach")
st, nums = numbers(primary, "T", 5)
check(st == 200 and nums == ["T%03d" % i for i in range(1, 6)], "T001 .. T005 (%s)" % (nums,))
st, body, _ = http(primary.port, "/api/sequence/get/numbering:T?count=996")
log("GET /api/sequence/get/numbering:T?count=996: %d %s" % (st, body[:40]))
r = RespStream(primary.resp_port)
log("RESP INCRBY sequence:numbering:T 996: %r" % (r.call("INCRBY", "sequence:numbering:T", 996),))
own = r.call("INCRBY", "sequence:@T", 996)
check(not isinstance(own, int), "RESP INCRBY sequence:@T (the numbering's own): refused (%r)" % (own,))
r.close()
st, body, _ = http(primary.port, "/api/sequence/get/@T")
check(st == 400, "GET /api/sequence/get/@T (the numbering's own): 400 (%d %s)" % (st, body))
st, nums = numbers(primary, "T")
check(st == 200 and nums == ["T006"], "T goes on at T006, never T002 again (%s %s)" % (st, nums))

log("W 7 numbers, INV- 95,000")
st, w = numbers(primary, "W", 7)
check(st == 200 and w[-1] == "W%s0007" % utc_today(), "W ... W<today>0007 (%s)" % (w,))
inv = []
for count in (10000,) * 9 + (5000,):
    st, nums = numbers(primary, "INV", count)
    check(st == 200, "INV- x %d: %s" % (count, st))
    inv += nums if st == 200 else []
check(inv[-1:] == ["INV-95000"], "INV-00001 .. INV-95000 (%s)" % inv[-1:])

log("kill -9 of the primary %s" % primary.name)
primary.stop(signal.SIGKILL)
check(find_primary([standby], timeout=20) is standby, "the standby becomes primary")
st, nums = numbers(standby, "W")
today = utc_today()
check(st == 200 and nums[0].startswith("W" + today) and nums[0] > w[-1],
      "after the kill W goes on today (%s) above %s: %s %s" % (today, w[-1], st, nums))
st, nums = numbers(standby, "INV", 3)
check((st == 200 and min(nums) > "INV-95000") or (st == 503 and "numbering_exhausted" in nums),
      "after the kill INV- goes on above INV-95000 or is exhausted, never again: %s %s"
      % (st, nums))
st, nums = numbers(standby, "T")
check(st == 200 and nums[0] > "T006", "T above T006 after the kill: %s %s" % (st, nums))
hist.close()
ok, text = verify(HISTORY)
log(text)
check(ok, "the calls' history passes the order checker: %s" % text)
for n in nodes:
    n.stop()
env.finish()
