"""Sequences on three real nodes and a real ZooKeeper: one primary elected,
standbys redirect (HTTP 307 with Location and the JSON shape, RESP -MOVED
with the key's slot), IDs strictly increase across nodes and protocols,
POST /api/sequence creates (201, 409), autocreate off answers 404
unknown_sequence, GET sequence:<name> gives the last ID, CLUSTER SLOTS and
NODES describe the primary and its replicas, redis-py's RedisCluster and
ioredis' Cluster follow the primary, a demotion hands over in well under a
second, and zk-inspect shows the line and the persisted max. The failover
and partition cases are in test_sequence_failover*.py. Every call that takes IDs is recorded
(tests/lib/ordercheck.py's History) and the history passes the order checker."""
import json
import os
import subprocess
import time

from leafdtest import Env, check, http, log, wait_until
from ordercheck import History, verify
from zkhelpers import zk_props

try:
    import redis
    from redis.cluster import RedisCluster
except ImportError:  # pragma: no cover - resp.cmake runs this with Debian's python3
    redis = None

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

env = Env()
zk = env.zookeeper()
HISTORY = os.path.join(env.dir, "history")
hist = History(HISTORY, "test")
KEY = "sequence:orders"


def took(c, st, body):
    """What one HTTP call took: its IDs, or a failure (kept in the history, holds no ID)."""
    if st == 200:
        c.values = body.split("\n")
    else:
        c.fail(st)


def props(**extra):
    p = zk_props(zk.address(), name="sq", **{
        "leafd.sequence.enable": "true", "leafd.sequence.batch": "100",
        "leafd.zk.session.timeout.ms": "4000"})
    p.update(extra)
    return p


nodes = [env.leafd("n%d" % i, props(), resp=True, wait_ready=False) for i in range(3)]
check(all(n.wait_ready(30) for n in nodes), "three nodes ready")


def role(n):
    st, body, _ = n.get("/ready")
    return json.loads(body)["sequence"]["role"]


def primary():
    for n in nodes:
        if n.proc and role(n) == "primary":
            return n
    return None


check(wait_until(lambda: primary() is not None, 10), "a primary is elected")
p = primary()
standbys = [n for n in nodes if n is not p]
check(sum(role(n) == "primary" for n in nodes) == 1, "exactly one primary")
log("primary n%s on %d" % (p.name, p.port))

log("create, 409, unknown without autocreate")
st, body, _ = http(p.port, "/api/sequence", method="POST", body='{"name":"orders","start":1000}')
check(st == 201, "POST /api/sequence -> 201: %d %s" % (st, body))
st, body, _ = http(standbys[0].port, "/api/sequence", method="POST", body='{"name":"orders","start":5}')
check(st == 409 and json.loads(body)["code"] == "sequence_exists", "again -> 409: %d %s" % (st, body))
st, body, _ = http(p.port, "/api/sequence", method="POST", body='{"name":"bad/name"}')
check(st == 400, "a bad name -> 400: %d" % st)
st, body, _ = p.get("/api/sequence/get/nope")
check(st == 404 and json.loads(body)["code"] == "unknown_sequence", "unknown -> 404: %d %s" % (st, body))

log("IDs from the primary, redirects from the standbys")
with hist.call(KEY) as c:
    st, body, _ = p.get("/api/sequence/get/orders")
    took(c, st, body)
check(st == 200 and body == "1000", "first ID is the start: %d %r" % (st, body))
with hist.call(KEY) as c:
    st, body, _ = p.get("/api/sequence/get/orders?count=5")
    took(c, st, body)
check(st == 200 and body.split("\n") == [str(i) for i in range(1001, 1006)], "count=5 consecutive: %r" % body)
st, body, hdr = standbys[0].get("/api/sequence/get/orders?count=2")
j = json.loads(body)
check(st == 307 and j["code"] == "not_primary" and j["primary"] == "127.0.0.1:%d" % p.port,
      "standby -> 307 not_primary naming the primary: %d %s" % (st, body))
check(hdr.get("Location") == "http://127.0.0.1:%d/api/sequence/get/orders?count=2" % p.port,
      "Location keeps path and query: %s" % hdr.get("Location"))

