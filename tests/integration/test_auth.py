"""Users and permissions (docs/SECURITY.md) on three real nodes, a real
ZooKeeper and a real MariaDB, over HTTP (curl-like raw requests) and RESP
(redis-py and raw frames).

Covers:
- no credentials: 401 with WWW-Authenticate / -NOAUTH; a wrong secret: 401 /
  -WRONGPASS; a user on a tag outside its grants: 403 / -NOPERM; a granted
  user gets IDs (HTTP Basic, RESP AUTH, HELLO 3 AUTH, redis-py username=);
- every route and every command against its need (UUIDs included: `uuid:` grants name
  LEAF.UUID's bare key): open ones answer anyone,
  ID ones need `ids` on the key, creates need `create` on the body's key,
  admin ones need the admin flag or leafd.admin.token;
- tools/programs/leafctl user add/list/grant/revoke/rotate/del, each change applied by
  all three nodes within 2 s (measured);
- a malformed record written to ZooKeeper by hand: a log line naming it, the
  other users keep working;
- bad input: Authorization not base64, without a colon, 10 KB long: 401 and
  the same keep-alive connection still answers; AUTH with wrong arity;
- ZooKeeper stopped: users keep working, and a node restarted while it is
  down still knows them (the local copy, mode 0600);
- no secret in any log line, page or metric of the run;
- /metrics counts failures by reason and denials by right.
"""
import base64
import json
import os
import re
import stat
import subprocess
import time

import redis

from leafdtest import (Env, HttpStream, RespError, RespStream, check, get_request, http, log,
                       wait_until)
from zkhelpers import zk_props

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEAFCTL = os.path.join(ROOT, "tools", "programs", "leafctl")
TOKEN = "root-token-for-the-test"
secrets = []  # every secret seen: none may show anywhere

env = Env()
zk = env.zookeeper()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES "
       "('orders.eu', 1, 100, 'a'), ('billing', 1, 100, 'b')")


def props():
    p = zk_props(zk.address(), name="au", **{
        "leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0", "leafd.admin.token": TOKEN,
        "leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
        "leaf.jdbc.username": "root", "leaf.jdbc.password": "",
        "leafd.zk.session.timeout.ms": "4000",
        # This test makes many failed attempts from 127.0.0.1 on purpose (and
        # polls for refusals); the failed-authentication limit has its own test.
        "leafd.auth.failures.max": "0"})
    return p


nodes = [env.leafd("n%d" % i, props(), resp=True, wait_ready=False) for i in range(3)]
check(all(n.wait_ready(30) for n in nodes), "three nodes with auth on are ready")
n0 = nodes[0]


def basic(user, secret):
    return {"Authorization": "Basic " + base64.b64encode(("%s:%s" % (user, secret)).encode()).decode()}


BEARER = {"Authorization": "Bearer " + TOKEN}


def leafctl(*args, env_extra=None):
    e = dict(os.environ)
    e.pop("LEAFD_ADMIN_TOKEN", None)
    e.update(env_extra or {})
    r = subprocess.run([LEAFCTL, "user"] + list(args) + ["-c", n0.conf], capture_output=True,
                       text=True, timeout=30, env=e)
    return r.returncode, r.stdout + r.stderr


def add_user(name, *grants, admin=False):
    argv = ["add", name] + [x for g in grants for x in ("--grant", g)] + (["--admin"] if admin else [])
    rc, out = leafctl(*argv)
    check(rc == 0, "leafctl user add %s: %s" % (name, out.strip()[:200]))
    secret = json.loads(out)["secret"]
    secrets.append(secret)
    return secret


def status(node, path, headers=None, method="GET", body=None):
    return http(node.port, path, method=method, headers=headers, body=body)[0]


def everywhere(fn, timeout=2.0):
    """Waits until fn(node) holds on every node; returns the seconds it took (None: never)."""
    t0 = time.monotonic()
    if wait_until(lambda: all(fn(n) for n in nodes), timeout, 0.02):
        return time.monotonic() - t0
    return None


log("no credentials, or none known yet")
st, body, hdrs = http(n0.port, "/api/snowflake/get/orders.a")
check(st == 401, "no credentials: 401 (got %d)" % st)
check(any(k.lower() == "www-authenticate" and v == 'Basic realm="leafd"' for k, v in hdrs.items()),
      "401 carries WWW-Authenticate: Basic realm=\"leafd\"")
check(json.loads(body)["code"] == "unauthorized", "401 body has code unauthorized")
for path in ("/health", "/ready", "/metrics"):
    check(status(n0, path) == 200, "%s stays open" % path)
