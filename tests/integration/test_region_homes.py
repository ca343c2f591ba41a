"""Home regions (docs/regions.md, "Homes"): two regions on loopback, each with its own ZooKeeper
and MariaDB, a registry beside them, sequences on in both. Region eu (ID 0) on 127.0.1.1, us
(ID 1) on 127.0.2.1; us reaches eu through a TCP proxy (leafd.region.peers), so the link
between the regions can be cut.

- a sequence created in eu is homed there (keyed spaces and numberings as well) (its claim in the registry); us redirects it: HTTP
  307 with Location at eu's node, RESP -MOVED; a create in us naming eu is redirected there, a
  create in us of a name eu holds is refused (409, naming eu); autocreate in us of a name eu
  claimed first redirects (the registry's create is the fence);
- clients in both regions, those in us following the redirect: every call's IDs pass the order
  checker (tests/lib/ordercheck.py): strictly increasing, no repeats, across both regions;
- the link cut (the proxy blackholed): us answers 503 home_region_unreachable for eu's
  sequences (HTTP and RESP), while snowflake and segment IDs never fail in either region; the
  link healed: us redirects again and the IDs follow on, in order.
"""
import json
import os
import re
import subprocess
import threading
import time

from leafdtest import Env, RespStream, check, free_port, http, log, seg_props, wait_until
from ordercheck import Histories
from regionservers import start_region_servers
from tcpproxy import Proxy

REGIONS = {"eu": (0, "127.0.1.1"), "us": (1, "127.0.2.1")}
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def region_props(name, zk, db, registry, peers):
    rid, ip = REGIONS[name]
    return seg_props(db, **{
        "leaf.name": "it", "leaf.snowflake.enable": "true",
        "leaf.snowflake.zk.address": zk.address(),
        "leafd.snowflake.advertise.ip": ip, "leafd.snowflake.layout": "twitter",
        "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
        "leafd.region": name, "leafd.region.id": str(rid), "leafd.region.count": "2",
        "leafd.region.registry.zk.address": registry.address(), "leafd.region.peers": peers,
        "leafd.listen": "%s:%d" % (ip, free_port()),
        "leafd.resp.listen": "127.0.0.1:%d" % free_port()})


def seq_call(hist, who, node, name, count):
    """One sequence call to node, following one redirect to the home region, recorded in hist.
    Returns the first answer's status and code."""
    path = "/api/sequence/get/%s?count=%d" % (name, count)
    start = time.monotonic_ns()
    try:
        st, body, hdr = node.get(path, timeout=5)
        first_st = st
        code = json.loads(body).get("code", "") if st != 200 and body.startswith("{") else ""
        if st == 307:
            loc = hdr.get("Location", "")
            hostport, rest = loc[len("http://"):].split("/", 1)
            host, port = hostport.rsplit(":", 1)
            st, body, _ = http(int(port), "/" + rest, host=host, timeout=5)
    except OSError as e:
        hist.add(who, name, start, time.monotonic_ns(), error=str(e))
        return None, "error"
    end = time.monotonic_ns()
    if st == 200:
        ids = [int(x) for x in body.split("\n")]
        hist.add(who, name, start, end, ids=ids)
    else:
        hist.add(who, name, start, end, error="%d %s" % (st, body[:80]))
    return first_st, code


class SeqClient(threading.Thread):
    """Asks one node for a sequence until stopped; counts the first answers by status."""

    def __init__(self, hist, who, node, name):
        super().__init__(daemon=True)
        self.hist, self.who, self.node, self.name = hist, who, node, name
        self.answers, self.stop_flag = {}, False

    def run(self):
        while not self.stop_flag:
            st, code = seq_call(self.hist, self.who, self.node, self.name, 5)
            key = "%s %s" % (st, code)
            self.answers[key] = self.answers.get(key, 0) + 1
            if st != 200 and st != 307:
                time.sleep(0.05)


class IdClient(threading.Thread):
    """Pulls snowflake or segment IDs from one node until stopped; keeps every error."""

    def __init__(self, node, path):
        super().__init__(daemon=True)
        self.node, self.path = node, path
        self.ids, self.errors, self.stop_flag = [], [], False

    def run(self):
        while not self.stop_flag:
            st, body, _ = self.node.get(self.path, timeout=5)
            if st != 200:
                self.errors.append("%d %s" % (st, body[:120]))
                time.sleep(0.05)
                continue
            self.ids += [int(x) for x in body.split("\n")]


