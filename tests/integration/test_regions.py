"""Two regions on loopback (docs/regions.md), each with its own ZooKeeper and MariaDB, and a
registry ZooKeeper beside them: region eu (ID 0) on 127.0.1.1, region us (ID 1) on 127.0.2.1.

- snowflake, segment and UUIDv7 clients in both regions at once: 0 duplicates across the regions
  in every mode, although both regions hold worker ID 0 and both tables start at max_id 1; a
  region's segment IDs are its residue (id mod 2 == region ID) and ascend per client;
- the registry stopped for part of the load: IDs keep flowing in both regions;
- a region restarted while the registry is down starts from its cached claim;
- a new node of a region with no cached claim, the registry down: not ready (the reason names
  the registry), ID requests 503 region_unclaimed; ready once the registry is back;
- a third region configured with an ID another region holds: refused at start, naming both;
  a node with another leafd.region.count: refused, naming both counts;
- /decodeSnowflakeId names the region, /ready and the metrics show it, ranges are refused.
"""
import json
import os
import re
import subprocess
import threading
import time

from leafdtest import Env, RespStream, check, free_port, log, seg_props, wait_until

REGIONS = {"eu": (0, "127.0.1.1"), "us": (1, "127.0.2.1")}
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def region_props(name, zk, db, registry, **extra):
    rid, ip = REGIONS.get(name, (1, "127.0.3.1"))
    p = seg_props(db, **{
        "leaf.name": "it", "leaf.snowflake.enable": "true",
        "leaf.snowflake.zk.address": zk.address(),
        "leafd.snowflake.advertise.ip": ip, "leafd.snowflake.layout": "twitter",
        "leafd.region": name, "leafd.region.id": str(rid), "leafd.region.count": "2",
        "leafd.region.registry.zk.address": registry.address()})
    p.update(extra)
    return p


class Client(threading.Thread):
    """Pulls batches of one mode from one node until stopped; keeps every ID and every error."""

    def __init__(self, node, path, parse):
        super().__init__(daemon=True)
        self.node, self.path, self.parse = node, path, parse
        self.batches, self.errors, self.stop_flag = [], [], False

    def run(self):
        while not self.stop_flag:
            st, body, _ = self.node.get(self.path, timeout=5)
            if st != 200:
                self.errors.append("%d %s" % (st, body[:200]))
                time.sleep(0.05)
                continue
            self.batches.append([self.parse(x) for x in body.split("\n")])


def uuid_key(u):
    return int(u.replace("-", ""), 16)


def load(nodes, seconds, during=None):
    clients = []
    for n in nodes:
        clients += [Client(n, "/api/snowflake/get/k?count=50", int),
                    Client(n, "/api/segment/get/orders?count=50", int),
                    Client(n, "/api/uuid/get/k?count=20", str)]
    for c in clients:
        c.start()
    if during:
        during()
    time.sleep(seconds)
    for c in clients:
        c.stop_flag = True
    for c in clients:
        c.join(15)
    return clients


def check_load(clients, what):
    by_mode = {}
    for c in clients:
        mode = c.path.split("/")[2]
        check(not c.errors, "%s: %s on %s: no errors (%r)" % (what, mode, c.node.name, c.errors[:2]))
        flat = [i for b in c.batches for i in b]
        key = uuid_key if mode == "uuid" else (lambda x: x)
        check(len(flat) > 0 and all(key(a) < key(b) for a, b in zip(flat, flat[1:])),
              "%s: %s on %s: %d IDs, ascending" % (what, mode, c.node.name, len(flat)))
        if mode == "segment":
            rid = REGIONS[c.node.props["leafd.region"]][0]
            check(all(i % 2 == rid for i in flat),
                  "%s: segment IDs of %s are its residue (id mod 2 == %d)" % (what, c.node.name, rid))
        by_mode.setdefault(mode, []).extend(flat)
    log("%s: %s" % (what, ", ".join("%s %d IDs" % (m, len(v)) for m, v in sorted(by_mode.items()))))
    for mode, ids in sorted(by_mode.items()):
        dupes = len(ids) - len(set(ids))
        check(dupes == 0, "%s: %s: 0 duplicates across the regions among %d IDs (%d)"
              % (what, mode, len(ids), dupes))
    return by_mode


env = Env()
# The five servers start side by side: most of a start is waiting on a JVM or mariadb-install-db.
servers = {}
starts = [threading.Thread(target=lambda k=k, f=f: servers.__setitem__(k, f(name=k)))
          for k, f in (("registry", env.zookeeper), ("zk-eu", env.zookeeper),
                       ("zk-us", env.zookeeper), ("db-eu", env.mariadb), ("db-us", env.mariadb))]
for t in starts:
    t.start()
for t in starts:
    t.join(120)
check(len(servers) == 5, "the registry, two ZooKeepers and two MariaDBs start (%s)" % sorted(servers))
registry = servers["registry"]
zk = {"eu": servers["zk-eu"], "us": servers["zk-us"]}
db = {"eu": servers["db-eu"], "us": servers["db-us"]}
for d in db.values():  # both regions' tables start at 1: only the residues keep them apart
    d.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('orders', 1, 100)")


def node(name, region, **kw):
    p = region_props(region, zk[region], db[region], registry)
    p["leafd.listen"] = "%s:%d" % (REGIONS[region][1], free_port())
    return env.leafd(name, p, **kw)


eu = node("eu1", "eu")
us = node("us1", "us", resp=True)

