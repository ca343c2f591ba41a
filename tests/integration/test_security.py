"""The security review's findings (docs/SECURITY.md), each reproduced against a real node (ZooKeeper,
MariaDB, auth on, opaque IDs on): CSRF (415 / 403 cross_origin, nothing
changed), security headers and escaping of ZooKeeper data on the pages, audit
lines, per-tag opaque IDs, case-sensitive tags, /metrics detail behind the
metrics right, one Authorization header. Then the second review's: the audit line never
writes a Basic user field that is no user (a secret typed there), user and sequence names
. and .. are a 400 (not ZooKeeper's 503), a JSON body with something after its object is a
400, and creating a case variant of an existing tag (another tenant's, perhaps) is a 409
tag_conflict, not tag_exists."""
import base64
import json
import re
import subprocess

from leafdtest import Env, check, http, log, raw, wait_until
from zkhelpers import zk_props

TOKEN = "root-token-for-the-security-test"
B = {"Authorization": "Bearer " + TOKEN}
env = Env()
zk = env.zookeeper()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES "
       "('orders.eu', 1, 100, 'a'), ('billing', 1, 100, 'b'), ('mine.dict', 1, 100, 'c')")
n = env.leafd("n0", zk_props(zk.address(), name="sec", **{
    "leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0", "leafd.admin.token": TOKEN, "leaf.segment.enable": "true",
    "leaf.jdbc.url": db.jdbc_url(), "leaf.jdbc.username": "root", "leaf.jdbc.password": "",
    "leafd.opaque.key": "00112233445566778899aabbccddeeff", "leafd.auth.failures.max": "0",
    "leafd.sequence.enable": "true"}))
me = "http://127.0.0.1:%d" % n.port


def curl(*args):
    r = subprocess.run(["curl", "-s", "-o", "/dev/stderr", "-w", "%{http_code}"] + list(args),
                       capture_output=True, text=True, timeout=20)
    return int(r.stdout or 0), r.stderr


log("CSRF: text/plain and foreign origins are refused, nothing changes")
body = '{"biz_tag":"csrf.made","step":10}'
st, out = curl("-X", "POST", "-H", "Authorization: Bearer " + TOKEN, "-H", "Content-Type: text/plain",
               "--data-binary", body, me + "/api/leaf")
check(st == 415 and '"code":"unsupported_media_type"' in out, "text/plain POST: 415 (%d %s)" % (st, out))
st, out = curl("-X", "POST", "-H", "Authorization: Bearer " + TOKEN, "-H", "Content-Type: application/json",
               "-H", "Origin: http://evil.example", "--data-binary", body, me + "/api/leaf")
check(st == 403 and '"code":"cross_origin"' in out, "foreign Origin: 403 cross_origin (%d %s)" % (st, out))
st, out = curl("-X", "PUT", "-H", "Authorization: Bearer " + TOKEN, "-H", "Content-Type: application/json",
               "-H", "Sec-Fetch-Site: cross-site", "--data-binary", '{"biz_tag":"orders.eu","step":7}',
               me + "/api/leaf/step")
check(st == 403, "Sec-Fetch-Site: cross-site: 403 (%d)" % st)
st, out = curl("-X", "POST", "-H", "Authorization: Bearer " + TOKEN, "-H", "Origin: http://evil.example",
               "-H", "Content-Type: application/json", "--data-binary", '{"admin":true}',
               me + "/api/users/ops/grant")
check(st == 403, "a forged grant: 403 (%d)" % st)
st, out = curl("-X", "POST", "-H", "Authorization: Bearer " + TOKEN, "-H", "Content-Type: application/json",
               "-H", "Origin: " + me, "--data-binary", body, me + "/api/leaf")
check(st == 201, "the node's own Origin and JSON: 201 (%d %s)" % (st, out))
check(db.sql("SELECT step FROM leaf_alloc WHERE biz_tag = 'orders.eu'").strip() == "100",
      "the refused step change changed nothing")
raw_dup = raw(n.port, b"GET /api/snowflake/get/a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\n"
              b"Authorization: Bearer b\r\n\r\n")
check(raw_dup.startswith(b"HTTP/1.1 400 "), "two Authorization headers: 400")

log("audit lines")
check(wait_until(lambda: re.search(r'component=audit .*user=admin-token client=127\.0\.0\.1:\d+ '
                                   r'action=leaf_create object=csrf\.made status=201 outcome=ok',
                                   n.log_text()), 5),
      "the created tag has its audit line")
check(re.search(r"component=audit .*action=leaf_create .*status=415 outcome=rejected", n.log_text()),
      "the refused create too")
check(TOKEN not in n.log_text(), "no token in the log")

log("pages: headers, and ZooKeeper data escaped")
# Written with leafd.zk.auth's identity (an anonymous write is refused by the ACL now):
# whatever ZooKeeper holds is escaped anyway.
zk.cli_as("leafd:zk-secret-0", "create", "/snowflake/sec/leaf_temporary/<script>alert(1)<", "x")
for path in ("/", "/cluster", "/cache", "/db"):
    st, page, h = http(n.port, path, headers=B)
    hl = {k.lower(): v for k, v in h.items()}
    check(st == 200 and hl.get("content-security-policy") == "default-src 'none'; style-src 'unsafe-inline'"
          and hl.get("x-frame-options") == "DENY" and hl.get("x-content-type-options") == "nosniff",
          "%s sends the security headers" % path)
    check("<script" not in page, "%s holds no script" % path)
