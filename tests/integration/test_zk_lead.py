"""Forever mode, the bounded lead (docs/reference/guarantees.md, "The bounded lead").

libfaketime fakes only the wall clock (DONT_FAKE_MONOTONIC=1), read from a
timestamp file on every call, and the test steps it while four keep-alive
connections request IDs:
- back 500 ms, then back 3 s more: not one failed request, IDs strictly
  increasing per connection, no duplicate; /ready and /metrics show the lead;
- put right (3.5 s ahead at once): 503 not_ready at most for one reservation's
  write, right after the step (a request asks for the reservation at once),
  not until the reservation timer comes;
- back 60 s: 503 clock_backwards, and still 503 while the clock is more than
  max.lead.ms (5 s) behind what was issued; served again, above every ID
  before, once it is within the bound (not after the whole 60 s).
Then kill -9 and restart, 10 times (no faketime): time from start to the first
ID (median under 1 s), every ID above every ID issued before the kill; and
once with max.lead.ms = 0 for the old figure (the reservation waited out).
"""
import os
import statistics
import time

from leafdtest import Env, check, log, wait_until
from leadhelpers import Clients, FakeClock
from zkhelpers import FAKETIME_LIB, faketime_env, ms_of, ready_json, zk_props


def lead_metric(node):
    for line in node.get("/metrics")[1].splitlines():
        if line.startswith("leafd_snowflake_clock_lead_seconds "):
            return float(line.split()[1])
    return None


def step(clock, node, spec, hold, what):
    clock.set(spec)
    time.sleep(0.2)
    st, r = ready_json(node)
    sf = r["snowflake"]
    log("%s: /ready %d lead %s ms, metric %s s" % (what, st, sf.get("clock_lead_ms"),
                                                   lead_metric(node)))
    time.sleep(hold)
    return st, sf


env = Env()
if not os.path.exists(FAKETIME_LIB):
    check(False, "libfaketime is installed at %s (package faketime)" % FAKETIME_LIB)
    env.finish()
zk = env.zookeeper()
clock = FakeClock(os.path.join(env.dir, "faketime.rc"))
n = env.leafd("n", zk_props(zk.address()), extra_env=faketime_env(timestamp_file=clock.path))
check(ready_json(n)[1]["snowflake"].get("max_lead_ms") == 5000, "/ready shows max_lead_ms 5000")

# Small steps under load: 0 failures.
cl = Clients(n.port, n=4)
time.sleep(0.5)
st, sf = step(clock, n, "-0.5", 0.8, "500 ms back")
check(st == 200 and sf["ready"], "500 ms back: /ready stays 200")
st, sf = step(clock, n, "-3.5", 3.3, "3 s back")
check(st == 200 and sf["ready"] and 1500 < sf["clock_lead_ms"] <= 3500,  # at most the whole step back
      "3 s back: /ready 200 with a lead of about 3 s: %s" % sf)
# Put right under load: the wall clock jumps 3.5 s ahead, past most of what the timer (on the
# monotonic clock) reserved during the step. The first request that finds less than a quarter of
# reserve.ms left asks for a reservation at once; without that, 503 not_ready until the timer.
t_jump = time.monotonic()
st, sf = step(clock, n, "+0", 3.0, "put right (3.5 s ahead)")
check(st == 200 and sf["ready"], "put right: /ready 200: %s" % sf)
cl.stop()
fails = cl.failures()
before = [f for f in fails if f[0] < t_jump]
after = [f for f in fails if f[0] >= t_jump]
log("steps of 500 ms and 3 s back, then put right: %d requests, %d IDs, %d failed before the "
    "put-right, %d after it (at most %.0f ms after)" % (
        cl.requests(), len(cl.ids()), len(before), len(after),
        max([f[0] - t_jump for f in after] or [0]) * 1000))
check(not before, "no failed request during the steps back (%s)" % before[:3])
check(all(f[0] - t_jump < 1.0 and f[1] == 503 and "not_ready" in f[2] for f in after),
      "put right: at most one reservation's time of 503 not_ready, never more (%s)" % after[:3])
cl.check_order("steps of 500 ms and 3 s, and back")
m = n.get("/metrics")[1]
check('leafd_snowflake_clock_backwards_total{outcome="lead"}' in m and
      "leafd_snowflake_clock_lead_seconds" in m, "/metrics shows the lead")
high = max(cl.ids())

# 60 s back: 503 until the clock is within the bound of what was issued.
clock.set("-63.5")
time.sleep(0.1)
st, body, _ = n.get("/api/snowflake/get/lead")
check(st == 503 and "clock_backwards" in body, "60 s back: 503 clock_backwards (%d %s)" % (st, body))
check(ready_json(n)[0] == 503, "60 s back: /ready 503")
clock.set("-10")  # 6.5 s behind the last ID (less the time since): beyond the bound
time.sleep(0.1)
st, body, _ = n.get("/api/snowflake/get/lead")
check(st == 503 and "clock_backwards" in body, "6.5 s behind: still 503 (%d %s)" % (st, body))
# 4 s behind the last ID issued, whatever the time the checks above took (a fixed offset made
# it 4 s only when they took 2.5 s: on a quick run it was beyond the bound).
offset = (ms_of(high) - 4000) / 1000.0 - time.time()
clock.set("%+.3f" % offset)
time.sleep(0.1)
st, body, _ = n.get("/api/snowflake/get/lead")
check(st == 200 and int(body) > high, "4 s behind: served from the lead, above every ID before")
if st == 200:
    ahead = ms_of(int(body)) - (time.time() + offset) * 1000
    log("60 s step: served again 4 s behind, the ID's time %.0f ms ahead of the clock" % ahead)
    check(ahead <= 5000, "the time field is at most max.lead.ms ahead (%.0f ms)" % ahead)
clock.set("+0")
n.stop()

# kill -9 and restart: first ID at once, above everything before.
def restarts(node, times):
    took, ok = [], True
    for _ in range(times):
        before = node.get_ids("/api/snowflake/get/r?count=100")
        node.stop(9)
        t0 = time.monotonic()
        node.start(wait_ready=False)
        first = []
        wait_until(lambda: (lambda r: r[0] == 200 and first.append(int(r[1])) is None)(
            node.get("/api/snowflake/get/r")), 30, interval=0.005)
        took.append(time.monotonic() - t0)
        ok = ok and bool(first) and first[0] > max(before)
    return took, ok


r = env.leafd("r", zk_props(zk.address()))
took, ok = restarts(r, 10)
med = statistics.median(took)
log("kill -9 -> first ID, 10 restarts (this build): median %.0f ms, min %.0f, max %.0f"
    % (med * 1000, min(took) * 1000, max(took) * 1000))
check(ok, "every restart's first ID is above every ID issued before its kill")
check(med < 1.0, "median restart to first ID under 1 s (%.0f ms)" % (med * 1000))
r.stop(9)
r.props["leafd.snowflake.max.lead.ms"] = "0"
r.start(wait_ready=False)
wait_until(lambda: r.get("/api/snowflake/get/r")[0] == 200, 30)
old, ok0 = restarts(r, 1)
log("the same with max.lead.ms = 0 (the reservation waited out): %.0f ms" % (old[0] * 1000))
check(ok0, "max.lead.ms 0: above every ID before too")
env.finish()
