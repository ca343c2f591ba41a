"""Opaque IDs (docs/id-shapes.md): with leafd.opaque.key set,
GET /api/opaque/get/{tag} and RESP keys opaque:<tag> return the tag's segment
IDs through a keyed permutation of [1, 2^63); GET /decodeOpaqueId?id=N
(admin) returns the segment ID.

Two nodes with one key on one tag: 200,000 opaque IDs, all unique, each
decodable (pipelined decodes) to a segment ID different from itself; the
decoded IDs are unique too and each node's ascend in issue order. RESP INCR
and LEAF.IDS work, INCRBY is refused (opaque IDs are not consecutive); the
decoder is an admin endpoint; a node without the key answers 503. With
users on, opaque IDs need an opaque:<tag> grant and ranges a segment:<tag>
one; the decoder needs admin."""
import base64
import json
import os
import subprocess
import threading

from leafdtest import (Env, RespStream, check, decode_opaque, log, seg_props,
                       wait_until)

KEY = "000102030405060708090a0b0c0d0e0f"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEAFCTL = os.path.join(ROOT, "tools", "programs", "leafctl")
TOTAL = 200000


def props(db, **extra):
    return seg_props(db, **dict({"leafd.opaque.key": KEY}, **extra))


def decode_all(node, ids):
    return decode_opaque(node, ids, "orders")


class Puller(threading.Thread):
    def __init__(self, node, n):
        super().__init__(daemon=True)
        self.node, self.n, self.ids, self.error = node, n, [], None

    def run(self):
        try:
            while len(self.ids) < self.n:
                self.ids += self.node.get_ids("/api/opaque/get/orders?count=%d"
                                              % min(10000, self.n - len(self.ids)))
        except Exception as e:  # noqa: BLE001 - reported below
            self.error = repr(e)


env = Env()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('orders', 1, 5000)")
nodes = [env.leafd("n%d" % i, props(db), resp=True) for i in (1, 2)]