ok = wait_until(lambda: "&lt;script&gt;alert(1)&lt;" in http(n.port, "/cluster", headers=B)[1], 15, 0.5)
check(ok, "/cluster shows the HTML-named peer escaped")

log("tenants: opaque IDs per tag, tags case-sensitive")
st, made, _ = http(n.port, "/api/users", method="POST", headers=B,
                   body='{"name":"t","grants":["*:ids","segment:ORDERS.*:ids"]}')
check(st == 201, "user t: %d %s" % (st, made[:80]))
U = {"Authorization": "Basic " + base64.b64encode(("t:" + json.loads(made)["secret"]).encode()).decode()}
wait_until(lambda: http(n.port, "/api/snowflake/get/x", headers=U)[0] == 200, 5)
mine = [int(x) for x in http(n.port, "/api/opaque/get/mine.dict?count=2000", headers=U)[1].split()]
bill = [int(x) for x in http(n.port, "/api/opaque/get/billing?count=37", headers=U)[1].split()]
check(len(mine) == 2000 and len(bill) == 37, "opaque IDs of both tags")
check(not set(mine) & set(bill), "mine.dict's lookup table decodes none of billing's IDs")
st, dec, _ = http(n.port, "/decodeOpaqueId?id=%d&biz_tag=billing" % bill[0], headers=B)
check(st == 200 and json.loads(dec)["segment_id"] == "1", "decode with the tag: %s" % dec)
st, body2, _ = http(n.port, "/api/segment/range/ORDERS.EU", headers=U)
check(st == 404, "ORDERS.EU never reaches orders.eu (%d %s)" % (st, body2[:80]))

log("audit: a Basic user field that is no user is not written")
typed = "S3cret-typed-as-the-user"
basic = "Basic " + base64.b64encode((typed + ":x").encode()).decode()
st, _, _ = http(n.port, "/api/leaf", method="POST", body='{"biz_tag":"audit.x"}',
                headers={"Authorization": basic})
check(st == 401, "an unknown Basic user: 401 (%d)" % st)
st, _, _ = http(n.port, "/api/leaf", method="POST", body='{"biz_tag":"ORDERS.audit"}', headers=U)
check(st == 403, "user t without the create right: 403 (%d)" % st)
check(wait_until(lambda: re.search(r"component=audit .*user=t client=.* object=ORDERS\.audit "
                                   r"status=403", n.log_text()), 5),
      "a known user is named in the audit line")
check(re.search(r"component=audit .*user=unknown-user client=.* object=audit\.x status=401",
                n.log_text()) and typed not in n.log_text(),
      "the unknown user field is a placeholder, never written")

log("names . and ..: 400, not ZooKeeper's 503")
for name in (".", ".."):
    st, body, _ = http(n.port, "/api/users", method="POST", headers=B,
                       body=json.dumps({"name": name, "grants": []}))
    check(st == 400 and "bad_user_name" in body, "user %r: 400 bad_user_name (%d %s)" % (name, st, body))
    st, body, _ = http(n.port, "/api/sequence", method="POST", headers=B,
                       body=json.dumps({"name": name}))
    check(st == 400 and "bad_request" in body, "sequence %r: 400 (%d %s)" % (name, st, body))
    st, body, _ = http(n.port, "/api/sequence/get/" + name, headers=U)
    check(st == 400 and "bad_tag" in body, "GET sequence %r: 400 bad_tag (%d %s)" % (name, st, body))

log("JSON bodies: nothing after the object")
st, body, _ = http(n.port, "/api/users", method="POST", headers=B,
                   body='{"name":"trail","grants":[]} {"admin":true}')
check(st == 400 and "bad_request" in body, "users: trailing JSON: 400 (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/users/t/grant", method="POST", headers=B,
                   body='{"grants":["*:create"]}garbage')
check(st == 400, "users grant: trailing garbage: 400 (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/sequence", method="POST", headers=B, body='{"name":"trail"} x')
check(st == 400 and "bad_request" in body, "sequence: trailing garbage: 400 (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/users", headers=B)
check(st == 200 and '"trail"' not in body, "no user made by the refused body")

log("a case variant of an existing tag: tag_conflict, not tag_exists")
st, body, _ = http(n.port, "/api/leaf", method="POST", headers=B, body='{"biz_tag":"Billing"}')
check(st == 409 and json.loads(body)["code"] == "tag_conflict" and "billing" not in body,
      "Billing beside billing: 409 tag_conflict, the other tag not named (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/leaf", method="POST", headers=B, body='{"biz_tag":"billing"}')
check(st == 409 and json.loads(body)["code"] == "tag_exists", "billing itself: 409 tag_exists")

log("/metrics: node-level only without the right")
http(n.port, "/api/segment/get/orders.eu", headers=U)
http(n.port, "/api/snowflake/get/x", headers={"Authorization": "Basic " + base64.b64encode(b"no:body").decode()})
anon = http(n.port, "/metrics")[1]
full = http(n.port, "/metrics", headers=B)[1]
check('tag="' not in anon and 'reason="' not in anon and "leafd_http_requests_total" in anon,
      "anonymous /metrics: no tag or reason label, node-level families there")
check('tag="orders.eu"' in full and 'reason="' in full, "the admin token sees all of it")
env.finish()
