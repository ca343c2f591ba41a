"""The admin API against a real MariaDB, with the admin rule (bearer token, or
loopback clients only).

Covers: create, 409 on duplicate, 400 on bad tag or step, 401/403
without the token, step update stored in the table, init cache, and
SQL-looking tags rejected before they reach the database (checked in the
server's general query log)."""
import http.client as httpclient
import json

from leafdtest import Env, check, free_port, log


def seg_props(db, **extra):
    p = {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
         "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw"}
    p.update(extra)
    return p


def call(node, method, path, body=None, token=None, host="127.0.0.1"):
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = "Bearer " + token
    conn = httpclient.HTTPConnection(host, node.port, timeout=10)
    try:
        conn.request(method, path, body=json.dumps(body) if isinstance(body, dict) else body,
                     headers=headers)
        r = conn.getresponse()
        text = r.read().decode()
        try:
            return r.status, json.loads(text)
        except ValueError:
            return r.status, text
    finally:
        conn.close()


env = Env()
db = env.mariadb()
db.sql("SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1;", db="")
port = free_port()
node = env.leafd("open", seg_props(db, **{"leafd.listen": "0.0.0.0:%d" % port}), port=port)

log("create: 201, usable at once; duplicate 409")
st, body = call(node, "POST", "/api/leaf",
                {"biz_tag": "orders", "max_id": 100, "step": 10, "description": "order <ids>"})
check(st == 201 and body == {"biz_tag": "orders", "max_id": "100", "step": 10,
                             "description": "order <ids>"}, "create -> 201 %r %r" % (st, body))
row = db.sql("SELECT max_id, step, description FROM leaf_alloc WHERE biz_tag='orders'").strip()
check(row == "100\t10\torder <ids>", "row stored: %r" % row)
st, ids, _ = node.get("/api/segment/get/orders?count=3")
check(st == 200 and ids == "100\n101\n102", "new tag served at once: %r" % ids)
st, body = call(node, "POST", "/api/leaf", {"biz_tag": "orders"})
check(st == 409 and body["code"] == "tag_exists", "duplicate -> 409 %r" % (body,))
st, body = call(node, "POST", "/api/leaf", {"biz_tag": "defaults"})
check(st == 201 and body["max_id"] == "1" and body["step"] == 2000 and body["description"] is None,
      "defaults max_id 1, step 2000: %r" % (body,))

log("max_id is a JSON string in every answer (2^53 + 1 survives JavaScript)")
st, body = call(node, "POST", "/api/leaf", {"biz_tag": "big", "max_id": "9007199254740993"})
check(st == 201 and body["max_id"] == "9007199254740993", "big max_id comes back as a string: %r" % (body,))

log("non-ASCII descriptions: stored in a utf8mb4 table; a latin1 column is a 400 naming the field")
st, body = call(node, "POST", "/api/leaf", {"biz_tag": "cn", "description": "订单"})
check(st == 201 and body["description"] == "订单", "description 订单 -> 201 %r %r" % (st, body))
check(db.sql("SELECT HEX(description) FROM leaf_alloc WHERE biz_tag='cn'").strip() == "E8AEA2E58D95",
      "stored as UTF-8 bytes")
db.sql("DELETE FROM leaf_alloc WHERE biz_tag = 'cn'")
db.sql("ALTER TABLE leaf_alloc MODIFY description varchar(256) CHARACTER SET latin1 DEFAULT NULL")
st, body = call(node, "POST", "/api/leaf", {"biz_tag": "cn2", "description": "订单 😀"})
check(st == 400 and body.get("code") == "bad_description" and "description" in body.get("message", ""),
      "latin1 column: 400 bad_description naming the field, never 500 (got %r %r)" % (st, body))
st, body = call(node, "POST", "/api/leaf", {"biz_tag": "cn3", "description": "plain"})
check(st == 201, "latin1 column still takes ASCII: %r" % st)
db.sql("ALTER TABLE leaf_alloc MODIFY description varchar(256) CHARACTER SET utf8mb4 DEFAULT NULL")
db.sql("DELETE FROM leaf_alloc WHERE biz_tag IN ('big', 'cn3')")

log("400 on bad tag, step, max_id, body")
for bad in [{"biz_tag": "a b"}, {"biz_tag": ""}, {"biz_tag": "x" * 129}, {}]:
    st, body = call(node, "POST", "/api/leaf", bad)
    check(st == 400 and body["code"] == "bad_tag", "bad tag %r -> 400 %r" % (bad, body))
for step in [0, -5, 1000001, 1.5, "abc"]:
    st, body = call(node, "POST", "/api/leaf", {"biz_tag": "s", "step": step})
    check(st == 400 and body["code"] == "bad_step", "bad step %r -> 400" % (step,))
st, body = call(node, "POST", "/api/leaf", "{not json")
check(st == 400 and body["code"] == "bad_json", "bad JSON -> 400")
st, body = call(node, "POST", "/api/leaf", {"biz_tag": "m", "max_id": 0})
check(st == 400 and body["code"] == "bad_max_id", "max_id 0 -> 400")

