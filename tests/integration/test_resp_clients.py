"""The RESP port with the real Redis clients, unchanged (docs/reference/resp.md).

Covers, on a static-worker snowflake node with leafd.resp.listen set:
redis-cli one-shot, -r N (repeat), -3 (RESP3) and interactive (on a pty);
inline commands over a raw socket (pipelined, quoted, LF-only, QUIT);
redis-py (Debian's python3-redis 4.3.4): a plain client with the connection
commands it sends (AUTH, SELECT, CLIENT, INFO, ECHO, CONFIG GET, COMMAND, COMMAND DOCS as
Redis 7 answers it),
a non-transactional pipeline with an error in the middle; HELLO 3 / HELLO 2 /
RESET over a raw socket (redis-py 4.3.4 has no RESP3); ioredis (npm, installed
into LEAFD_NODE_DIR; skipped with a message if node/npm or the install fail),
which sends INFO on connect and waits for loading:0; redis-benchmark with a
custom command and its PING tests (it asks CONFIG GET first); and the RESP
families on /metrics afterwards.

Run by ctest with /usr/bin/python3, the interpreter python3-redis belongs to.
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import time

import redis

from leafdtest import (Env, RespError, RespStream, check, log, resp_command, static_props,
                       wait_until)

IOREDIS = "ioredis@5"


def cli(port, *args, timeout=30):
    """redis-cli one-shot; returns (exit code, stdout lines)."""
    r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port)] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout.splitlines()


def cli_interactive(port, lines, timeout=20):
    """redis-cli's REPL on a pseudo-terminal (TERM=dumb: no cursor queries);
    types the lines, the last one being quit; returns everything shown."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execvp("redis-cli", ["redis-cli", "-h", "127.0.0.1", "-p", str(port)])
    out, end = b"", time.time() + timeout
    os.write(fd, "".join(l + "\n" for l in lines).encode())
    while time.time() < end:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: redis-cli exited
                break
            if not chunk:
                break
            out += chunk
    if os.waitpid(pid, os.WNOHANG) == (0, 0):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.close(fd)
    return out.decode("utf-8", "replace").replace("\r", "")


def metric(text, name, **labels):
    """The value of one sample of /metrics, or None."""
    want = ",".join('%s="%s"' % kv for kv in labels.items())
    for line in text.splitlines():
        if line.startswith(name + "{") and line.split("}")[0][len(name) + 1:] == want:
            return float(line.rsplit(" ", 1)[1])
    return None


def served(text, route, status):
    """leafd_http_requests_total of one RESP command and outcome (0 if absent)."""
    return metric(text, "leafd_http_requests_total", protocol="resp", route=route,
                  status=status) or 0


def ascending(xs):
    return all(a < b for a, b in zip(xs, xs[1:]))


t_start = time.time()
env = Env()
node = env.leafd("n1", static_props(worker=5), resp=True)
port = node.resp_port

log("redis-cli one-shot, -r N, -3")
rc, out = cli(port, "PING")
check(rc == 0 and out == ["PONG"], "redis-cli PING: %d %r" % (rc, out))
rc, out = cli(port, "INCR", "snowflake:cli")
check(rc == 0 and len(out) == 1 and out[0].isdigit() and int(out[0]) > 0,
      "redis-cli INCR snowflake:cli -> one positive integer: %r" % out)
rc, out = cli(port, "LEAF.IDS", "snowflake:cli", "5")
ids = [int(x) for x in out if x.isdigit()]
check(rc == 0 and len(ids) == 5 and ascending(ids), "LEAF.IDS n=5 -> 5 ascending: %r" % out)
rc, out = cli(port, "-r", "50", "INCR", "snowflake:cli")
ids = [int(x) for x in out if x.isdigit()]
check(rc == 0 and len(ids) == 50 and ascending(ids), "redis-cli -r 50 INCR: 50 ascending IDs")
rc, out = cli(port, "INCRBY", "snowflake:cli", "3")
check(out and out[0].startswith("WRONG_MODE") and "LEAF.IDS" in out[0],
      "INCRBY on snowflake names LEAF.IDS: %r" % out)
rc, out = cli(port, "-3", "--no-raw", "LEAF.IDS", "snowflake:cli", "2")
check(rc == 0 and len(out) == 2 and all("(integer)" in l for l in out),
      "redis-cli -3 (HELLO 3 first) still gets integer arrays: %r" % out)

