"""Moving a sequence's home (docs/regions.md, "Moving a home"): two regions on loopback, each
with its own ZooKeeper, a registry beside them. Region eu (ID 0) on 127.0.1.1, us (ID 1) on
127.0.2.1, each naming the other in leafd.region.peers.

- a sequence created in eu is homed there and us redirects it; clients in both regions take IDs
  from it, following redirects, while `leafctl region move orders us` moves its home;
- the move: eu's record is marked moved at its max, us creates the sequence above it, the
  registry names us; then eu redirects to us and us serves it;
- every call's IDs pass the order checker (tests/lib/ordercheck.py): strictly increasing in real
  time, no repeat, across the move; the pause (the last ID from eu to the first from us, as the
  clients saw them) is printed;
- the move asked again is done already, and a move naming a region that is not a peer is
  refused (400);
- a move whose switch fails (the registry stopped): the old home stays marked (503), and the
  move asked again goes on where it stopped (the same max, the record the new home created).
"""
import json
import os
import signal
import subprocess
import threading
import time

from leafdtest import LEAFD_BIN, Env, check, free_port, http, log, wait_until
from ordercheck import Histories
from zkhelpers import zk_props

REGIONS = {"eu": (0, "127.0.1.1"), "us": (1, "127.0.2.1")}
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LEAFCTL = os.path.join(ROOT, "tools", "programs", "leafctl")


def region_props(name, zk, registry, listen):
    rid, ip = REGIONS[name]
    return zk_props(zk.address(), **{
        "leafd.snowflake.advertise.ip": ip, "leafd.snowflake.layout": "twitter",
        "leafd.sequence.enable": "true", "leafd.sequence.batch": "100",
        "leafd.region": name, "leafd.region.id": str(rid), "leafd.region.count": "2",
        "leafd.region.registry.zk.address": registry.address(), "leafd.listen": listen})


class Client(threading.Thread):
    """Asks one node for IDs of a sequence until stopped, following up to two redirects; each
    call goes to the histories, each answer that carried IDs is noted with the region that
    served it."""

    def __init__(self, hist, who, node, name):
        super().__init__(daemon=True)
        self.hist, self.who, self.node, self.name = hist, who, node, name
        self.served, self.answers, self.stop_flag = [], {}, False

    def call(self):
        path = "/api/sequence/get/%s?count=3" % self.name
        host, port = self.node.host, self.node.port
        start = time.monotonic_ns()
        try:
            for _ in range(3):
                st, body, hdr = http(port, path, host=host, timeout=5)
                if st != 307:
                    break
                hostport, rest = hdr.get("Location", "")[len("http://"):].split("/", 1)
                host, port, path = hostport.rsplit(":", 1)[0], int(hostport.rsplit(":", 1)[1]), "/" + rest
        except OSError as e:
            self.hist.add(self.who, self.name, start, time.monotonic_ns(), error=str(e))
            return 0
        end = time.monotonic_ns()
        region = "eu" if host == REGIONS["eu"][1] else "us"
        key = "%d %s" % (st, region)
        self.answers[key] = self.answers.get(key, 0) + 1
        if st != 200:
            self.hist.add(self.who, self.name, start, end, error="%d %s" % (st, body[:80]))
            return st
        ids = [int(x) for x in body.split("\n")]
        self.hist.add(self.who, self.name, start, end, ids=ids)
        self.served.append((start, end, region, ids))
        return st

    def run(self):
        while not self.stop_flag:
            if self.call() != 200:
                time.sleep(0.02)


def leafctl(conf, *args):
    e = dict(os.environ, LEAFD_BIN=LEAFD_BIN)
    e.pop("LEAFD_ADMIN_TOKEN", None)
    r = subprocess.run([LEAFCTL, "region"] + list(args) + ["-c", conf], capture_output=True,
                       text=True, timeout=60, env=e)
    return r.returncode, (r.stdout + r.stderr).strip()


env = Env()
servers = {}
starts = [threading.Thread(target=lambda k=k: servers.__setitem__(k, env.zookeeper(name=k)))
          for k in ("registry", "zk-eu", "zk-us")]
for t in starts:
    t.start()
for t in starts:
    t.join(120)
check(len(servers) == 3, "the registry and two ZooKeepers start (%s)" % sorted(servers))
registry = servers["registry"]

listen = {r: "%s:%d" % (REGIONS[r][1], free_port()) for r in REGIONS}
eu_props = region_props("eu", servers["zk-eu"], registry, listen["eu"])
us_props = region_props("us", servers["zk-us"], registry, listen["us"])
eu_props["leafd.region.peers"] = "us=%s" % listen["us"]
us_props["leafd.region.peers"] = "eu=%s" % listen["eu"]
eu = env.leafd("eu1", eu_props)
us = env.leafd("us1", us_props)

log("a sequence created in eu is homed there; us redirects it")
st, body, _ = eu.get("/api/sequence", method="POST", body='{"name":"orders","start":100}')
check(st == 201, "POST /api/sequence orders on eu1: 201 (%d %s)" % (st, body))
check(wait_until(lambda: us.get("/api/sequence/get/orders")[0] == 307, 10),
      "us1 redirects orders to eu once it has read the home")