env = Env()
servers = start_region_servers(env)
registry = servers["registry"]

# eu reaches us directly; us reaches eu's HTTP through the proxy (the link that is cut).
us_props = region_props("us", servers["zk-us"], servers["db-us"], registry, "")
eu_props = region_props("eu", servers["zk-eu"], servers["db-eu"], registry,
                        "us=%s/%s" % (us_props["leafd.listen"], us_props["leafd.resp.listen"]))
proxy = Proxy(target=(REGIONS["eu"][1], int(eu_props["leafd.listen"].rsplit(":", 1)[1])))
eu = env.leafd("eu1", eu_props)
us_props["leafd.region.peers"] = "eu=127.0.0.1:%d/%s" % (proxy.port, eu_props["leafd.resp.listen"])
us = env.leafd("us1", us_props)

log("a sequence created in eu is homed there; us redirects it")
st, body, _ = eu.get("/api/sequence", method="POST", body='{"name":"orders","start":100}')
check(st == 201, "POST /api/sequence orders on eu1: 201 (%d %s)" % (st, body))
check("eu" in registry.cli("get", "/leafd-homes/it/sequence:orders"),
      "the registry holds the home: /leafd-homes/it/sequence:orders = eu")
check(wait_until(lambda: us.get("/api/sequence/get/orders")[0] == 307, 10),
      "us1 redirects orders once it has read the home")
st, body, hdr = us.get("/api/sequence/get/orders?count=2")
check(st == 307 and hdr.get("Location") == "http://127.0.0.1:%d/api/sequence/get/orders?count=2"
      % proxy.port, "307 with Location at eu's node (%d %r)" % (st, hdr.get("Location")))
rs = RespStream(us.resp_port)
moved = str(rs.call("INCR", "sequence:orders"))
check(moved.startswith("MOVED") and eu_props["leafd.resp.listen"] in moved,
      "RESP INCR sequence:orders on us1: -MOVED to eu's RESP address (%r)" % moved)

st, body, hdr = us.get("/api/sequence", method="POST", body='{"name":"invoices","region":"eu"}')
check(st == 307 and hdr.get("Location") == "http://127.0.0.1:%d/api/sequence" % proxy.port,
      "a create on us1 naming region eu is redirected there (%d %s)" % (st, body))
st, body, _ = http(proxy.port, "/api/sequence", method="POST",
                   body='{"name":"invoices","region":"eu"}')
check(st == 201, "the create, resent to eu, is made there (%d %s)" % (st, body))
st, body, _ = us.get("/api/sequence", method="POST", body='{"name":"orders"}')
check(st == 409 and "homed in region eu" in body,
      "a create on us1 of a name eu holds: 409 naming eu (%d %s)" % (st, body))
st, body, _ = us.get("/api/sequence", method="POST", body='{"name":"x","region":"ap"}')
check(st == 400 and "ap" in body, "a create naming an unknown region: 400 (%d %s)" % (st, body))
check(eu.get("/api/sequence/get/fresh")[0] == 200, "eu1 autocreates fresh (claimed for eu)")
st, body, _ = us.get("/api/sequence/get/fresh")
check(st == 307, "us1's autocreate of fresh finds eu's claim: 307, not a second sequence (%d %s)"
      % (st, body))
check(us.get("/api/sequence/get/local")[0] == 200, "us1 autocreates local (claimed for us)")
st, body, hdr = eu.get("/api/sequence/get/local")
check(st == 307 and us_props["leafd.listen"] in hdr.get("Location", ""),
      "eu1 redirects local to us (%d %r)" % (st, hdr.get("Location")))

r = json.loads(us.get("/ready")[1])["region"]
check(r["peers"][0]["answers"] is True and r["homes"] >= 3,
      "us1's /ready: eu answers, the homes known (%r)" % r)

