"""Keyed sequences on three real nodes and a real ZooKeeper (docs/keyed-sequences.md, "The API"):
POST /api/keyed creates a space (201, 409 again, 400 for a bad name or step), GET /api/keyed lists
it; GET /api/keyed/get/{space}/{key}, RESP INCR and INCRBY keyed:<space>:<key> issue; every key's
first ID is >= 1 and each key's IDs strictly increase across nodes and protocols; percent-encoded
keys with odd bytes reach the key RESP names with the same bytes; a standby redirects (307 with
Location, -MOVED with the slot of the whole RESP key); the errors (no_such_space, bad keys, bad
counts) come from the one error table; the per-space metrics count. Then one node with auth on:
a keyed:<space>:* grant gives a user the space's keys and no other space's. Every call that takes
IDs is recorded (tests/lib/ordercheck.py) and the history passes the order checker."""
import base64
import json
import os
import time
import urllib.parse

from leafdtest import Env, check, http, log, wait_until
from ordercheck import History, verify
from zkhelpers import zk_props

try:
    import redis
except ImportError:  # pragma: no cover - resp.cmake runs this with Debian's python3
    redis = None

TOKEN = "keyed-admin-token-for-the-test"
ADMIN = {"Authorization": "Bearer " + TOKEN}

env = Env()
zk = env.zookeeper()
HISTORY = os.path.join(env.dir, "history")
hist = History(HISTORY, "test")


def hkey(space, key):
    """The history's name of a key (its bytes in hex: a key may hold any byte)."""
    return "keyed:%s:%s" % (space, key.hex())


def props(**extra):
    p = zk_props(zk.address(), name="kb", **{
        "leafd.sequence.enable": "true", "leafd.zk.session.timeout.ms": "4000"})
    p.update(extra)
    return p


def get_ids(node, space, key, count=None, record=True):
    """GET /api/keyed/get/{space}/{key}: (status, IDs or the JSON error, headers), recorded."""
    path = "/api/keyed/get/%s/%s" % (space, urllib.parse.quote(key, safe=""))
    if count is not None:
        path += "?count=%d" % count
    with hist.call(hkey(space, key)) as c:
        st, body, hdr = http(node.port, path)
        if st == 200:
            c.values = ids = [int(x) for x in body.split("\n")]
        else:
            c.fail(st)
            ids = json.loads(body) if body.startswith("{") else body
    return st, ids, hdr


nodes = [env.leafd("n%d" % i, props(), resp=True, wait_ready=False) for i in range(3)]
check(all(n.wait_ready(30) for n in nodes), "three nodes ready")


def role(n):
    return json.loads(n.get("/ready")[1])["sequence"]["role"]


check(wait_until(lambda: sum(role(n) == "primary" for n in nodes) == 1, 15), "a primary is elected")
p = [n for n in nodes if role(n) == "primary"][0]
standby = [n for n in nodes if n is not p][0]

log("create a space: 201, 409 again, 400 for bad names and steps")
st, body, _ = http(p.port, "/api/keyed", method="POST", body='{"name":"chat","step":100}')
check(st == 201 and json.loads(body) == {"name": "chat", "step": 100},
      "POST /api/keyed -> 201 with the space: %d %s" % (st, body))
st, body, _ = http(standby.port, "/api/keyed", method="POST", body='{"name":"chat"}')
check(st == 409 and json.loads(body)["code"] == "space_exists", "again -> 409: %d %s" % (st, body))
st, body, _ = http(p.port, "/api/keyed", method="POST", body='{"name":"inbox"}')
check(st == 201 and json.loads(body)["step"] == 10000, "the default step is 10000: %d %s" % (st, body))
for bad in ('{"name":"a:b"}', '{"name":"a b"}', '{"name":".."}', '{"name":""}', '{"name":"%s"}' % ("x" * 65),
            '{"name":"s1","step":0}', '{"name":"s1","step":1.5}', '{"name":"s1","step":"7"}',
            '{"name":"s1","step":%d}' % (2 ** 40 + 1), '{"step":5}', '[]'):
    st, body, _ = http(p.port, "/api/keyed", method="POST", body=bad)
    check(st == 400, "POST /api/keyed %s -> 400: %d %s" % (bad, st, body))