log("redis-cli interactive (on a pty)")
shown = cli_interactive(port, ["PING", "INCR snowflake:repl", "hello 3",
                               "LEAF.IDS snowflake:repl 2", "client getname", "quit"])
check("PONG" in shown, "REPL: PING answered")
check(len(re.findall(r"\(integer\) \d{15,}", shown)) >= 3, "REPL: INCR and LEAF.IDS integers shown")
check('"proto" => (integer) 3' in shown, "REPL: HELLO 3 shown as a map")
check("(nil)" in shown, "REPL: CLIENT GETNAME nil")
check("ERR" not in shown and "Error" not in shown, "REPL: no error (COMMAND DOCS on start)")

log("inline commands over a raw socket")
s = RespStream(port)
s.send(b"PING\r\nINCR snowflake:inl\r\nLEAF.IDS snowflake:inl 3\n\r\nECHO \"two words\"\r\n"
       b"ECHO 'it\\'s'\r\n  incr   snowflake:inl  \r\n")
got = [s.read_reply() for _ in range(6)]
check(got[0] == "PONG", "inline PING: %r" % got[0])
check(isinstance(got[1], int) and isinstance(got[2], list) and len(got[2]) == 3
      and ascending([got[1]] + got[2] + [got[5]]), "inline INCR / LEAF.IDS (LF only) ascend: %r" % got)
check(got[3] == "two words", "inline double quotes: %r" % got[3])
check(got[4] == "it's", "inline single quotes with an escape: %r" % got[4])
s.send(b"FOO bar\r\nINCR\r\n")
e1, e2 = s.read_reply(), s.read_reply()
check(e1 == "ERR unknown command 'FOO', with args beginning with: 'bar' ", "inline unknown: %r" % e1)
check(e2 == "ERR wrong number of arguments for 'incr' command", "inline arity: %r" % e2)
s.send(b"PING\r\nQUIT\r\nINCR snowflake:inl\r\n")
check(s.read_reply() == "PONG" and s.read_reply() == "OK", "inline QUIT: +OK")
check(s.closed_by_server(3), "then closed, the command after QUIT not answered: %r" % s.buf)
s.close()
s = RespStream(port)
v = s.call("INCR", "segment:x")
check(isinstance(v, RespError) and v.startswith("SEGMENT_DISABLED "), "segment off -> %r" % v)
s.close()

log("redis-py: plain client")
r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10, client_name="pyclient",
                username="app", password="anything")
check(r.ping() is True, "ping")
# redis-py's incr() is its incrby() (`incr = incrby` in redis/commands/core.py): it sends
# INCRBY key 1. On a segment key that is a block of one; on a snowflake key leafd refuses
# every INCRBY, so the most common redis-py call fails there. docs/reference/resp.md says both
# "works unchanged with redis-py" and "INCRBY on a snowflake key: an error"; a block of one
# is trivially consecutive, so INCRBY snowflake:k 1 should answer as INCR. Left failing.
try:
    v = r.incr("snowflake:py")
    check(isinstance(v, int) and v > 0, "redis-py r.incr(snowflake key) -> an ID: %r" % v)
except redis.ResponseError as e:
    check(False, "redis-py r.incr('snowflake:py') sends INCRBY snowflake:py 1 and leafd "
          "refuses it: %s" % e)
a = r.execute_command("INCR", "snowflake:py")
b = r.execute_command("LEAF.IDS", "snowflake:py", 4)
check(isinstance(a, int) and len(b) == 4 and ascending([a] + b), "incr then LEAF.IDS ascend")
try:
    r.incrby("snowflake:py", 3)
    check(False, "incrby snowflake should be an error")
except redis.ResponseError as e:
    check(str(e).startswith("WRONG_MODE") and "LEAF.IDS" in str(e), "incrby snowflake: %s" % e)
