"""Keyed spaces created on first use (docs/keyed-sequences.md, "The API"): with
leafd.sequence.autocreate = true, the first call for an unknown space creates it with the default
step 10000 and serves (HTTP and RESP); a bad space name is still refused and never created; two
nodes racing to create one space both serve it (the one that finds it exists reads it; the standby
redirects to the primary rather than refusing), and the space is created once. A node of another
cluster without autocreate answers an unknown space with 404 no_such_space / -NO_SUCH_SPACE naming
the space, and creates nothing. With auth, only a caller holding the create right creates the space
(one with ids alone gets no_such_space, and does not delay a creator after it). Every call that
takes IDs is recorded (tests/lib/ordercheck.py) and the history passes the order checker."""
import base64
import json
import os
import threading
import urllib.parse

from leafdtest import Env, check, http, log, wait_until
from ordercheck import History, verify
from zkhelpers import cli_list, zk_props

try:
    import redis
except ImportError:  # pragma: no cover - resp.cmake runs this with Debian's python3
    redis = None

env = Env()
zk = env.zookeeper()
HISTORY = os.path.join(env.dir, "history")
hist = History(HISTORY, "test")


def props(name, autocreate):
    return zk_props(zk.address(), name=name, **{
        "leafd.sequence.enable": "true", "leafd.zk.session.timeout.ms": "4000",
        "leafd.sequence.autocreate": "true" if autocreate else "false"})


def get_ids(node, space, key, follow=True):
    """GET /api/keyed/get/{space}/{key} (a 307 followed once): (status, IDs or the JSON error, the
    status of the first answer), recorded in the history."""
    path = "/api/keyed/get/%s/%s" % (space, urllib.parse.quote(key, safe=""))
    with hist.call("keyed:%s:%s" % (space, key)) as c:
        st, body, hdr = http(node.port, path)
        first_st = st
        if st == 307 and follow:
            port = int(urllib.parse.urlsplit(hdr.get("Location", "")).port or 0)
            st, body, hdr = http(port, path)
        if st == 200:
            c.values = ids = [int(x) for x in body.split("\n")]
        else:
            c.fail(st)
            ids = json.loads(body) if body.startswith("{") else body
    return st, ids, first_st


def spaces_of(node):
    st, body, _ = http(node.port, "/api/keyed")
    return {s["name"]: s for s in json.loads(body).get("spaces", [])} if st == 200 else {}


nodes = [env.leafd("a%d" % i, props("kac", True), resp=True, wait_ready=False) for i in range(2)]
off = env.leafd("off", props("kno", False), resp=True, wait_ready=False)
check(all(n.wait_ready(30) for n in nodes + [off]), "three nodes ready")


def role(n):
    return json.loads(n.get("/ready")[1])["sequence"]["role"]


check(wait_until(lambda: sum(role(n) == "primary" for n in nodes) == 1, 15), "a primary is elected")
check(wait_until(lambda: role(off) == "primary", 15), "the node without autocreate is its primary")
p = [n for n in nodes if role(n) == "primary"][0]
standby = [n for n in nodes if n is not p][0]

log("first use creates the space (step 10000) and serves it")
st, ids, _ = get_ids(p, "fresh", "conv1")
check(st == 200 and ids[0] >= 1, "the first call for an unknown space is served: %d %r" % (st, ids))
sp = spaces_of(p).get("fresh")
check(sp is not None and sp["step"] == 10000, "the space is created with step 10000: %r" % sp)
check("fresh" in (cli_list(zk, "/leafd/kac/keyed") or []), "ZooKeeper holds the space's node")
st2, ids2, _ = get_ids(p, "fresh", "conv1")
check(st2 == 200 and ids2[0] > ids[0], "the key goes on above: %r > %r" % (ids2, ids))
if redis is not None:
    rp = redis.Redis(port=p.resp_port)
    with hist.call("keyed:viaresp:k") as c:
        c.value = v = rp.incr("keyed:viaresp:k")
    check(v >= 1, "RESP INCR creates a space on first use too: %d" % v)
    with hist.call("keyed:viaresp:k") as c:
        c.value = v2 = rp.incrby("keyed:viaresp:k", 5)
    check(v2 == v + 5, "INCRBY goes on: %d" % v2)
    for bad, why in (("keyed:c h:x", "a bad space"), ("keyed:..:x", "the space '..'"),
                     ("keyed:a/b:x", "a space with /"), ("keyed:\xe9t\xe9:x", "odd bytes")):
        try:
            rp.incr(bad)
            check(False, "%s is refused" % why)
        except redis.exceptions.ResponseError as e:
            check(str(e).startswith("BAD_TAG"), "%s -> -BAD_TAG, nothing created: %s" % (why, e))
else:
    log("SKIP RESP: no redis-py")
