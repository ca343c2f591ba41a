"""Clients of March's Redis-protocol service, unchanged (docs/reference/resp.md).

On a static-worker snowflake node with leafd.resp.default.mode = snowflake:
keys without a mode prefix (INCR orders); one-argument AUTH as the user
"default"; redis-py's default pipeline() (MULTI ... EXEC) answers its IDs,
and a transaction aborted by a refused command (EXECABORT) or a DISCARD
issues no ID (leafd_ids_issued_total does not move); and docs/reference/resp.md's ioredis
example run as written (stringNumbers: true; npm, skipped with a message
when node/npm or the install fail), whose IDs above 2^53 come back exact.

Run by ctest with /usr/bin/python3, the interpreter python3-redis belongs to.
"""
import json
import os
import re
import shutil
import subprocess

import redis

from leafdtest import Env, check, log, static_props

IOREDIS = "ioredis@5"


def issued(node):
    """leafd_ids_issued_total{mode="snowflake"}."""
    for line in node.get("/metrics")[1].splitlines():
        if line.startswith('leafd_ids_issued_total{mode="snowflake"}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def ascending(xs):
    return all(a < b for a, b in zip(xs, xs[1:]))


env = Env()
node = env.leafd("n1", static_props(worker=3, **{"leafd.resp.default.mode": "snowflake"}),
                 resp=True)
port = node.resp_port

log("keys without a mode prefix, one-argument AUTH")
r = redis.Redis(host="127.0.0.1", port=port, password="anything", socket_timeout=10)
a = r.incr("orders")  # INCRBY orders 1
b = r.execute_command("INCR", "orders")
c = r.execute_command("LEAF.IDS", "snowflake:orders", 2)
check(isinstance(a, int) and ascending([a, b] + c), "INCR orders = INCR snowflake:orders: %r" % [a, b, c])
check(r.execute_command("AUTH", "secret") in (True, b"OK"), "AUTH secret (user default)")

log("redis-py's default pipeline(): MULTI ... EXEC")
p = r.pipeline()
for _ in range(10):
    p.incr("orders")
p.execute_command("LEAF.IDS", "orders", 3)
res = p.execute()
flat = res[:10] + res[10]
check(len(res) == 11 and len(flat) == 13 and ascending(flat), "pipeline(): 13 ascending IDs: %r" % res)
with r.pipeline() as p:  # the context manager form, and pipeline(transaction=True) spelled out
    p.incr("orders").incr("orders")
    two = p.execute()
check(len(two) == 2 and ascending([flat[-1]] + two), "pipeline() again: %r" % two)

log("an aborted transaction issues nothing")
before = issued(node)
p = r.pipeline()
p.incr("orders")
p.execute_command("LEAF.IDS", "orders", 0)  # BAD_COUNT when sent: the transaction aborts
try:
    p.execute()
    check(False, "a transaction with a refused command must fail")
except redis.exceptions.ExecAbortError as e:
    check("BAD_COUNT" in str(e) or "EXECABORT" in str(e), "EXECABORT: %s" % e)
except redis.ResponseError as e:
    check("BAD_COUNT" in str(e) or "EXECABORT" in str(e), "EXECABORT: %s" % e)
raw = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
conn = raw.connection_pool.get_connection("MULTI")
conn.send_command("MULTI")
conn.send_command("INCR", "orders")
conn.send_command("DISCARD")
got = [conn.read_response() for _ in range(3)]
check(got == [b"OK", b"QUEUED", b"OK"], "MULTI, INCR, DISCARD: %r" % got)
raw.connection_pool.release(conn)
check(issued(node) == before, "EXECABORT and DISCARD issued no ID (%s -> %s)" % (before, issued(node)))
check(r.incr("orders") > two[-1], "the connection works after an aborted transaction")

log("docs/reference/resp.md's ioredis example, as written")
readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "reference", "resp.md")).read()
js = re.search(r"```js\n(.*?)```", readme, re.S)
check(js is not None and "stringNumbers: true" in js.group(1), "docs/reference/resp.md's ioredis example has stringNumbers")
node_dir = os.environ.get("LEAFD_NODE_DIR", os.path.join(env.dir, "node"))
mods = os.path.join(node_dir, "node_modules")
if not shutil.which("node") or not shutil.which("npm"):
    log("SKIP ioredis: node or npm is not installed")
else:
    if not os.path.exists(os.path.join(mods, "ioredis", "package.json")):
        os.makedirs(node_dir, exist_ok=True)
        try:
            subprocess.run(["npm", "install", "--prefix", node_dir, "--no-audit", "--no-fund",
                            "--fetch-retries=1", IOREDIS], capture_output=True, text=True, timeout=90)
        except subprocess.TimeoutExpired:
            log("npm install timed out")
    if not os.path.exists(os.path.join(mods, "ioredis", "package.json")):
        log("SKIP ioredis: could not install %s into %s" % (IOREDIS, node_dir))
    elif js is not None:
        body = js.group(1).replace("port: 6380", "port: %d" % port)
        script = os.path.join(env.dir, "readme_ioredis.js")
        with open(script, "w") as f:
            f.write("(async () => {\n%s\nconsole.log(JSON.stringify({id, ids}));\nr.disconnect();\n"
                    "})().catch(e => { console.error('fatal: ' + e); process.exit(1); });\n" % body)
        io = subprocess.run(["node", script], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, NODE_PATH=mods))
        check(io.returncode == 0, "docs/reference/resp.md's ioredis example ran: %s" % io.stderr[-500:])
        if io.returncode == 0:
            o = json.loads(io.stdout.strip().splitlines()[-1])
            ids = [int(o["id"])] + [int(x) for x in o["ids"]]
            check(all(isinstance(x, str) for x in [o["id"]] + o["ids"]), "IDs come as strings")
            check(len(ids) == 11 and len(set(ids)) == 11 and ascending(ids) and ids[0] > 2 ** 53,
                  "11 distinct ascending IDs above 2^53, exact: %r" % ids)

env.finish()