check(r.client_getname() == "pyclient", "client_name set on connect (CLIENT SETNAME)")
check(isinstance(r.client_id(), int), "CLIENT ID")
check(r.echo("hé\x00llo") == "hé\x00llo".encode(), "ECHO binary-safe")
check(r.config_get("*") == {}, "CONFIG GET -> empty")
info = r.info()
check(info.get("loading") == 0 and info.get("redis_mode") == "standalone", "INFO: loading 0")
leafd_info = r.info("leafd")
check(leafd_info.get("snowflake_worker_id") == 5 and leafd_info.get("snowflake_ready") == 1,
      "INFO leafd: worker 5, ready: %r" % leafd_info)
check(r.info("persistence").get("loading") == 0, "INFO persistence")
check(r.execute_command("COMMAND COUNT") >= 18, "COMMAND COUNT")
rows = r.execute_command("COMMAND INFO", "incr", "nosuch")
check(rows[0][0] == b"incr" and rows[0][1] == 2 and rows[1] is None, "COMMAND INFO: %r" % rows)
table = r.execute_command("COMMAND")  # redis-py parses it into a dict by name
check("leaf.ids" in table and table["incrby"]["arity"] == 3, "COMMAND lists LEAF.IDS, INCRBY")


def pairs(flat):
    """A RESP2 map (a flat list of names and values) as a dict with text keys."""
    return {k.decode(): v for k, v in zip(flat[::2], flat[1::2])}


# COMMAND DOCS as Redis 7 answers it (redis-py 4.3.4 leaves COMMAND DOCS unparsed: RESP2 pairs).
docs = pairs(r.execute_command("COMMAND DOCS"))
check(len(docs) == r.execute_command("COMMAND COUNT") and "leaf.ids" in docs,
      "COMMAND DOCS documents every command: %r" % sorted(docs))
incrby = pairs(docs["incrby"])
check(incrby.get("group") == b"string" and incrby.get("since") == b"1.0.0"
      and incrby.get("complexity") == b"O(1)" and b"count IDs" in incrby.get("summary", b""),
      "COMMAND DOCS incrby: summary, since, group, complexity: %r" % incrby)
args = [pairs(a) for a in incrby.get("arguments", [])]
check([(a["name"], a["type"]) for a in args] == [(b"key", b"key"), (b"count", b"integer")]
      and args[0].get("key_spec_index") == 0, "COMMAND DOCS incrby: key, count: %r" % args)
hello = pairs(pairs(r.execute_command("COMMAND DOCS", "hello", "nosuch"))["hello"])
block = pairs(hello["arguments"][0])
auth = pairs(block["arguments"][1])
check(block["flags"] == [b"optional"] and auth["token"] == b"AUTH"
      and [pairs(a)["name"] for a in auth["arguments"]] == [b"username", b"password"],
      "COMMAND DOCS hello: [protover [AUTH username password] [SETNAME clientname]]: %r" % hello)
check(pairs(docs["leaf.ids"]).get("module") == b"leafd", "LEAF.IDS is leafd's own (module)")
check(r.execute_command("COMMAND DOCS", "nosuch") in ([], {}), "COMMAND DOCS of no command: empty")
rc, out = cli(port, "COMMAND", "DOCS", "get")
check(rc == 0 and "summary" in out and "sequence keys only" in " ".join(out),
      "redis-cli COMMAND DOCS get: %r" % out)
check(r.execute_command("READONLY") and r.execute_command("READWRITE"), "READONLY/READWRITE")
try:
    r.execute_command("CLUSTER", "INFO")
    check(False, "CLUSTER INFO should be an error")
except redis.ResponseError as e:
    check("cluster support disabled" in str(e), "CLUSTER: %s" % e)
r1 = redis.Redis(host="127.0.0.1", port=port, db=1, socket_timeout=10)
try:
    r1.ping()
    check(False, "db=1 must be refused")
except redis.ResponseError as e:
    check(str(e) == "DB index is out of range", "SELECT 1: %s" % e)
r1.connection_pool.disconnect()
r0 = redis.Redis(host="127.0.0.1", port=port, db=0, password="x", socket_timeout=10)
check(r0.ping(), "SELECT 0 and AUTH x")
r0.connection_pool.disconnect()

log("redis-py: pipeline (transaction=False) with an error in the middle")
p = r.pipeline(transaction=False)
for i in range(200):
    if i == 100:
        p.execute_command("INCR", "nokey")
    elif i % 3 == 0:
        p.execute_command("LEAF.IDS", "snowflake:pipe", 2)
    else:
        p.execute_command("INCR", "snowflake:pipe")