log("keyed spaces and numberings are homed the same way")
st, body, _ = eu.get("/api/keyed", method="POST", body='{"name":"chat","step":100}')
check(st == 201, "POST /api/keyed chat on eu1: 201 (%d %s)" % (st, body))
check(wait_until(lambda: us.get("/api/keyed/get/chat/room1")[0] == 307, 10),
      "us1 redirects the keyed space chat homed in eu")
check(len(eu.get_ids("/api/keyed/get/chat/room1")) == 1, "eu1 issues chat's keys")
st, body, _ = us.get("/api/numbering", method="POST",
                     body='{"name":"inv","prefix":"U","date":"","width":4,"period":"never",'
                          '"time_zone":"UTC"}')
check(st == 201, "POST /api/numbering inv on us1 (homed in us): 201 (%d %s)" % (st, body))
st, body, _ = us.get("/api/number/get/inv")
check(st == 200 and body.startswith("U"), "us1 issues inv's numbers (%d %s)" % (st, body))
check(wait_until(lambda: eu.get("/api/number/get/inv")[0] == 307, 10),
      "eu1 redirects the numbering inv homed in us")

out = subprocess.run([os.path.join(ROOT, "tools", "programs", "zk-inspect"), registry.address(),
                      "it", "regions"], capture_output=True, text=True, timeout=120).stdout
check(re.search(r"sequence +orders +eu", out) and re.search(r"numbering +inv +us", out) and
      re.search(r"keyed +chat +eu", out), "zk-inspect ... regions lists the homes: %r" % out)

log("clients in both regions, then the link cut, then healed")
hist = Histories()
seq = [SeqClient(hist, "eu-%d" % i, eu, "orders") for i in range(2)] + \
      [SeqClient(hist, "us-%d" % i, us, "orders") for i in range(2)]
ids = [IdClient(n, p) for n in (eu, us)
       for p in ("/api/snowflake/get/k?count=20", "/api/segment/get/orders?count=20")]
for c in seq + ids:
    c.start()
time.sleep(2)
before = dict(seq[2].answers)
proxy.blackhole()
cut = wait_until(lambda: "503 home_region_unreachable" in seq[2].answers, 10)
check(cut, "during the cut us1 answers 503 home_region_unreachable (%r)" % seq[2].answers)
st, body, _ = us.get("/api/sequence/get/orders")
check(st == 503 and "homed in region eu" in body, "the 503 names the home region: %s" % body)
st, body, _ = us.get("/ready")
peers = json.loads(body).get("region", {}).get("peers")
check(st == 200 and peers == [{"name": "eu", "http": "127.0.0.1:%d" % proxy.port, "answers": False}],
      "us1 stays ready; /ready shows eu not answering (%d %r)" % (st, peers))
unreachable = str(rs.call("INCR", "sequence:orders"))
check(unreachable.startswith("HOME_REGION_UNREACHABLE"),
      "RESP during the cut: -HOME_REGION_UNREACHABLE (%r)" % unreachable)
rs.close()
time.sleep(1)
proxy.heal()
healed_at = sum(seq[2].answers.values())
check(wait_until(lambda: us.get("/api/sequence/get/orders")[0] == 307, 10),
      "after the cut us1 redirects again")
wait_until(lambda: seq[2].answers.get("307 not_primary", 0) >
           before.get("307 not_primary", 0) + 5, 10)
time.sleep(1)
for c in seq + ids:
    c.stop_flag = True
for c in seq + ids:
    c.join(15)
log("answers on us1: before the cut %r, in all %r (%d calls after the heal began)"
    % (before, seq[2].answers, sum(seq[2].answers.values()) - healed_at))
for c in seq:
    check(c.answers.get("200 " if c.node is eu else "307 not_primary", 0) > 0,
          "%s got IDs (%r)" % (c.who, c.answers))
bad, text = hist.report()
log(text)
ok, failed, n = hist.counts()
check(not bad and n > 0, "order check: %d IDs, strictly increasing across both regions, no repeat"
      % n)
for c in ids:
    check(not c.errors and len(c.ids) > 0 and len(set(c.ids)) == len(c.ids),
          "%s %s never failed, cut or not (%d IDs, %r)" % (c.node.name, c.path.split("/")[2],
                                                           len(c.ids), c.errors[:2]))
for n in (eu, us):
    check(n.stop() == 0, "%s stops cleanly" % n.name)
proxy.close()
env.finish()