if redis is not None:
    rp = redis.Redis(port=p.resp_port)
    rs = redis.Redis(port=standbys[0].resp_port)
    with hist.call(KEY) as c:
        c.value = a = rp.incr("sequence:orders")
    with hist.call(KEY) as c:
        b = rp.incrby("sequence:orders", 10)
        c.values = range(b - 9, b + 1)  # INCRBY N takes N IDs and answers the last
    with hist.call(KEY) as c:
        c.values = ids = [int(x) for x in rp.execute_command("LEAF.IDS", "sequence:orders", 3)]
    check(a == 1006 and b == 1016 and ids == [1017, 1018, 1019], "INCR, INCRBY, LEAF.IDS: %r %r %r" % (a, b, ids))
    check(int(rp.get("sequence:orders")) == 1019, "GET gives the last ID")
    try:
        with hist.call(KEY):  # a failed call: kept in the history, holds no ID
            rs.incr("sequence:orders")
        check(False, "a standby answers -MOVED")
    except redis.exceptions.ResponseError as e:
        check(str(e) == "MOVED %d 127.0.0.1:%d" % (int(rp.execute_command("CLUSTER", "KEYSLOT", "sequence:orders")), p.resp_port),
              "standby -> MOVED <slot> primary: %s" % e)
    # The view of the line is re-read every second: wait until it holds all three.
    wait_until(lambda: len(rs.execute_command("CLUSTER", "SLOTS")[0]) == 5, 5)
    slots = rs.execute_command("CLUSTER", "SLOTS")
    check(len(slots) == 1 and slots[0][0] == 0 and slots[0][1] == 16383 and slots[0][2][1] == p.resp_port
          and len(slots[0]) == 5, "CLUSTER SLOTS: the primary owns 0-16383, two replicas: %r" % slots)
    nodes_txt = rs.execute_command("CLUSTER", "NODES")
    nodes_txt = nodes_txt.decode() if isinstance(nodes_txt, bytes) else nodes_txt
    check(nodes_txt.count("master") == 1 and nodes_txt.count("slave") == 2 and "myself,slave" in nodes_txt,
          "CLUSTER NODES: one master, two slaves: %r" % nodes_txt)
    rc = RedisCluster(host="127.0.0.1", port=standbys[1].resp_port)
    with hist.call(KEY) as c:
        c.value = c1 = rc.execute_command("INCR", "sequence:orders")
    with hist.call(KEY) as c:
        c.value = c2 = rc.execute_command("INCR", "sequence:orders")
    check(1019 < int(c1) < int(c2), "redis-py RedisCluster through a standby reaches the primary: %r %r" % (c1, c2))
    rc.close()

node_dir = os.environ.get("LEAFD_NODE_DIR")
if node_dir and os.path.isdir(os.path.join(node_dir, "node_modules", "ioredis")):
    script = """
const Redis = require("ioredis");
const c = new Redis.Cluster([{host: "127.0.0.1", port: %d}]);
(async () => { const a = await c.incr("sequence:orders"); const b = await c.incr("sequence:orders");
  console.log(JSON.stringify([Number(a), Number(b)])); c.disconnect(); })().catch(e => { console.log("ERR " + e); process.exit(1); });
""" % standbys[0].resp_port
    t_node = time.monotonic_ns()
    r = subprocess.run(["node", "-e", script], cwd=node_dir, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules")))
    try:
        a, b = json.loads(r.stdout.strip().splitlines()[-1])
        # Both calls were made while the node process ran: each is recorded over its lifetime.
        hist.record(KEY, t_node, time.monotonic_ns(), a, who="ioredis")
        hist.record(KEY, t_node, time.monotonic_ns(), b, who="ioredis")
        check(a < b, "ioredis Cluster through a standby reaches the primary: %s" % r.stdout.strip())
    except (ValueError, IndexError):
        check(False, "ioredis Cluster: %s %s" % (r.stdout, r.stderr[-300:]))
else:
    log("SKIP ioredis Cluster: no ioredis in LEAFD_NODE_DIR (test_resp_clients installs it)")

log("strict order across a demotion")
with hist.call(KEY) as c:
    c.value = before = int(p.get("/api/sequence/get/orders")[1])
t0 = time.monotonic()
st, body, _ = http(p.port, "/api/cluster/demote", method="POST", body="")
check(st == 200, "demote -> 200: %d %s" % (st, body))
new = None
while time.monotonic() - t0 < 5:
    for n in nodes:
        with hist.call(KEY, who=n.name) as c:
            st, body, _ = n.get("/api/sequence/get/orders")
            took(c, st, body)
        if st == 200:
            new = (n, int(body))
            break
    if new:
        break
    time.sleep(0.005)
took = time.monotonic() - t0
check(new is not None and new[0] is not p, "another node serves after the demotion")
check(new is not None and new[1] > before, "its ID is larger than every earlier one: %r > %d" % (new and new[1], before))
log("handover after demote: %.0f ms" % (took * 1000))
check(took < 1.0, "handover under a second (measured %.0f ms)" % (took * 1000))
check(role(p) == "standby", "the demoted node is a standby")

log("zk-inspect shows the line and the persisted max")
r = subprocess.run([os.path.join(ROOT, "tools", "programs", "zk-inspect"), zk.address(), "sq"], capture_output=True,
                   text=True, timeout=90)
check("sequences of sq: 3 node(s) in line" in r.stdout and "sequence orders" in r.stdout,
      "zk-inspect: %s %s" % (r.stdout[-400:], r.stderr[-200:]))

hist.close()
ok, text = verify(HISTORY)
log(text)
check(ok, "the calls' history passes the order checker: %s" % text)

st, body, _ = p.get("/metrics")
check("leafd_sequence_primary 0" in body and "leafd_sequence_demotions_total 1" in body,
      "metrics: demoted node is not primary, one demotion")
env.finish()