r = RespStream(n0.resp_port)
reply = r.call("INCR", "snowflake:orders.a")
check(isinstance(reply, RespError) and reply.startswith("NOAUTH"), "RESP without AUTH: -NOAUTH (%r)" % reply)
check(r.call("PING") == "PONG", "PING answers anyone")

log("leafctl user add (through the admin API with leafd.admin.token from the config file)")
sa = add_user("team-a", "snowflake:orders.*:ids", "segment:orders.*:ids", "sequence:orders.*:ids",
              "uuid:orders.*:ids", "number:orders.*:ids")
sc = add_user("maker", "segment:new.*:create,ids", "sequence:*:create", "number:*:create")
sadm = add_user("ops", admin=True)
check(re.fullmatch(r"lfd_[A-Za-z0-9_-]{32}", sa) is not None, "the secret is lfd_ + 32 base64url (192 bits)")
t = everywhere(lambda n: status(n, "/api/snowflake/get/orders.a", basic("team-a", sa)) == 200, 5)
check(t is not None, "a new user works on all three nodes (%.2f s)" % (t or -1))
# The last user added, too (the checks below use it at once on node 0).
everywhere(lambda n: status(n, "/metrics", basic("ops", sadm)) == 200, 5)

log("wrong secret, wrong tag, granted")
check(status(n0, "/api/snowflake/get/orders.a", basic("team-a", "lfd_wrong")) == 401, "wrong secret: 401")
check(status(n0, "/api/snowflake/get/orders.a", basic("nobody", sa)) == 401, "unknown user: 401")
st, body, _ = http(n0.port, "/api/snowflake/get/payments", headers=basic("team-a", sa))
check(st == 403 and json.loads(body)["code"] == "forbidden", "a granted user on another tag: 403 forbidden")
st, body, _ = http(n0.port, "/api/segment/get/orders.eu?count=3", headers=basic("team-a", sa))
check(st == 200 and len(body.split()) == 3, "segment:orders.* gives segment IDs of orders.eu")
check(status(n0, "/api/segment/get/billing", basic("team-a", sa)) == 403, "segment billing: 403")
check(status(n0, "/api/leaf?biz_tag=orders.eu", basic("team-a", sa)) == 200, "GET /api/leaf?biz_tag= in grants: 200")
check(status(n0, "/api/leaf?biz_tag=billing", basic("team-a", sa)) == 403, "GET /api/leaf?biz_tag= outside: 403")

rc = redis.Redis(port=n0.resp_port, username="team-a", password=sa, decode_responses=True)
check(rc.incr("snowflake:orders.b") > 0, "redis-py with username/password gets a snowflake ID")
check(rc.incrby("segment:orders.eu", 5) > 0, "redis-py INCRBY on segment:orders.eu")
try:
    rc.incr("snowflake:payments")
    check(False, "INCR outside the grants must fail")
except redis.exceptions.NoPermissionError as e:
    check("NOPERM" in str(e) or True, "INCR outside the grants: NOPERM (%s)" % e)
except redis.exceptions.ResponseError as e:
    check(str(e).startswith("NOPERM") or "permission" in str(e).lower(), "INCR outside the grants: NOPERM (%s)" % e)
reply = r.call("AUTH", "team-a", "lfd_wrong")
check(isinstance(reply, RespError) and reply.startswith("WRONGPASS"), "AUTH wrong: -WRONGPASS (%r)" % reply)
check(r.call("AUTH", "team-a", sa) == "OK", "AUTH right: +OK")
check(isinstance(r.call("INCR", "snowflake:orders.c"), int), "after AUTH: INCR gives an ID")
reply = r.call("INCR", "snowflake:payments")
check(isinstance(reply, RespError) and reply.startswith("NOPERM"), "after AUTH, another key: -NOPERM (%r)" % reply)
r3 = RespStream(n0.resp_port)
hello = r3.call("HELLO", "3", "AUTH", "team-a", sa)
check(isinstance(hello, dict) and hello.get("proto") == 3, "HELLO 3 AUTH user secret: the RESP3 map")
check(isinstance(r3.call("LEAF.IDS", "snowflake:orders.d", "2"), list), "after HELLO AUTH: LEAF.IDS")
bad = RespStream(n0.resp_port).call("HELLO", "3", "AUTH", "team-a", "lfd_nope")
check(isinstance(bad, RespError) and bad.startswith("WRONGPASS"), "HELLO 3 AUTH wrong: -WRONGPASS")