log("two nodes, %d opaque IDs of one tag" % TOTAL)
pullers = [Puller(n, TOTAL // 2) for n in nodes]
for p in pullers:
    p.start()
for p in pullers:
    p.join(120)
for p in pullers:
    check(p.error is None and len(p.ids) == TOTAL // 2, "%s: %d IDs, error %s"
          % (p.node.name, len(p.ids), p.error))
all_ids = [x for p in pullers for x in p.ids]
check(len(set(all_ids)) == len(all_ids) == TOTAL, "%d opaque IDs, all unique" % len(set(all_ids)))
check(all(0 < x < (1 << 63) for x in all_ids), "every opaque ID is in [1, 2^63)")
big = sum(1 for x in all_ids if x >= 1 << 53)
check(big > TOTAL * 0.99, "they spread over the whole domain (%d of %d above 2^53)" % (big, TOTAL))

log("decoding all of them (pipelined, through the node that issued each)")
plains = []
for p in pullers:
    dec = decode_all(p.node, p.ids)
    check(None not in dec, "%s: every opaque ID decodes" % p.node.name)
    dec = [d for d in dec if d is not None]
    check(dec == sorted(dec), "%s: the decoded segment IDs ascend in issue order" % p.node.name)
    check(all(d != o for d, o in zip(dec, p.ids)), "%s: no opaque ID equals its segment ID"
          % p.node.name)
    plains += dec
check(len(set(plains)) == TOTAL, "the segment IDs behind them are unique (%d)" % len(set(plains)))
check(max(plains) < 1 << 32, "and are plain small segment IDs (max %d)" % max(plains))
other = decode_all(nodes[1], pullers[0].ids[:1000])
check(other == plains[:1000], "either node decodes any node's opaque IDs (one key)")

log("RESP: INCR, LEAF.IDS, INCRBY refused")
r = RespStream(nodes[0].resp_port)
one = r.call("INCR", "opaque:orders")
arr = r.call("LEAF.IDS", "opaque:orders", 5)
bad = r.call("INCRBY", "opaque:orders", 5)
check(isinstance(one, int) and one > 0 and one not in all_ids, "INCR opaque:orders -> %r" % one)
check(isinstance(arr, list) and len(arr) == 5 and not set(arr) & set(all_ids + [one]),
      "LEAF.IDS opaque:orders 5 -> 5 new IDs")
check(str(bad).startswith("WRONG_MODE opaque IDs are not consecutive"), "INCRBY refused: %r" % bad)
seg = decode_all(nodes[0], [one] + arr)
check(seg == sorted(seg) and seg[0] > max(plains[:TOTAL // 2]),
      "they decode to the next segment IDs: %r" % seg)
r.close()

log("the decoder is admin; bad input; a node without the key")
st, body, _ = nodes[0].get("/decodeOpaqueId?id=0")
check(st == 400 and "bad_opaque_id" in body, "id=0 -> 400 (%d %s)" % (st, body))
st, body, _ = nodes[0].get("/decodeOpaqueId?id=9223372036854775808")
check(st == 400, "id=2^63 -> 400 (%d)" % st)
admin = env.leafd("admin", props(db, **{"leafd.admin.token": "s3cret-s3cret-s3cret"}))
st, body, _ = admin.get("/decodeOpaqueId?id=%d&biz_tag=orders" % all_ids[0])
check(st == 401, "with leafd.admin.token set, no token -> 401 (%d)" % st)
st, body, _ = admin.get("/decodeOpaqueId?id=%d&biz_tag=orders" % all_ids[0],
                        headers={"Authorization": "Bearer s3cret-s3cret-s3cret"})
check(st == 200 and json.loads(body)["segment_id"] == str(plains[0]),
      "with the token -> the segment ID (%s)" % body)
plain = env.leafd("plain", {k: v for k, v in props(db).items() if k != "leafd.opaque.key"})
st, body, _ = plain.get("/api/opaque/get/orders")
check(st == 503 and "opaque_disabled" in body, "no key: 503 opaque_disabled (%d %s)" % (st, body))
for n in nodes + [admin, plain]:
    check(n.stop() == 0, "%s stops cleanly" % n.name)

log("with users on: opaque IDs need an opaque:<tag> grant, ranges a segment:<tag> one")
zk = env.zookeeper()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('billing', 1, 100)")
au = env.leafd("au", props(db, **{"leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0", "leafd.admin.token": "root-tok-0123456789",
                                  "leaf.name": "shapes", "leaf.snowflake.zk.address": zk.address(),
                                  "leafd.snowflake.advertise.ip": "127.0.0.1"}), resp=True)
r = subprocess.run([LEAFCTL, "user", "add", "shop", "--grant", "opaque:orders:ids",
                    "--grant", "segment:orders:ids", "-c", au.conf],
                   capture_output=True, text=True, timeout=30)
check(r.returncode == 0, "leafctl user add shop: %s" % (r.stdout + r.stderr)[:200])
secret = json.loads(r.stdout)["secret"] if r.returncode == 0 else "x"
basic = {"Authorization": "Basic " + base64.b64encode(("shop:" + secret).encode()).decode()}
check(wait_until(lambda: au.get("/api/opaque/get/orders", headers=basic)[0] == 200, 5),
      "HTTP opaque IDs of a granted tag: 200")
st, _, _ = au.get("/api/opaque/get/billing", headers=basic)
check(st == 403, "HTTP opaque IDs of another tag: 403 (%d)" % st)
st, _, _ = au.get("/api/segment/range/billing?count=5", headers=basic)
check(st == 403, "a range of another tag: 403 (%d)" % st)
st, _, _ = au.get("/api/segment/range/orders?count=5", headers=basic)
check(st == 200, "a range of the granted tag: 200 (%d)" % st)
st, _, _ = au.get("/decodeOpaqueId?id=5", headers=basic)
check(st == 403, "the decoder needs admin: 403 for a user without it (%d)" % st)
st, _, _ = au.get("/decodeOpaqueId?id=5", headers={"Authorization": "Bearer root-tok-0123456789"})
check(st == 200, "the admin token decodes (%d)" % st)
r = RespStream(au.resp_port)
check(r.call("AUTH", "shop", secret) == "OK", "RESP AUTH shop")
ok = r.call("INCR", "opaque:orders")
denied = r.call("INCR", "opaque:billing")
check(isinstance(ok, int), "RESP INCR opaque:orders: an ID (%r)" % ok)
check(str(denied).startswith("NOPERM"), "RESP INCR opaque:billing: NOPERM (%r)" % denied)
r.close()
check(au.stop() == 0, "au stops cleanly")
env.finish()