log("the claims are in the registry, and /ready names the region")
for n, region in ((eu, "eu"), (us, "us")):
    rid = REGIONS[region][0]
    got = registry.cli("get", "/leafd-regions/it/%d" % rid)
    check(region in got, "/leafd-regions/it/%d holds %s (%r)" % (rid, region, got[-80:]))
    st, body, _ = n.get("/ready")
    r = json.loads(body)
    check(st == 200 and r.get("region", {}).get("name") == region and
          r["region"]["claim"] == "registry", "%s /ready: region %s, claim from the registry" % (n.name, region))
    st, body, _ = n.get("/metrics")
    check('leafd_region_info{region="%s",region_id="%d",count="2"} 1' % (region, rid) in body and
          'leafd_ready{component="region"} 1' in body, "%s: the metrics name the region" % n.name)
    st, body, _ = n.get("/api/segment/range/orders?count=10")
    check(st == 400 and "not_consecutive" in body, "%s: a range of segment IDs is refused (%d)" % (n.name, st))
rs = RespStream(us.resp_port)
one, block, many = rs.call("INCR", "segment:orders"), rs.call("INCRBY", "segment:orders", "5"), \
    rs.call("LEAF.IDS", "segment:orders", "3")
check(isinstance(one, int) and one % 2 == 1 and all(i % 2 == 1 for i in many),
      "RESP: us's segment IDs are odd (%r, %r)" % (one, many))
check(str(block).startswith("WRONG_MODE"), "RESP: INCRBY of a block is refused (%r)" % block)
rs.close()
sf = eu.get_ids("/api/snowflake/get/k")[0]
st, body, _ = us.get("/decodeSnowflakeId?snowflakeId=%d" % sf)
check(st == 200 and '"regionId":"0","region":"eu"' in body, "/decodeSnowflakeId names eu's region: %s" % body)
st, body, _ = eu.get("/api/uuid/get/k")
st, body, _ = us.get("/decodeUuid?uuid=" + body.strip())
check(st == 200 and '"regionId":"0","region":"eu"' in body and '"leafd":true' in body,
      "/decodeUuid names eu's region and takes the UUID as the cluster's: %s" % body)

out = subprocess.run([os.path.join(ROOT, "tools", "programs", "zk-inspect"), registry.address(),
                      "it", "regions"], capture_output=True, text=True, timeout=120).stdout
check("regions of it: count=2, 2 claimed" in out and re.search(r"region ID 0 +eu", out) and
      re.search(r"region ID 1 +us", out), "zk-inspect ... regions lists the claims: %r" % out)

log("both regions under load, then the registry stopped under load")
first = check_load(load([eu, us], 3), "registry up")
second = check_load(load([eu, us], 3, during=registry.stop), "registry down")
for mode in first:
    ids = first[mode] + second[mode]
    check(len(ids) == len(set(ids)), "%s: 0 duplicates over both rounds (%d IDs)" % (mode, len(ids)))
worker = {n.name: json.loads(n.get("/ready")[1])["snowflake"]["worker_id"] for n in (eu, us)}
log("worker IDs %r (each region's own ZooKeeper)" % worker)

log("a region restarted while the registry is down starts from its cached claim")
check(eu.stop() == 0, "eu1 stops cleanly")
eu.start(wait_ready=True, timeout=30)
r = json.loads(eu.get("/ready")[1])
check(r["region"]["claim"] == "cache", "eu1 serves on its cached claim (%r)" % r.get("region"))
check(len(eu.get_ids("/api/segment/get/orders?count=5")) == 5, "eu1 issues segment IDs")

log("a new node of a region, no cached claim, the registry down: waits, not ready")
eu2 = node("eu2", "eu", wait_ready=False)
check(wait_until(lambda: eu2.get("/ready")[0] == 503 and
                 "region" in json.loads(eu2.get("/ready")[1]), 20),
      "eu2 starts not ready, with a region member in /ready")
st, body, _ = eu2.get("/ready")
check("registry" in body and "unreachable" in body, "/ready says why: %s" % body[-300:])
st, body, _ = eu2.get("/api/snowflake/get/k")
check(st == 503 and "region_unclaimed" in body, "eu2 issues nothing: %d %s" % (st, body[:120]))
check("no claim confirmed earlier" in eu2.log_text(), "eu2's log says why it waits")
registry.start()
check(eu2.wait_ready(20), "eu2 becomes ready once the registry is back")
check(len(eu2.get_ids("/api/snowflake/get/k?count=3")) == 3, "eu2 issues IDs")

log("a third region configured with an ID another region holds is refused at start")
ap = region_props("ap", zk["us"], db["us"], registry)
ap["leafd.listen"] = "127.0.3.1:%d" % free_port()
third = env.leafd("ap1", ap, wait_ready=False)
rc = third.wait_exit(30)
text = third.log_text()
check(rc == 1, "ap1 exits 1 (rc %r)" % rc)
check("claimed by region us" in text and "region ap" in text,
      "ap1's log names both regions: %s" % [l for l in text.splitlines() if "claimed" in l][:1])

log("a region configured with another count is refused at start")
recount = region_props("eu", zk["eu"], db["eu"], registry, **{"leafd.region.count": "3"})
recount["leafd.listen"] = "127.0.1.1:%d" % free_port()
fourth = env.leafd("eu3", recount, wait_ready=False)
rc = fourth.wait_exit(30)
check(rc == 1 and "leafd.region.count is 3 here, but the registry records 2" in fourth.log_text(),
      "eu3 (count 3) exits 1 naming both counts (rc %r)" % rc)

for n in (eu, eu2, us):
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
