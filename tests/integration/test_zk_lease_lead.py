"""Lease mode, the bounded lead (docs/reference/guarantees.md, "The bounded lead").

The wall clock is stepped through libfaketime's timestamp file (only the
wall clock is faked) while four keep-alive connections request IDs:
- back 500 ms, then back 3 s more: not one failed request, no slot switch
  (the lead covers steps up to max.lead.ms, 5 s), IDs strictly increasing
  per connection, no duplicate;
- back 60 s, beyond the bound: the node switches slot (docs/cluster.md, leases); the
  refusals last less than a second, no ID repeats, and the slot left keeps
  its reservation above every ID issued from it.
"""
import json
import os
import time

from leafdtest import Env, check, log, wait_until
from leadhelpers import Clients, FakeClock
from zkhelpers import FAKETIME_LIB, cli_get, faketime_env, ms_of, ready_json, worker_of, zk_props

LEASE = "/snowflake/it/leaf_lease"

env = Env()
if not os.path.exists(FAKETIME_LIB):
    check(False, "libfaketime is installed at %s (package faketime)" % FAKETIME_LIB)
    env.finish()
zk = env.zookeeper()
clock = FakeClock(os.path.join(env.dir, "faketime.rc"))
n = env.leafd("n", zk_props(zk.address(), **{"leafd.snowflake.worker.mode": "lease"}),
              extra_env=faketime_env(timestamp_file=clock.path))
slot = worker_of(n.get_ids("/api/snowflake/get/lead")[0])

cl = Clients(n.port, n=4)
time.sleep(0.5)
clock.set("-0.5")
time.sleep(0.8)
clock.set("-3.5")
time.sleep(0.3)
lead = ready_json(n)[1]["snowflake"]
log("3 s back: lead %s ms, lease %s" % (lead.get("clock_lead_ms"), lead.get("lease")))
time.sleep(3.0)
cl.stop()
fails = cl.failures()
log("steps of 500 ms and 3 s: %d requests, %d IDs, %d failed" % (cl.requests(), len(cl.ids()),
                                                               len(fails)))
check(not fails, "no failed request during the steps (%s)" % fails[:3])
cl.check_order("steps of 500 ms and 3 s")
check({worker_of(i) for i in cl.ids()} == {slot}, "no switch: every ID from slot %d" % slot)
lease = ready_json(n)[1]["snowflake"]["lease"]
check(lease["switches"] == 0, "/ready counts no switch: %s" % lease)

# 60 s back: beyond the bound, the node moves to another slot.
cl = Clients(n.port, n=4)
time.sleep(0.3)
t_step = time.monotonic()
clock.set("-63.5")
moved = wait_until(lambda: any(worker_of(i) != slot for i in cl.ids()[-40:]), 10, interval=0.01)
time.sleep(0.5)
cl.stop()
check(moved, "60 s back: the node serves from another slot")
refused = [t for t, _, _ in cl.failures()]
window = (max(refused) - t_step) if refused else 0.0
log("60 s back: %d refused requests, the last %.0f ms after the step" % (len(refused),
                                                                      window * 1000))
check(window < 1.0, "refusals end within 1 s of the step (%.0f ms)" % (window * 1000))
check(all(s == 503 for _, s, _ in cl.failures()), "refusals are 503s: %s" % cl.failures()[:3])
ids = cl.ids()
check(len(set(ids)) == len(ids), "no duplicate among %d IDs" % len(ids))
lease = ready_json(n)[1]["snowflake"]["lease"]
# One step, one switch; but libfaketime (FAKETIME_NO_CACHE=1) races on its own globals, and on
# a loaded machine a thread may still read the time from before the step once after the switch:
# the slot it issued from is then ahead of the others' clock and they switch again (2 and 4 seen
# in full-suite runs, never alone). Each switch is to a fresh slot, and the checks above (no
# duplicate, refusals within 1 s) hold whatever the count; a storm would not stay under 5.
check(1 <= lease["switches"] <= 5 and lease["slot"] != slot,
      "/ready counts a switch (at most a few: libfaketime's per-thread reads): %s" % lease)
log("60 s back: %d switch(es)" % lease["switches"])
kept = json.loads(cli_get(zk, "%s/%010d" % (LEASE, slot)) or "{}").get("reserved")
mine = [i for i in ids if worker_of(i) == slot]
check(kept is not None and all(ms_of(i) < kept for i in mine),
      "slot %d keeps its reservation %s above its %d IDs" % (slot, kept, len(mine)))
clock.set("+0")
env.finish()