log("every route and command against its need")
# (method, path, body, need): need is open, ids (key in the path/query), create (key in the
# body), admin. Each is tried without credentials, as team-a (ids on orders.* only), as
# maker (create on new.* and sequences), as ops (admin, no grants) and with the token.
routes = [
    ("GET", "/health", None, "open"), ("GET", "/ready", None, "open"),
    ("GET", "/metrics", None, "open"), ("GET", "/decodeSnowflakeId?snowflakeId=1", None, "open"),
    ("GET", "/api/snowflake/time", None, "open"),
    ("GET", "/decodeUuid?uuid=017f22e2-79b0-7cc3-98c4-dc0c0c07398f", None, "open"),
    ("GET", "/api/uuid/get/orders.x", None, "ids"),
    ("GET", "/api/snowflake/get/orders.x", None, "ids"), ("GET", "/api/segment/get/orders.eu", None, "ids"),
    ("GET", "/api/leaf?biz_tag=orders.eu", None, "ids"),
    ("POST", "/api/leaf", '{"biz_tag":"new.t%d","step":10}', "create"),
    ("POST", "/api/sequence", '{"name":"s%d","start":1}', "create-seq"),
    ("POST", "/api/numbering", '{"name":"n%d","prefix":"N","date":"","width":4,"period":"never",'
     '"time_zone":"UTC"}', "create-seq"),
    ("GET", "/api/number/get/orders.x", None, "ids-seq"), ("GET", "/api/numbering", None, "admin"),
    ("PUT", "/api/leaf/step", '{"biz_tag":"orders.eu","step":100}', "admin"),
    ("PUT", "/api/leaf/init/cache", '{"biz_tag":"orders.eu"}', "admin"),
    ("GET", "/cache", None, "admin"), ("GET", "/db", None, "admin"),
    ("POST", "/api/cluster/demote", None, "admin"), ("GET", "/api/users", None, "admin"),
]
who = {"none": {}, "team-a": basic("team-a", sa), "maker": basic("maker", sc),
       "ops": basic("ops", sadm), "token": BEARER}
seq = [0]
for method, path, body, need in routes:
    for w, h in who.items():
        seq[0] += 1
        b = body % seq[0] if body and "%d" in body else body
        st = status(n0, path, h, method=method, body=b)
        if need == "open":
            ok = st not in (401, 403)
        elif w == "none":
            ok = st == 401
        elif need == "ids":
            ok = (st == 200) if w == "team-a" else (st == 403)
        elif need == "create":
            ok = (st == 201) if w in ("maker", "token") else (st == 403)
        elif need == "ids-seq":  # sequences are off here: team-a gets 503 disabled, not 401/403
            ok = (st not in (401, 403)) if w == "team-a" else (st == 403)
        elif need == "create-seq":  # sequences are off here: allowed callers get 503 disabled
            ok = (st not in (401, 403)) if w in ("maker", "token") else (st == 403)
        else:  # admin
            ok = (st not in (401, 403)) if w in ("ops", "token") else (st == 403)
        check(ok, "%s %s as %s (%s): %d" % (method, path, w, need, st))
for cmd, args, need in [("PING", [], "open"), ("ECHO", ["x"], "open"), ("INFO", [], "open"),
                        ("COMMAND", ["COUNT"], "open"), ("CLIENT", ["ID"], "open"),
                        ("SELECT", ["0"], "open"), ("CONFIG", ["GET", "x"], "open"),
                        ("CLUSTER", ["MYID"], "open"), ("READONLY", [], "open"),
                        ("INCR", ["snowflake:orders.r"], "ids"), ("INCRBY", ["segment:orders.eu", "2"], "ids"),
                        ("LEAF.IDS", ["snowflake:orders.r", "2"], "ids"), ("GET", ["sequence:orders.r"], "ids"),
                        ("LEAF.UUID", ["orders.r"], "ids"), ("LEAF.UUID", ["orders.r", "2"], "ids"),
                        ("LEAF.NUMBER", ["orders.r"], "ids")]:
    anon = RespStream(n0.resp_port).call(cmd, *args)
    authed = RespStream(n0.resp_port)
    authed.call("AUTH", "team-a", sa)
    other = RespStream(n0.resp_port)
    other.call("AUTH", "maker", sc)
    ra, rb, ro = anon, authed.call(cmd, *args), other.call(cmd, *args)
    if need == "open":
        ok = not any(isinstance(x, RespError) and x.split()[0] in ("NOAUTH", "NOPERM") for x in (ra, rb, ro))
    else:
        ok = (isinstance(ra, RespError) and ra.startswith("NOAUTH") and
              not (isinstance(rb, RespError) and rb.split()[0] in ("NOAUTH", "NOPERM")) and
              isinstance(ro, RespError) and ro.startswith("NOPERM"))
    check(ok, "RESP %s (%s): anon %r, team-a %r, maker %r" % (cmd, need, ra, rb, ro))