res = p.execute(raise_on_error=False)
check(len(res) == 200 and isinstance(res[100], redis.ResponseError)
      and str(res[100]).startswith("BAD_KEY"), "200 replies, the error at index 100")
flat = [x for i, v in enumerate(res) if i != 100 for x in (v if isinstance(v, list) else [v])]
check(len(flat) == 199 + 67 and ascending(flat), "pipelined IDs in order, ascending")

log("HELLO 3 / HELLO 2 / RESET over a raw socket (redis-py 4.3.4 speaks RESP2 only)")
s = RespStream(port)
h = s.call("HELLO", "3", "AUTH", "u", "p", "SETNAME", "r3")
check(isinstance(h, dict) and h.get("proto") == 3 and h.get("server") == "redis"
      and h.get("mode") == "standalone" and h.get("role") == "master" and "id" in h,
      "HELLO 3 -> RESP3 map: %r" % h)
check(s.call("CLIENT", "GETNAME") == "r3", "SETNAME in HELLO")
s.send(resp_command("CLIENT", "SETNAME", "") + resp_command("CLIENT", "GETNAME"))
s.read_reply()
check(s.read_reply() is None, "GETNAME nil in RESP3 (_)")
ids3 = s.call("LEAF.IDS", "snowflake:r3", 3)
check(isinstance(ids3, list) and len(ids3) == 3 and ascending(ids3), "LEAF.IDS in RESP3")
inf = s.call("INFO", "persistence")
check(isinstance(inf, str) and "loading:0" in inf, "INFO in RESP3 (verbatim): %r" % inf[:40])
check(isinstance(s.call("CONFIG", "GET", "save"), dict), "CONFIG GET -> empty map in RESP3")
check(str(s.call("HELLO", "4")).startswith("NOPROTO"), "HELLO 4 -> NOPROTO")
h2 = s.call("HELLO", "2")
check(isinstance(h2, list) and len(h2) == 14 and h2[5] == 2, "HELLO 2 -> flat array, proto 2")
s.call("HELLO", "3")
check(s.call("RESET") == "RESET", "RESET")
s.send(resp_command("CLIENT", "GETNAME"))
check(s._line() == b"$-1", "after RESET: RESP2 again (nil is $-1)")
s.close()

log("ioredis (npm)")
node_dir = os.environ.get("LEAFD_NODE_DIR", os.path.join(env.dir, "node"))
mods = os.path.join(node_dir, "node_modules")
if not shutil.which("node") or not shutil.which("npm"):
    log("SKIP ioredis: node or npm is not installed")
else:
    if not os.path.exists(os.path.join(mods, "ioredis", "package.json")):
        os.makedirs(node_dir, exist_ok=True)
        try:
            inst = subprocess.run(["npm", "install", "--prefix", node_dir, "--no-audit", "--no-fund",
                                   "--fetch-retries=1", IOREDIS],
                                  capture_output=True, text=True, timeout=90)
            if inst.returncode != 0:
                log("npm install failed: " + inst.stderr[-500:])
        except subprocess.TimeoutExpired:
            log("npm install timed out")
    if not os.path.exists(os.path.join(mods, "ioredis", "package.json")):
        log("SKIP ioredis: could not install %s into %s" % (IOREDIS, node_dir))
    else:
        script = os.path.join(env.dir, "ioredis_check.js")
        with open(script, "w") as f:
            f.write(r"""
const Redis = require("ioredis");
const r = new Redis({host: "127.0.0.1", port: +process.argv[2], connectionName: "io",
                     stringNumbers: true, maxRetriesPerRequest: 1, retryStrategy: () => null});
(async () => {
  const o = {};
  await new Promise((ok, bad) => { r.once("ready", ok); r.once("error", bad); });
  o.incr = await r.incr("snowflake:io");
  o.ids = await r.call("LEAF.IDS", "snowflake:io", "3");
  try { await r.incrby("snowflake:io", 2); } catch (e) { o.wrong = e.message; }
  const p = r.pipeline();
  for (let i = 0; i < 50; i++) p.incr("snowflake:io");
  o.pipe = (await p.exec()).map(([e, v]) => e ? "ERR " + e.message : v);
  o.name = await r.client("GETNAME");
  o.info = await r.info("persistence");
  console.log(JSON.stringify(o));
  r.disconnect();
})().catch(e => { console.error("fatal: " + e); process.exit(1); });
""")
        before = node.get("/metrics")[1]
        io = subprocess.run(["node", script, str(port)], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, NODE_PATH=mods))
        check(io.returncode == 0, "ioredis script ran: %s" % io.stderr[-500:])
        if io.returncode == 0:
            o = json.loads(io.stdout.strip().splitlines()[-1])
            seq = [int(o["incr"])] + [int(x) for x in o["ids"]] + [int(x) for x in o["pipe"]]
            check(len(seq) == 54 and ascending(seq), "ioredis: INCR, LEAF.IDS, 50 pipelined ascend")
            check(o.get("wrong", "").startswith("WRONG_MODE"), "ioredis: INCRBY snowflake error")
            check(o["name"] == "io" and "loading:0" in o["info"], "ioredis: connectionName, INFO")
        after = node.get("/metrics")[1]
        check(served(after, "info", "ok") - served(before, "info", "ok") >= 2,
              "ioredis sent INFO for its ready check")

