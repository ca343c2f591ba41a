"""Smoke run of every mode, for the quick tier (tools/test --quick, ctest -L quick).

Against one real ZooKeeper and one real MariaDB: one node with snowflake on ZooKeeper
(forever worker IDs), segments, sequences, users (leafd.auth.enable) and the RESP port,
and a second node in lease mode (a node takes its worker ID one way or the other). Each
mode must issue IDs over HTTP, and over RESP where it has a key space; a request without
credentials is refused; both nodes stop cleanly. One check per mode, nothing timed: the
thorough tests of each mode are in its own area (tests/<area>.cmake).
"""
import base64
import json

from leafdtest import Env, RespError, RespStream, check, http, log, wait_until
from zkhelpers import zk_props

TOKEN = "smoke-admin-token-0123456789"
ZK_AUTH = "digest:leafd:zk-secret-0"
BEARER = {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}


def ids_of(st, body):
    return [int(x) for x in body.split("\n")] if st == 200 else []


with Env() as env:
    zk = env.zookeeper()
    db = env.mariadb()
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('smoke', 1, 1000, '')")
    log("one node with every mode on: snowflake (forever), segment, sequence, users, RESP")
    n = env.leafd("all", zk_props(zk.address(), name="smoke", **{
        "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
        "leafd.auth.enable": "true", "leafd.zk.auth": ZK_AUTH,
        "leafd.admin.token": TOKEN,
        "leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
        "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw"}), resp=True)

    # Users: no credentials, no IDs; a user made with the admin token gets them.
    st, _, _ = n.get("/api/snowflake/get/a")
    check(st == 401, "users: a request without credentials is refused (got %d)" % st)
    st, body, _ = n.get("/api/users", method="POST", headers=BEARER,
                        body=json.dumps({"name": "smoke", "grants": ["*:ids", "*:create"]}))
    check(st == 201, "users: the admin token adds a user (got %d %s)" % (st, body[:200]))
    secret = json.loads(body).get("secret", "") if st == 201 else ""
    user = {"Authorization": "Basic " + base64.b64encode(("smoke:" + secret).encode()).decode()}
    # The 201 means the user is stored in ZooKeeper; the node's table learns of it from its
    # watch a moment later.
    check(wait_until(lambda: n.get("/api/snowflake/get/a", headers=user)[0] != 401, 10),
          "users: the node knows the new user within 10 s")

    st, body, _ = n.get("/api/snowflake/get/a?count=10", headers=user)
    ids = ids_of(st, body)
    check(len(ids) == 10 and ids == sorted(set(ids)),
          "snowflake (forever worker ID): 10 ascending IDs (got %d %s)" % (st, body[:200]))
    st, body, _ = n.get("/api/segment/get/smoke?count=10", headers=user)
    ids = ids_of(st, body)
    check(len(ids) == 10 and ids == sorted(set(ids)),
          "segment: 10 ascending IDs from MariaDB (got %d %s)" % (st, body[:200]))
    # /ready 200 does not promise an elected sequence primary (docs/OPERATIONS.md, Readiness).
    st = n.wait_sequence("orders", headers=user)
    check(st == 200, "sequence: an ID once the primary is elected (got %s)" % st)

    r = RespStream(n.resp_port)
    reply = r.call("INCR", "snowflake:a")
    check(isinstance(reply, RespError) and reply.startswith("NOAUTH"),
          "RESP: INCR without AUTH is refused (%r)" % (reply,))
    check(r.call("AUTH", "smoke", secret) == "OK", "RESP: AUTH as the user")
    for key in ("snowflake:a", "segment:smoke", "sequence:orders"):
        reply = r.call("INCR", key)
        check(isinstance(reply, int) and not isinstance(reply, bool) and reply > 0,
              "RESP: INCR %s gives an ID (%r)" % (key, reply))
    r.close()

    log("a second node in lease mode")
    # The same ZooKeeper identity: the first node closed /snowflake to anyone else.
    lease = env.leafd("lease", zk_props(zk.address(), name="smokelease", **{
        "leafd.snowflake.worker.mode": "lease", "leafd.zk.auth": ZK_AUTH}))
    st, body, _ = lease.get("/api/snowflake/get/a?count=10")
    ids = ids_of(st, body)
    check(len(ids) == 10 and ids == sorted(set(ids)),
          "lease: 10 ascending IDs (got %d %s)" % (st, body[:200]))
    st, body, _ = http(lease.port, "/ready")
    check(st == 200 and "lease" in body, "lease: /ready 200 names the lease (%d %s)" % (st, body[:300]))

    check(lease.stop() == 0, "the lease node stops cleanly")
    check(n.stop() == 0, "the node with every mode stops cleanly")
env.finish()