rc, out = leafctl(eu.conf, "move", "orders", "ap")
check(rc == 1 and "not one of leafd.region.peers" in out,
      "a move to a region that is not a peer is refused (%d %s)" % (rc, out[-200:]))

log("clients in both regions, the home moved under them")
hist = Histories()
clients = [Client(hist, "%s-%d" % (r, i), eu if r == "eu" else us, "orders")
           for r in ("eu", "us") for i in range(2)]
for c in clients:
    c.start()
time.sleep(1.5)
t_move = time.monotonic_ns()
rc, out = leafctl(eu.conf, "move", "orders", "us")
t_moved = time.monotonic_ns()
log("leafctl region move orders us: %d %s (%.0f ms)" % (rc, out, (t_moved - t_move) / 1e6))
check(rc == 0 and "moved from region eu" in out, "leafctl region move orders us: exit 0 (%s)" % out)
check(wait_until(lambda: all(any(s[2] == "us" for s in c.served) for c in clients), 10),
      "every client gets IDs from us after the move")
time.sleep(1.5)
for c in clients:
    c.stop_flag = True
for c in clients:
    c.join(15)

served = sorted(s for c in clients for s in c.served)
eu_ids = [i for s in served if s[2] == "eu" for i in s[3]]
us_ids = [i for s in served if s[2] == "us" for i in s[3]]
last_eu = max(s[1] for s in served if s[2] == "eu")
first_us = min(s[1] for s in served if s[2] == "us")
log("the move's pause as the clients saw it: last ID from eu -> first from us: %.0f ms "
    "(%d IDs from eu, %d from us; answers %r)"
    % ((first_us - last_eu) / 1e6, len(eu_ids), len(us_ids), [c.answers for c in clients]))
check(eu_ids and us_ids and max(eu_ids) < min(us_ids),
      "every ID us issued is above every ID eu issued (eu max %s, us min %s)"
      % (max(eu_ids or [0]), min(us_ids or [0])))
bad, text = hist.report()
log(text)
ok, failed, n = hist.counts()
check(not bad and n > 0, "order check: %d IDs, strictly increasing across the move, no repeat" % n)

log("the records and the registry")
check("us" in registry.cli("get", "/leafd-homes/it/sequence:orders"),
      "the registry homes orders in us")
mark = servers["zk-eu"].cli("get", "/leafd/it/sequences/orders")
check('"moved":"us"' in mark, "eu's record is marked moved to us (%s)" % mark.strip())
check(json.loads(mark.strip().splitlines()[-1])["max"] >= max(eu_ids),
      "the mark's max covers every ID eu issued (%s)" % mark.strip())
st, body, hdr = eu.get("/api/sequence/get/orders")
check(st == 307 and listen["us"] in hdr.get("Location", ""),
      "eu1 redirects orders to us (%d %r)" % (st, hdr.get("Location")))
check(us.get("/api/sequence/get/orders")[0] == 200, "us1 serves orders")
rc, out = leafctl(eu.conf, "move", "orders", "us")
check(rc == 0 and "homed in region us already" in out,
      "the move asked again: done already (%d %s)" % (rc, out[-200:]))

log("a move whose switch fails (the registry stopped) goes on where it stopped when asked again")
st, body, _ = eu.get("/api/sequence", method="POST", body='{"name":"bills","start":1}')
check(st == 201, "POST /api/sequence bills on eu1: 201 (%d %s)" % (st, body))
check(wait_until(lambda: us.get("/api/sequence/get/bills")[0] == 307, 10),
      "us1 redirects bills to eu")
before = eu.get_ids("/api/sequence/get/bills?count=5")
check(registry.proc.pause(), "the registry is stopped (SIGSTOP)")
rc, out = leafctl(eu.conf, "move", "bills", "us")
check(rc == 1 and "zookeeper_unavailable" in out,
      "the move with the registry stopped: refused after the mark (%d %s)" % (rc, out[-300:]))
st, body, _ = eu.get("/api/sequence/get/bills")
check(st == 503, "eu1 issues bills no more: marked, the home not switched (%d %s)" % (st, body))
registry.proc.p.send_signal(signal.SIGCONT)
rc, out = leafctl(eu.conf, "move", "bills", "us")
check(rc == 0 and ("moved from region eu" in out or "homed in region us already" in out),
      "asked again with the registry back: moved (%d %s)" % (rc, out[-300:]))
check(wait_until(lambda: us.get("/api/sequence/get/bills")[0] == 200, 10), "us1 serves bills")
after = us.get_ids("/api/sequence/get/bills?count=5")
check(min(after) > max(before), "bills in us goes on above eu's IDs (%r then %r)" % (before, after))
logs = {n.name: open(os.path.join(n.dir, "leafd.log")).read() for n in (eu, us)}
check("action=region_move object=orders status=200" in logs["eu1"] and
      "action=region_adopt object=orders status=200" in logs["us1"],
      "the audit lines name the move in both regions")
check("marked moved to region us" in logs["eu1"] and "moved home from region eu to region us"
      in logs["us1"], "the logs say what moved: eu's mark, us's switch of the home")
for n in (eu, us):
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