log("redis-benchmark: a custom command, and its PING tests")


def benchmark(*args):
    b = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-n", "2000",
                        "-c", "8", "-P", "4", "--csv"] + list(args),
                       capture_output=True, text=True, timeout=60)
    return b.returncode, b.stdout + b.stderr


before = node.get("/metrics")[1]
rc, out = benchmark("INCR", "snowflake:bench")
rows = [l for l in out.splitlines() if l.startswith('"INCR snowflake:bench"')]
check(rc == 0 and len(rows) == 1 and float(rows[0].split(",")[1].strip('"')) > 0,
      "redis-benchmark INCR: a CSV row with its rate: %r" % out[-400:])
check("Error from server" not in out and "ERROR" not in out, "no error reply during the benchmark")
after = node.get("/metrics")[1]
n_incr = [served(t, "incr", "ok") for t in (before, after)]
check(n_incr[1] - n_incr[0] == 2000, "all 2000 INCR served: %r" % (n_incr[1] - n_incr[0]))
check(served(after, "config", "ok") >= 2, "redis-benchmark's CONFIG GET answered (empty)")
rc, out = benchmark("-t", "ping")
check(rc == 0 and '"PING_INLINE"' in out and '"PING_MBULK"' in out and "Error" not in out,
      "redis-benchmark -t ping (inline and multibulk): %r" % out[-300:])

log("idle RESP connections are closed as HTTP ones are (leafd.http.idle.timeout.ms)")
idle = env.leafd("idle", static_props(worker=6, **{"leafd.http.idle.timeout.ms": "500"}), resp=True)
s = RespStream(idle.resp_port)
check(s.call("PING") == "PONG", "a connection to a node with a 500 ms idle timeout")
t0 = time.time()
check(s.closed_by_server(5), "closed when idle")
check(0.4 < time.time() - t0 < 3, "after about the idle timeout (%.2f s)" % (time.time() - t0))
s.close()
check(idle.stop() == 0, "that node stops cleanly")

log("/metrics: the RESP families")
m = node.get("/metrics")[1]
for route, status in [("leaf.ids", "ok"), ("incrby", "wrong_mode"), ("unknown", "err"),
                      ("incr", "bad_key"), ("hello", "ok"), ("client", "ok"), ("ping", "ok"),
                      ("quit", "ok"), ("incr", "segment_disabled")]:
    check(served(m, route, status) > 0, "leafd_http_requests_total{protocol=resp,route=%s,"
          "status=%s}" % (route, status))
check(metric(m, "leafd_http_request_duration_seconds_count", protocol="resp", route="incr")
      and metric(m, "leafd_http_request_duration_seconds_bucket", protocol="resp", route="incr",
                 le="+Inf"), "request_duration_seconds histogram for INCR")
r.connection_pool.disconnect()  # Redis.close() in 4.3.4 only returns it to the pool
check(wait_until(lambda: metric(node.get("/metrics")[1], "leafd_http_connections",
                                protocol="resp") == 0, 5), "leafd_http_connections{resp} back to 0")

check(node.stop() == 0, "graceful stop exits 0")
log("took %.1f s" % (time.time() - t_start))
env.finish()