for path in ("/api/keyed/get/c%20h/x", "/api/keyed/get/%2E%2E/x", "/api/keyed/get/" + "s" * 65 + "/x"):
    st, body, _ = http(p.port, path)
    check(st == 400 and "bad_tag" in body, "%s -> 400 bad_tag: %d %s" % (path, st, body))
names = cli_list(zk, "/leafd/kac/keyed") or []
check(all(n in ("fresh", "viaresp") for n in names), "no bad name was created: %r" % names)

log("two nodes race to create one space: both serve it, it is created once")
results = {}
gate = threading.Barrier(2 * 4)


def racer(node, i):
    gate.wait()
    results[(node.name, i)] = get_ids(node, "race", "k%d" % i)


threads = [threading.Thread(target=racer, args=(n, i)) for n in nodes for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join(60)
check(len(results) == 8 and all(r[0] == 200 for r in results.values()),
      "every racing call got IDs (the standby's through its 307): %r" % sorted(results.items()))
check(all(r[2] in (200, 307) for r in results.values()),
      "no node refused the space: %r" % sorted((k, r[2]) for k, r in results.items()))
check(all("race" in spaces_of(n) for n in nodes), "both nodes know the space")
created = sum(n.log_text().count("keyed space race created on first use") for n in nodes)
check(created == 1, "the space was created once (%d creates logged)" % created)
for i in range(4):
    st, ids, _ = get_ids(standby, "race", "k%d" % i)
    check(st == 200, "the standby's call for k%d is served through the primary: %d %r" % (i, st, ids))

log("without autocreate: 404 / -NO_SUCH_SPACE naming the space, nothing created")
st, body, _ = http(off.port, "/api/keyed/get/ghost/x")
j = json.loads(body) if body.startswith("{") else {}
check(st == 404 and j.get("code") == "no_such_space" and "ghost" in j.get("message", ""),
      "HTTP 404 no_such_space names the space: %d %s" % (st, body))
if redis is not None:
    try:
        redis.Redis(port=off.resp_port).incr("keyed:ghost:x")
        check(False, "an unknown space is refused")
    except redis.exceptions.ResponseError as e:
        check(str(e).startswith("NO_SUCH_SPACE") and "'ghost'" in str(e),
              "-NO_SUCH_SPACE names the space: %s" % e)
check("ghost" not in (cli_list(zk, "/leafd/kno/keyed") or []), "nothing was created")
st, ids, _ = get_ids(p, "fresh", "conv1")
check(st == 200 and ids[0] > ids2[0], "the autocreate node still serves its keys: %r" % ids)

log("with auth: autocreate needs the create right; a caller without it leaves the space unknown")
TOKEN = "keyed-autocreate-admin-token"
ADMIN = {"Authorization": "Bearer " + TOKEN}
a = env.leafd("auth", zk_props(zk.address(), name="kau", **{
    "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
    "leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0",
    "leafd.admin.token": TOKEN}), wait_ready=False)
check(a.wait_ready(30), "a node with auth on is ready")


def user(name, grant):
    st, body, _ = http(a.port, "/api/users", method="POST", headers=ADMIN,
                       body=json.dumps({"name": name, "grants": [grant]}))
    check(st == 201, "user %s with %s: %d %s" % (name, grant, st, body))
    secret = json.loads(body).get("secret", "") if st == 201 else ""
    h = {"Authorization": "Basic " + base64.b64encode(("%s:%s" % (name, secret)).encode()).decode()}
    # A new user is usable once the node has read it back from ZooKeeper (until then 401
    # unknown_user): wait for that on a space outside its grant (403, nothing created).
    check(wait_until(lambda: http(a.port, "/api/keyed/get/probe/x", headers=h)[0] == 403, 10),
          "user %s is known to the node (403 outside its grant, not 401)" % name)
    return h


reader = user("reader", "keyed:auto:*:ids")
maker = user("maker", "keyed:auto:*:ids,create")
check(wait_until(lambda: role(a) == "primary", 15), "the auth node is its primary")
st, body, _ = http(a.port, "/api/keyed/get/auto/x", headers=reader)
check(st == 404 and "no_such_space" in body, "ids alone: the space stays unknown: %d %s" % (st, body))
with hist.call("keyed:auto:x") as c:
    st, body, _ = http(a.port, "/api/keyed/get/auto/x", headers=maker)
    if st == 200:
        c.value = int(body)
    else:
        c.fail(st)
check(st == 200 and int(body) >= 1,
      "create: the space is created at once, though a reader found it absent just before: %d %s"
      % (st, body))
with hist.call("keyed:auto:x") as c:
    st, body2, _ = http(a.port, "/api/keyed/get/auto/x", headers=reader)
    if st == 200:
        c.value = int(body2)
    else:
        c.fail(st)
check(st == 200 and int(body2) > int(body or 0), "then the reader is served above: %d %s" % (st, body2))

hist.close()
ok, text = verify(HISTORY)
log(text)
check(ok and "0 violations" in text, "the calls' history passes the order checker: %s" % text)
env.finish()