log("changes through leafctl reach all three nodes within 2 s")
rc_, out = leafctl("list")
check(rc_ == 0 and "team-a" in out and "secret" not in out and "sha256" not in out,
      "leafctl user list names the users, no secret and no hash")
rc_, out = leafctl("grant", "team-a", "snowflake:payments:ids")
check(rc_ == 0, "leafctl user grant: %s" % out.strip()[:120])
t = everywhere(lambda n: status(n, "/api/snowflake/get/payments", basic("team-a", sa)) == 200)
check(t is not None, "grant applied on all nodes in %.3f s (<= 2 s)" % (t or -1))
timings = {"grant": t}


def queued(user, secret, key):
    """A connection of user with one INCR key queued in a MULTI."""
    q = RespStream(n0.resp_port)
    check(q.call("AUTH", user, secret) == "OK" and q.call("MULTI") == "OK" and
          q.call("INCR", key) == "QUEUED", "%s: INCR %s queued in MULTI" % (user, key))
    return q


def exec_refused(q, what):
    reply = q.call("EXEC")
    check(isinstance(reply, RespError), "EXEC after %s: refused, no IDs (%r)" % (what, reply))
    q.close()


mq_revoke = queued("team-a", sa, "snowflake:payments")
rc_, out = leafctl("revoke", "team-a", "snowflake:payments")
check(rc_ == 0, "leafctl user revoke")
t = everywhere(lambda n: status(n, "/api/snowflake/get/payments", basic("team-a", sa)) == 403)
check(t is not None, "revoke applied on all nodes in %.3f s (<= 2 s)" % (t or -1))
timings["revoke"] = t
exec_refused(mq_revoke, "the revoke of the queued key's right")
mq_rotate = queued("team-a", sa, "snowflake:orders.q")
rc_, out = leafctl("rotate", "team-a")
check(rc_ == 0, "leafctl user rotate")
sa2 = json.loads(out)["secret"]
secrets.append(sa2)
t = everywhere(lambda n: status(n, "/api/snowflake/get/orders.a", basic("team-a", sa)) == 401 and
               status(n, "/api/snowflake/get/orders.a", basic("team-a", sa2)) == 200)
check(t is not None, "rotate: old secret refused, new one works on all nodes in %.3f s" % (t or -1))
timings["rotate"] = t
exec_refused(mq_rotate, "a rotate of the user's secret")
reply = r.call("INCR", "snowflake:orders.c")
check(isinstance(reply, RespError) and reply.startswith("NOAUTH"),
      "a RESP connection AUTHed with the old secret must AUTH again (%r)" % reply)
check(r.call("AUTH", "team-a", sa2) == "OK", "AUTH with the rotated secret")
sd = add_user("temp", "*:ids")
check(everywhere(lambda n: status(n, "/api/snowflake/get/any", basic("temp", sd)) == 200, 5) is not None,
      "user temp works everywhere")
mq_del = queued("temp", sd, "snowflake:any")
rc_, out = leafctl("del", "temp")
check(rc_ == 0, "leafctl user del")
t = everywhere(lambda n: status(n, "/api/snowflake/get/any", basic("temp", sd)) == 401)
check(t is not None, "del applied on all nodes in %.3f s" % (t or -1))
exec_refused(mq_del, "the user's deletion")
timings["del"] = t
log("propagation (s): %s" % {k: round(v or -1, 3) for k, v in timings.items()})
rc_, out = leafctl("add", "team-a", "--grant", "*:ids")
check(rc_ != 0 and "user_exists" in out, "adding an existing user: 409 user_exists")
rc_, out = leafctl("grant", "ghost", "*:ids")
check(rc_ != 0 and "unknown_user" in out, "granting to an unknown user: 404 unknown_user")
rc_, out = leafctl("add", "x1", "--grant", "segment:ord*ers:ids")
check(rc_ != 0 and "bad_grant" in out, "a bad pattern: 400 bad_grant")
rc_, out = leafctl("list", env_extra={"LEAFD_USER": "team-a:" + sa2})
check(rc_ != 0 and "forbidden" in out, "a non-admin user cannot list users (403)")
rc_, out = leafctl("list", env_extra={"LEAFD_USER": "ops:" + sadm})
check(rc_ == 0 and "team-a" in out, "an admin user can (LEAFD_USER)")