log("step update stored in the table; init cache")
st, body = call(node, "PUT", "/api/leaf/step", {"biz_tag": "orders", "step": 500})
check(st == 200 and body == {"biz_tag": "orders", "step": 500}, "step -> 200 %r" % (body,))
check(db.sql("SELECT step FROM leaf_alloc WHERE biz_tag='orders'").strip() == "500", "step stored")
st, body = call(node, "PUT", "/api/leaf/step", {"biz_tag": "nope", "step": 5})
check(st == 404, "step of unknown tag -> 404")
st, body = call(node, "PUT", "/api/leaf/step", {"biz_tag": "orders", "step": 0})
check(st == 400, "step 0 -> 400")
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('manual', 7, 3)")
st, body = call(node, "PUT", "/api/leaf/init/cache", {"biz_tag": "manual"})
check(st == 200 and body.get("loaded") is True and body.get("step") == 3, "init cache %r" % (body,))
st, body = call(node, "PUT", "/api/leaf/init/cache", {"biz_tag": "nope"})
check(st == 404, "init cache unknown -> 404")
st, body, _ = node.get("/api/segment/get/manual")
check(st == 200 and body == "7", "init-cached tag served: %r" % body)

log("SQL-looking tags never reach the database")
sqlish = ["x' OR '1'='1", "a;DROP TABLE leaf_alloc;--", "b\") OR 1=1 #", "t%27--"]
for tag in sqlish:
    for method, path in [("POST", "/api/leaf"), ("PUT", "/api/leaf/step"),
                         ("PUT", "/api/leaf/init/cache")]:
        st, body = call(node, method, path, {"biz_tag": tag, "step": 5})
        check(st == 400, "%s %s with %r -> 400 (%r)" % (method, path, tag, st))
    st, _, _ = node.get("/api/segment/get/" + tag.replace(" ", "%20").replace("#", "%23"))
    check(st in (400, 404) and st != 200, "segment get with %r refused: %d" % (tag, st))
    st, _, _ = node.get("/api/leaf?biz_tag=" + tag.replace(" ", "%20").replace("#", "%23"))
    check(st == 400, "GET /api/leaf with %r -> 400" % tag)
logged = db.sql("SELECT CAST(argument AS CHAR) FROM mysql.general_log", db="")
for needle in ["OR '1'='1", "DROP TABLE", "OR 1=1", "%27--"]:
    check(needle not in logged, "general log has no %r" % needle)
check(db.sql("SELECT COUNT(*) FROM leaf_alloc").strip() == "3", "table intact")
check("SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = BINARY ?" in logged,
      "the log does show leafd's prepared statements")

# Non-loopback clients without a token get 403: tested in
# tests/unit/test_http_conn.c (tests talk to 127.0.0.1 only).

log("with a token: 401 missing, 403 wrong, 201 right")
tnode = env.leafd("token", seg_props(db, **{"leafd.admin.token": "s3cret-s3cret-s3cret"}))
st, body = call(tnode, "POST", "/api/leaf", {"biz_tag": "tok"})
check(st == 401 and body["code"] == "unauthorized", "no token -> 401 %r" % (body,))
st, body = call(tnode, "POST", "/api/leaf", {"biz_tag": "tok"}, token="wrong")
check(st == 403 and body["code"] == "forbidden", "wrong token -> 403")
st, body = call(tnode, "PUT", "/api/leaf/step", {"biz_tag": "orders", "step": 9}, token="s3cre")
check(st == 403, "prefix of the token -> 403")
st, body = call(tnode, "GET", "/db")
check(st == 401, "/db without token -> 401")
st, body = call(tnode, "GET", "/db", token="s3cret-s3cret-s3cret")
check(st == 200 and "orders" in body, "/db with token -> 200")
st, body = call(tnode, "POST", "/api/leaf", {"biz_tag": "tok", "step": 5}, token="s3cret-s3cret-s3cret")
check(st == 201, "right token -> 201")
st, ids, _ = tnode.get("/api/segment/get/tok?count=2")
check(st == 200 and ids == "1\n2", "created through the token node, served: %r" % ids)
log("a clean stop logs no warning")
node.stop()
warns = [l for l in node.log_text().splitlines() if "level=warn" in l or "level=error" in l]
check(not warns, "no warn/error lines over the node's life (got %r)" % warns[:3])

log("at start, a refused password or an unknown database is a configuration error: exit 1")
for name, extra, key in [("badpw", {"leaf.jdbc.password": "wrong"}, "leaf.jdbc.password"),
                         ("nodb", {"leaf.jdbc.url": db.jdbc_url().replace("/leaf?", "/nosuchdb?")},
                          "leaf.jdbc.url")]:
    bad = env.leafd(name, seg_props(db, **extra), wait_ready=False)
    rc = bad.wait_exit(20)
    text = bad.log_text()
    check(rc == 1 and key in text, "%s: exit 1 naming %s (got %r; %r)" % (name, key, rc, text[-400:]))
    bad.proc = None
log("an unreachable database is not: the node runs and /ready says 503")
gone = env.leafd("unreachable", seg_props(db, **{"leaf.jdbc.url": "jdbc:mysql://127.0.0.1:%d/leaf"
                                                 % free_port()}), wait_ready=False)
check(gone.wait_exit(2) is None, "unreachable database: still running after 2 s")
st, _, _ = gone.get("/ready")
check(st == 503, "unreachable database: /ready 503 (got %d)" % st)
env.finish()
