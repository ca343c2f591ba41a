"""Lease mode (docs/cluster.md, "Worker-ID leases"): slots, owners and the fence in real ZooKeeper.

- Two nodes claim two different slots; each slot has an EPHEMERAL owner and
  JSON data whose "reserved" is above every ID its holder issued.
- A forced session expiry loses the slot; the node claims again (its own slot,
  free again) and serves without a restart, above the old reservation.
- kill -9 and an immediate restart with the same identity and data dir: the old
  owner is still there (its session lives on), so the node takes another free
  slot at once; nothing it issues is at or below the old slot's reservation.
- /ready and /metrics show the slot, claims and losses; tools/programs/zk-inspect lists
  the slots.
- A graceful stop lowers the slot's reserved to the last time issued; the node
  restarted takes its slot back at once, above that.
"""
import json
import os
import subprocess
import time

from leafdtest import Env, check, log, wait_until
from zkhelpers import Load, cli_get, cli_list, expire_session, ms_of, ready_json, session_id, worker_of, zk_props

LEASE = "/snowflake/it/leaf_lease"


def props(zk, **extra):
    return zk_props(zk.address(), **dict({"leafd.snowflake.worker.mode": "lease",
                                          "leafd.zk.session.timeout.ms": "4000"}, **extra))


def slot_data(zk, slot):
    text = cli_get(zk, "%s/%010d" % (LEASE, slot))
    return json.loads(text) if text else None


def lease_of(node):
    return ready_json(node)[1]["snowflake"].get("lease", {})


env = Env()
zk = env.zookeeper()
a = env.leafd("a", props(zk))
b = env.leafd("b", props(zk))
ida = a.get_ids("/api/snowflake/get/t?count=50")
idb = b.get_ids("/api/snowflake/get/t?count=50")
wa, wb = worker_of(ida[0]), worker_of(idb[0])
check(wa != wb, "two nodes hold two slots (%d, %d)" % (wa, wb))
check(lease_of(a).get("slot") == wa and lease_of(a).get("state") == "held",
      "/ready shows the slot held: %s" % lease_of(a))
slots = cli_list(zk, LEASE) or []
check("%010d" % wa in slots and "%010d" % wb in slots, "both slots exist: %s" % slots)
owner = cli_get(zk, "%s/%010d/owner" % (LEASE, wa))
check(cli_list(zk, "%s/%010d" % (LEASE, wa)) == ["owner"], "slot %d has an owner child" % wa)
log("owner of %d: %s" % (wa, owner))
d = slot_data(zk, wa)
check(d is not None and d["reserved"] > max(ms_of(i) for i in ida),
      "slot %d's reserved %s is above every ID it issued" % (wa, d))
check(d is not None and d.get("ip") == "127.0.0.1" and d.get("port") == a.port,
      "slot data names the holder: %s" % d)

# A forced expiry: the slot is lost, then claimed again without a restart.
all_ids = set(ida) | set(idb)
load = Load([a], count=20, pause=0.01)
load.start()
time.sleep(0.5)
before = slot_data(zk, wa)["reserved"]
sid = session_id(a)
check(expire_session(zk.address(), sid), "expired node a's session")
back = wait_until(lambda: lease_of(a).get("claims", 0) >= 2 and lease_of(a).get("state") == "held", 20)
check(back, "node a claimed a slot again after the expiry: %s" % lease_of(a))
# Its own slot's floor is the reservation it held (up to reserve.ms ahead): waited out.
check(a.wait_ready(10), "node a is ready again within reserve.ms")
time.sleep(0.5)
errors = load.finish()
ids_after = a.get_ids("/api/snowflake/get/t?count=20")
la = lease_of(a)
check(la.get("claims_lost") == 1, "one claim lost: %s" % la)
check(la.get("slot") == wa, "its own slot, free again, was taken back (%s)" % la)
mine = [i for i in load.ids[a.port] + ids_after if worker_of(i) == wa]
late = [i for i in ids_after if worker_of(i) == wa]
check(late and min(ms_of(i) for i in late) > before,
      "after the re-claim IDs are above the reservation held before the expiry")
log("errors across the expiry (503 while between slots is allowed): %d" % len(errors))
check(all(e[1] == 503 for e in errors), "only 503s while re-claiming: %s" % errors[:3])
all_ids |= set(load.ids[a.port]) | set(ids_after)

# kill -9 and restart at once: the old owner lingers, another slot is taken.
old = lease_of(b)["slot"]
ids_b = b.get_ids("/api/snowflake/get/t?count=100")
all_ids |= set(ids_b)
b.proc.kill9()
t0 = time.time()
b.start()
restart_s = time.time() - t0
ids_b2 = b.get_ids("/api/snowflake/get/t?count=100")
res_old = slot_data(zk, old)["reserved"]
nb = lease_of(b)["slot"]
log("restart after kill -9 took %.2f s; slot %d -> %d" % (restart_s, old, nb))
check(nb != old, "the restarted node took another free slot while its old owner lingers")
check(restart_s < 10, "it served within 10 s (%.1f s)" % restart_s)
check(not (set(ids_b2) & all_ids), "no ID repeats across the kill -9")
same = [i for i in ids_b2 if worker_of(i) == old]
check(all(ms_of(i) > res_old for i in same), "nothing at or below the old reservation")
all_ids |= set(ids_b2)

# Once the old session expires the old slot is free again (owner gone).
gone = wait_until(lambda: cli_list(zk, "%s/%010d" % (LEASE, old)) == [], 15, interval=0.5)
check(gone, "the killed node's owner vanished when its session expired")

# metrics and zk-inspect
m = a.get("/metrics")[1]
check("leafd_snowflake_lease_slot %d" % wa in m, "metrics show the slot")
check("leafd_snowflake_lease_claims_lost_total 1" in m, "metrics count the lost claim")
check("leafd_snowflake_lease_fence_failures_total 0" in m, "no fence failure")
inspect = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "programs", "zk-inspect")
r = subprocess.run([inspect, zk.address(), "it"], capture_output=True, text=True, timeout=60)
log(r.stdout[-1500:])
check(r.returncode == 0 and "lease slots" in r.stdout, "zk-inspect lists the lease slots")
check(("%d" % wa) in r.stdout and "held" in r.stdout and "free" in r.stdout,
      "zk-inspect shows held and free slots")

# A graceful stop gives the slot back with its reserved lowered to the last
# time issued (the same versioned write): the next holder starts at once.
last_a = a.get_ids("/api/snowflake/get/t?count=20")
all_ids |= set(last_a)
held = slot_data(zk, wa)["reserved"]
check(a.stop() == 0 and b.stop() == 0, "graceful stops")
given = slot_data(zk, wa)["reserved"]
log("slot %d: reserved %d while held, %d after the graceful stop" % (wa, held, given))
check(max(ms_of(i) for i in last_a) <= given < held,
      "the stop lowered the slot's reserved to the last time issued, not below it")
check(cli_list(zk, "%s/%010d" % (LEASE, wa)) == [], "the stop released the owner at once")
t0 = time.time()
a.start()
again = a.get_ids("/api/snowflake/get/t?count=20")
took = time.time() - t0
check(lease_of(a).get("slot") == wa, "restarted, node a took its own slot back (%s)" % lease_of(a))
check(min(ms_of(i) for i in again) > given, "its IDs are above the lowered reservation")
check(not (set(again) & all_ids), "no ID repeats across the graceful restart")
check("waiting" not in a.log_text(), "it served without waiting out a reservation (%.2f s)" % took)
check(a.stop() == 0, "graceful stop")
env.finish()