st, body, _ = http(p.port, "/api/keyed")
spaces = {s["name"]: s for s in json.loads(body).get("spaces", [])} if st == 200 else {}
check(set(spaces) == {"chat", "inbox"} and spaces["chat"]["step"] == 100,
      "GET /api/keyed lists both spaces: %d %s" % (st, body))
check(all(k in spaces.get("chat", {}) for k in ("issued", "resident", "writes", "evictions")),
      "a space's counters are listed: %s" % body)

log("IDs over HTTP: first >= 1, consecutive with count, each key its own sequence")
firsts = {}
for key in (b"conv1", b"conv2", b"{conv42}", b"a b/c%d", bytes(range(1, 40)), b"\xff\x00\xfe"):
    st, ids, _ = get_ids(p, "chat", key)
    check(st == 200 and len(ids) == 1 and ids[0] >= 1, "first ID of %r >= 1: %d %r" % (key, st, ids))
    firsts[key] = ids[0] if st == 200 else 0
st, ids, _ = get_ids(p, "chat", b"conv1", count=5)
check(st == 200 and len(ids) == 5 and ids[0] > firsts[b"conv1"] and ids == list(range(ids[0], ids[0] + 5)),
      "count=5: five consecutive IDs above the first: %r" % ids)
st, body, _ = http(p.port, "/api/keyed/get/chat/" + "k" * 200)
check(st == 200, "a key of 200 bytes: %d" % st)

log("RESP: INCR, INCRBY, pipelined INCRs, the same keys as HTTP's")
if redis is not None:
    rp = redis.Redis(port=p.resp_port)
    last = {}
    for key in firsts:
        with hist.call(hkey("chat", key)) as c:
            c.value = v = rp.incr(b"keyed:chat:" + key)
        last[key] = v
    check(all(last[k] > firsts[k] for k in firsts),
          "INCR of a key HTTP percent-encoded goes on above HTTP's IDs: %r %r" % (firsts, last))
    with hist.call(hkey("chat", b"conv2")) as c:
        b = rp.incrby("keyed:chat:conv2", 10)
        c.values = range(b - 9, b + 1)
    check(b == last[b"conv2"] + 10, "INCRBY 10 answers the last of ten consecutive IDs: %d" % b)
    pipe = rp.pipeline(transaction=False)
    keys = [b"p%d" % (i % 7) for i in range(50)]
    for k in keys:
        pipe.incr(b"keyed:chat:" + k)
    t0 = time.monotonic_ns()
    got = pipe.execute()
    t1 = time.monotonic_ns()
    seen = {}
    for k, v in zip(keys, got):
        hist.record(hkey("chat", k), t0, t1, first=v, who="pipeline")
        check(v > seen.get(k, 0), "pipelined INCRs of one key ascend: %r %d" % (k, v))
        seen[k] = v
    for bad, why in (("keyed:chat:", "an empty key"), ("keyed:c h:x", "a bad space"),
                     ("keyed:chat", "no key"), ("keyed:" + "s" * 65 + ":x", "a space of 65 bytes"),
                     ("keyed:chat:" + "k" * 201, "a key of 201 bytes")):
        try:
            rp.incr(bad)
            check(False, "%s is refused" % why)
        except redis.exceptions.ResponseError as e:
            check(str(e).startswith("BAD_TAG"), "%s -> -BAD_TAG: %s" % (why, e))
    try:
        rp.incr("keyed:nospace:x")
        check(False, "no such space is refused")
    except redis.exceptions.ResponseError as e:
        check(str(e).startswith("NO_SUCH_SPACE"), "no such space -> -NO_SUCH_SPACE: %s" % e)
    rs = redis.Redis(port=standby.resp_port)
    key = "keyed:chat:{conv42}"
    try:
        rs.incr(key)
        check(False, "a standby answers -MOVED")
    except redis.exceptions.ResponseError as e:
        slot = int(rp.execute_command("CLUSTER", "KEYSLOT", key))
        check(str(e) == "MOVED %d 127.0.0.1:%d" % (slot, p.resp_port),
              "standby -> MOVED <slot of the whole key, hash tag honoured> primary: %s" % e)
else:
    log("SKIP RESP: no redis-py")

