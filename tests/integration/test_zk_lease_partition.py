"""Lease mode under a partition: the fence is in the data, not in timing.

Node A reaches ZooKeeper through tests/lib/tcpproxy.py; the proxy is
blackholed (sockets stay open, nothing arrives) for longer than the session
timeout, while A's clients keep asking for IDs. Once ZooKeeper has expired A's
session (A's owner node is gone), node B starts with A's slot in its local
cache and takes it. Checks:
- A keeps issuing only below the reservation ZooKeeper acknowledged to it,
  then answers 503 (it cannot extend its reservation, so it stops at it);
- B starts above the slot's reservation: no ID of A equals any ID of B, and
  every ID A issued with that worker ID is below B's first;
- after the partition heals, A (its session expired) claims another slot and
  serves again, without a restart; all IDs are unique.
The timeline is logged (docs/RELIABILITY.md records it).
"""
import json
import os
import threading
import time

from leafdtest import Env, check, free_port, http, log, wait_until
from tcpproxy import Proxy
from zkhelpers import cli_get, cli_list, ms_of, ready_json, worker_of, zk_props

SESSION_MS = 4000
LEASE = "/snowflake/it/leaf_lease"


class Client(threading.Thread):
    def __init__(self, port, name):
        super().__init__(daemon=True)
        self.port, self.name = port, name
        self.stop_flag = threading.Event()
        self.log = []  # (monotonic, status, ids)

    def run(self):
        end = time.monotonic() + 90
        while not self.stop_flag.is_set() and time.monotonic() < end:
            try:
                st, body, _ = http(self.port, "/api/snowflake/get/p?count=5", timeout=2)
            except OSError:
                st, body = None, ""
            ids = [int(x) for x in body.split("\n")] if st == 200 else []
            self.log.append((time.monotonic(), st, ids))
            time.sleep(0.01)

    def ids(self):
        return [i for _, _, l in self.log for i in l]


def props(addr):
    return zk_props(addr, **{"leafd.snowflake.worker.mode": "lease",
                             "leafd.zk.session.timeout.ms": str(SESSION_MS)})


env = Env()
zk = env.zookeeper()
proxy = Proxy(target=("127.0.0.1", zk.port))
a = env.leafd("a", props("127.0.0.1:%d" % proxy.port))
slot = worker_of(a.get_ids("/api/snowflake/get/p")[0])
ca = Client(a.port, "a")
ca.start()
time.sleep(1.0)

t0 = time.monotonic()
proxy.blackhole()
log("blackhole at +0 ms; A holds slot %d" % slot)
gone = wait_until(lambda: cli_list(zk, "%s/%010d" % (LEASE, slot)) == [], 30, interval=0.2)
t_gone = time.monotonic() - t0
check(gone, "ZooKeeper expired A's session: slot %d has no owner" % slot)
reserved_seen = json.loads(cli_get(zk, "%s/%010d" % (LEASE, slot)))["reserved"]

# B: a node whose local cache names slot A held (the slot it wants first).
port_b = free_port()
cache = os.path.join(env.dir, "b", "data", "it", str(port_b))
os.makedirs(cache)
with open(os.path.join(cache, "workerID.properties"), "w") as f:
    f.write("workerID=%d\ntimestamp=0\n" % slot)
b = env.leafd("b", props(zk.address()), port=port_b)
t_b = time.monotonic() - t0
lb = ready_json(b)[1]["snowflake"]["lease"]
check(lb.get("slot") == slot, "B took A's slot %d (%s)" % (slot, lb))
cb = Client(b.port, "b")
cb.start()
# Keep the partition until A has run into its ceiling for a while.
wait_until(lambda: any(s == 503 for t, s, _ in ca.log if t > t0), 15)
time.sleep(1.0)
proxy.heal()
t_heal = time.monotonic() - t0
back = wait_until(lambda: any(s == 200 and worker_of(l[0]) != slot for t, s, l in ca.log
                              if t > t0 + t_heal), 30, interval=0.1)
t_back = time.monotonic() - t0
time.sleep(0.5)
ca.stop_flag.set()
cb.stop_flag.set()
ca.join(10)
cb.join(10)

ids_a, ids_b = ca.ids(), cb.ids()
during = [(t, s, l) for t, s, l in ca.log if t0 <= t <= t0 + t_heal]
a_ok = [t for t, s, _ in during if s == 200]
a_last = (max(a_ok) - t0) if a_ok else -1
a_slot_ids = [i for i in ids_a if worker_of(i) == slot]
b_slot_ids = [i for i in ids_b if worker_of(i) == slot]
log("timeline: A's last ID at +%.0f ms; A's owner gone at +%.0f ms; B serving slot %d at +%.0f ms; "
    "healed at +%.0f ms; A serving again (slot %s) at +%.0f ms"
    % (a_last * 1000, t_gone * 1000, slot, t_b * 1000, t_heal * 1000,
       ready_json(a)[1]["snowflake"]["lease"].get("slot"), t_back * 1000))
check(not (set(ids_a) & set(ids_b)), "no ID of A equals an ID of B (%d and %d IDs)"
      % (len(ids_a), len(ids_b)))
check(a_slot_ids and b_slot_ids and max(a_slot_ids) < min(b_slot_ids),
      "every ID A issued from slot %d is below B's first" % slot)
check(all(ms_of(i) < reserved_seen for i in a_slot_ids),
      "A issued nothing at or above the reservation B found (%d)" % reserved_seen)
statuses_after = [s for t, s, _ in during if t - t0 > a_last]
check(a_last > 0 and statuses_after and all(s != 200 for s in statuses_after),
      "A stopped issuing at its ceiling and stayed stopped until the heal (%d refusals)"
      % len(statuses_after))
check(a_last < SESSION_MS / 1000.0 + 5.0 + 1.0,
      "A stopped within reserve.ms of its last acknowledged write (+%.1f s)" % a_last)
check(back, "after the heal A claimed another slot and serves again, without a restart")
la = ready_json(a)[1]["snowflake"]["lease"]
check(la.get("claims_lost", 0) >= 1 and la.get("slot") != slot, "A's /ready: %s" % la)
all_ids = ids_a + ids_b
check(len(set(all_ids)) == len(all_ids), "all %d IDs are unique" % len(all_ids))
proxy.close()
check(b.stop() == 0, "B stops cleanly")
env.finish()