log("a malformed record in ZooKeeper: logged, ignored, the others still work")
# The users' tree is closed (leafd.zk.auth): an anonymous write is refused, the
# identity of leafd.zk.auth may write (an operator's repair, or this bad record).
out = zk.cli_as(None, "create", "/leafd/au/users/mallory", '{"name":"mallory","admin":true}')
check("Insufficient permission" in out or "NoAuth" in out,
      "an anonymous zkCli cannot write a user (ACL): %s" % out.strip()[-200:])
zk.cli_as("leafd:zk-secret-0", "create", "/leafd/au/users/broken", '{"name":"broken","grants":"nope"}')
check(wait_until(lambda: "user record 'broken' ignored" in n0.log_text(), 5), "the log names the bad record")
check(status(n0, "/api/snowflake/get/orders.a", basic("team-a", sa2)) == 200, "the other users still work")
check(wait_until(lambda: "leafd_auth_records_ignored 1" in http(n0.port, "/metrics")[1], 5),
      "leafd_auth_records_ignored counts it")

log("bad input: the connection stays healthy")
s = HttpStream(n0.port)
for name, value in [("not base64", "Basic !!!notbase64!!!"),
                    ("no colon", "Basic " + base64.b64encode(b"team-a").decode()),
                    ("10 KB", "Basic " + "A" * 10240), ("unknown scheme", "Digest x=y"),
                    ("empty Basic", "Basic ")]:
    s.send(get_request("/api/snowflake/get/orders.a", headers={"Authorization": value}))
    st, _, _ = s.read_response()
    check(st == 401, "Authorization %s: 401 (got %d)" % (name, st))
s.send(get_request("/api/snowflake/get/orders.a", headers=basic("team-a", sa2)))
st, _, _ = s.read_response()
check(st == 200, "the same connection then serves a good request")
s.close()
rr = RespStream(n0.resp_port)
reply = rr.call("AUTH")
check(isinstance(reply, RespError) and "wrong number of arguments" in reply, "AUTH alone: arity error")
reply = rr.call("AUTH", "a", "b", "c")
check(isinstance(reply, RespError) and reply.startswith("ERR syntax"), "AUTH with 3 arguments: syntax error")
check(rr.call("PING") == "PONG", "the connection still answers")

log("metrics")
m = http(n0.port, "/metrics", headers=BEARER)[1]  # reasons only with the metrics right or admin
for reason in ("missing", "malformed", "unknown_user", "wrong_secret"):
    v = re.search(r'leafd_auth_failures_total\{reason="%s"\} (\d+)' % reason, m)
    check(v is not None and int(v.group(1)) > 0, "failures counted for %s" % reason)
v = re.search(r'leafd_auth_denied_total\{right="ids"\} (\d+)', m)
check(v is not None and int(v.group(1)) > 0, "denials counted for ids")
check(re.search(r"leafd_auth_users [34]\b", m) is not None, "leafd_auth_users")
check('leafd_http_requests_total{protocol="resp",route="incr",status="noauth"}' in m,
      "RESP outcomes noauth counted")

log("ZooKeeper down: users keep working, and survive a restart (local copy)")
copy = os.path.join(n0.props["leafd.data.dir"], "au", str(n0.port), "users.jsonl")
check(os.path.exists(copy), "the local copy exists: %s" % copy)
check(stat.S_IMODE(os.stat(copy).st_mode) == 0o600, "the local copy has mode 0600")
zk.stop()
time.sleep(0.5)
check(status(n0, "/api/snowflake/get/orders.a", basic("team-a", sa2)) == 200, "ZooKeeper down: the user still works")
check(status(n0, "/api/snowflake/get/orders.a", basic("team-a", sa)) == 401, "ZooKeeper down: the old secret still refused")
n1 = nodes[1]
n1.stop()
n1.start(wait_ready=True, timeout=30)
check(status(n1, "/api/snowflake/get/orders.a", basic("team-a", sa2)) == 200,
      "a node restarted while ZooKeeper is down knows the users")
check(status(n1, "/api/snowflake/get/payments", basic("team-a", sa2)) == 403, "... and their grants")
check("loaded from the local copy" in n1.log_text(), "it says it loaded the local copy")

log("no secret anywhere")
texts = [n.log_text() for n in nodes] + [http(n0.port, p)[1] for p in ("/metrics", "/ready")]
texts.append(http(n0.port, "/cache", headers=BEARER)[1])
texts.append(http(n0.port, "/api/users", headers=BEARER)[1])
texts.append(open(copy).read())
for sec in secrets:
    check(not any(sec in t for t in texts), "secret %s... in no log, page, metric or file" % sec[:6])
check(not any(TOKEN in t for t in texts), "the admin token in none either")
env.finish()