log("errors over HTTP, and a standby's 307")
st, body, hdr = http(standby.port, "/api/keyed/get/chat/conv1?count=2")
check(st == 307 and json.loads(body)["code"] == "not_primary" and
      hdr.get("Location") == "http://127.0.0.1:%d/api/keyed/get/chat/conv1?count=2" % p.port,
      "standby -> 307 with Location to the primary: %d %s %s" % (st, body, hdr.get("Location")))
for path, code, status in (("/api/keyed/get/nospace/x", "no_such_space", 404),
                           ("/api/keyed/get/chat/", "bad_tag", 400),
                           ("/api/keyed/get/chat", "bad_tag", 400),
                           ("/api/keyed/get/c%20h/x", "bad_tag", 400),
                           ("/api/keyed/get/chat/a/b", "bad_tag", 400),
                           ("/api/keyed/get/chat/a%zz", "bad_tag", 400),
                           ("/api/keyed/get/chat/" + "k" * 201, "bad_tag", 400),
                           ("/api/keyed/get/chat/x?count=0", "bad_count", 400),
                           ("/api/keyed/get/chat/x?count=10001", "bad_count", 400)):
    st, body, _ = http(p.port, path)
    j = json.loads(body) if body.startswith("{") else {}
    check(st == status and j.get("code") == code, "%s -> %d %s: %d %s" % (path, status, code, st, body))

log("strictly increasing per key across the nodes, through a demotion")
before = get_ids(p, "chat", b"conv1")[1][0]
st, body, _ = http(p.port, "/api/cluster/demote", method="POST", body="")
check(st == 200, "demote -> 200: %d %s" % (st, body))
after = None
for _ in range(500):  # bounded: 500 rounds of three nodes, 10 ms apart
    for n in nodes:
        st, ids, _ = get_ids(n, "chat", b"conv1")
        if st == 200:
            after = (n, ids[0])
            break
    if after:
        break
    time.sleep(0.01)
check(after is not None and after[1] > before, "after the demotion the key goes on above: %r > %d" % (after, before))

log("metrics per space")
owner = after[0] if after else p
st, body, _ = owner.get("/metrics")
check('leafd_keyed_issued_total{space="chat"}' in body and 'leafd_keyed_resident_keys{space="chat"}' in body
      and 'leafd_keyed_section_writes_total{space="chat"}' in body
      and 'leafd_keyed_evictions_total{space="chat"}' in body, "the four families name the space")

log("grants: keyed:chat:* gives the space's keys, not another space's")
a = env.leafd("auth", zk_props(zk.address(), name="ka", **{
    "leafd.sequence.enable": "true", "leafd.auth.enable": "true",
    "leafd.zk.auth": "digest:leafd:zk-secret-0", "leafd.admin.token": TOKEN}), wait_ready=False)
check(a.wait_ready(30), "a node with auth on is ready")
check(wait_until(lambda: http(a.port, "/api/keyed", method="POST", headers=ADMIN,
                              body='{"name":"chat"}')[0] in (201, 409), 15), "space chat on the auth node")
http(a.port, "/api/keyed", method="POST", headers=ADMIN, body='{"name":"other"}')
st, body, _ = http(a.port, "/api/users", method="POST", headers=ADMIN,
                   body=json.dumps({"name": "app", "grants": ["keyed:chat:*:ids"]}))
check(st == 201, "user app with keyed:chat:*:ids: %d %s" % (st, body))
secret = json.loads(body).get("secret", "") if st == 201 else ""
basic = {"Authorization": "Basic " + base64.b64encode(("app:" + secret).encode()).decode()}
ok = wait_until(lambda: http(a.port, "/api/keyed/get/chat/x%00y", headers=basic)[0] == 200, 5)
check(ok, "the grant covers a key of chat with odd bytes")
check(http(a.port, "/api/keyed/get/other/x", headers=basic)[0] == 403, "no grant on space other: 403")
check(http(a.port, "/api/keyed", method="POST", headers=basic, body='{"name":"mine"}')[0] == 403,
      "creating a space needs the admin right: 403")

hist.close()
ok, text = verify(HISTORY)
log(text)
check(ok, "the calls' history passes the order checker: %s" % text)
env.finish()
