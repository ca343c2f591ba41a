"""Lease mode: a clock stepped back 10 minutes at run time moves the node to
another slot instead of answering 503 until the clock catches up.

libfaketime fakes only the wall clock (DONT_FAKE_MONOTONIC=1), read from a file
on every call, so the test steps it while the node runs: back 10 minutes,
three times (-10, -20, -30 minutes). A client keeps requesting IDs on one
keep-alive connection throughout. Checks: every step switches slot (the 503s
last less than a second; the aim is under 100 ms and the figures are logged),
no ID repeats, and no ID of a slot left behind is at or above the reservation
that slot keeps in ZooKeeper.
"""
import json
import os
import socket
import threading
import time

from leafdtest import Env, HttpStream, check, get_request, log, wait_until
from zkhelpers import FAKETIME_LIB, cli_get, faketime_env, ms_of, ready_json, worker_of, zk_props

LEASE = "/snowflake/it/leaf_lease"
STEPS = 3


class FakeClock:
    def __init__(self, path):
        self.path = path
        self.set("+0")

    def set(self, spec):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(spec + "\n")
        os.rename(tmp, self.path)


class Client(threading.Thread):
    """Requests IDs back to back; records (monotonic time, status, ids)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stop_flag = threading.Event()
        self.log = []

    def run(self):
        c = HttpStream(self.port)
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        end = time.monotonic() + 60
        while not self.stop_flag.is_set() and time.monotonic() < end:
            c.send(get_request("/api/snowflake/get/clk?count=5"))
            r = c.read_response()
            t = time.monotonic()
            if r is None:
                self.log.append((t, None, []))
                break
            ids = [int(x) for x in r[2].split(b"\n")] if r[0] == 200 else []
            self.log.append((t, r[0], ids))
            time.sleep(0.002)


def slot_reserved(zk, slot):
    text = cli_get(zk, "%s/%010d" % (LEASE, slot))
    return json.loads(text)["reserved"] if text else None


env = Env()
if not os.path.exists(FAKETIME_LIB):
    check(False, "libfaketime is installed at %s (package faketime)" % FAKETIME_LIB)
    env.finish()
zk = env.zookeeper()
clock = FakeClock(os.path.join(env.dir, "faketime.rc"))
n = env.leafd("n", zk_props(zk.address(), **{"leafd.snowflake.worker.mode": "lease"}),
              extra_env=faketime_env(timestamp_file=clock.path))
first = n.get_ids("/api/snowflake/get/clk")[0]
slots = [worker_of(first)]
cl = Client(n.port)
cl.start()
time.sleep(0.5)
windows = []
for k in range(1, STEPS + 1):
    mark = len(cl.log)
    clock.set("-%d" % (600 * k))
    t_step = time.monotonic()
    moved = wait_until(lambda: any(s == 200 and worker_of(ids[0]) != slots[-1]
                                   for _, s, ids in cl.log[mark:]), 10, interval=0.01)
    check(moved, "step %d: the node serves from another slot" % k)
    after = cl.log[mark:]
    refused = [t for t, s, _ in after if s != 200]
    ok_new = [t for t, s, ids in after if s == 200 and worker_of(ids[0]) != slots[-1]]
    if ok_new:
        slots.append(worker_of([ids for _, s, ids in after if s == 200 and worker_of(ids[0]) != slots[-1]][0][0]))
        # the 503 window: from the first refusal to the first ID of the new slot
        win = (ok_new[0] - refused[0]) if refused else 0.0
        windows.append(win)
        log("step %d (-%d min): slot %d -> %d, %d refusals over %.1f ms (%.1f ms after the step)"
            % (k, 10 * k, slots[-2], slots[-1], len(refused), win * 1000, (ok_new[0] - t_step) * 1000))
    time.sleep(0.7)
cl.stop_flag.set()
cl.join(10)

statuses = [s for _, s, _ in cl.log]
ids = [i for _, s, l in cl.log for i in l]
check(len(set(ids)) == len(ids), "no duplicate among %d IDs" % len(ids))
check(all(s in (200, 503) for s in statuses), "only 200 and 503 answers: %s" % set(statuses))
check(len(windows) == STEPS, "%d switches measured" % len(windows))
check(windows and max(windows) < 1.0, "each switch's 503 window is under 1 s (worst %.1f ms)"
      % (max(windows or [0]) * 1000))
log("switch 503 windows (ms): %s" % ", ".join("%.1f" % (w * 1000) for w in windows))
lease = ready_json(n)[1]["snowflake"].get("lease", {})
log("lease after the steps: %s" % lease)
check(lease.get("switches") == STEPS, "/ready counts %d switches: %s" % (STEPS, lease))
check(len(set(slots)) == STEPS + 1, "each step took a new slot: %s" % slots)
for s in slots[:-1]:
    res = slot_reserved(zk, s)
    mine = [i for i in ids + [first] if worker_of(i) == s]
    check(res is not None and all(ms_of(i) < res for i in mine),
          "slot %d: its %d IDs are below the reservation it keeps (%s)" % (s, len(mine), res))
# per slot, IDs strictly increase
for s in slots:
    mine = [i for i in ids if worker_of(i) == s]
    check(all(a < b for a, b in zip(mine, mine[1:])), "slot %d's IDs strictly increase" % s)
m = n.get("/metrics")[1]
check('leafd_snowflake_lease_switches_total{outcome="switched"} %d' % STEPS in m,
      "metrics count the switches")
clock.set("+0")
check(n.stop() == 0, "graceful stop")
env.finish()
