"""One ZooKeeper session per process (docs/RELIABILITY.md).

A node with every mode on (snowflake, segments, sequences, users and
permissions, RESP, the /cluster survey) holds exactly one TCP connection to
ZooKeeper. When that one session expires, every service comes back on the
new one by itself: the snowflake node re-creates its ephemeral node, the
sequence primary gets in line again and serves, the users stay loaded and
changes made meanwhile arrive, and still one connection.
"""
import base64
import json
import os
import subprocess
import time

from leafdtest import Env, RespError, RespStream, check, http, log, wait_until
from zkhelpers import cli_list, expire_session, session_id, zk_props

TOKEN = "one-session-admin-token-0123456789"
LEAFCTL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "programs", "leafctl")


def zk_connections(pid, zk_port):
    """Established TCP connections of process pid to 127.0.0.1:zk_port."""
    inodes = set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    n = 0
    for table in ("/proc/%d/net/tcp" % pid, "/proc/%d/net/tcp6" % pid):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            remote_port = int(f[2].split(":")[1], 16)
            if f[3] == "01" and remote_port == zk_port and f[9] in inodes:  # 01: ESTABLISHED
                n += 1
    return n


def reader_secret(r):
    return json.loads(r.stdout)["secret"]


def basic(user, secret):
    raw = ("%s:%s" % (user, secret)).encode()
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


env = Env()
zk = env.zookeeper()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('orders', 1, 100, 'o')")
props = zk_props(zk.address(), name="one", **{
    "leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(), "leaf.jdbc.username": "root",
    "leaf.jdbc.password": "", "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
    "leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0", "leafd.admin.token": TOKEN,
    "leafd.zk.session.timeout.ms": "4000"})
n = env.leafd("n", props, resp=True)
zk_port = int(zk.address().rsplit(":", 1)[1])

r = subprocess.run([LEAFCTL, "user", "add", "app", "--grant", "*:ids,create", "-c", n.conf],
                   capture_output=True, text=True, timeout=30)
check(r.returncode == 0, "leafctl user add app: %s" % (r.stdout + r.stderr).strip()[:200])
auth = basic("app", json.loads(r.stdout)["secret"])


def ids_ok():
    got = {}
    for path in ("/api/snowflake/get/a", "/api/segment/get/orders", "/api/sequence/get/seq1"):
        st, body, _ = http(n.port, path, headers=auth)
        got[path] = st
    return got if all(v == 200 for v in got.values()) else None


check(wait_until(ids_ok, 20, 0.2), "snowflake, segment and sequence IDs with a user's credentials")

log("autocreate needs the 'create' right (docs/SECURITY.md), over HTTP and RESP")
r = subprocess.run([LEAFCTL, "user", "add", "reader", "--grant", "sequence:a.*:ids", "-c", n.conf],
                   capture_output=True, text=True, timeout=30)
reader = basic("reader", json.loads(r.stdout)["secret"])
wait_until(lambda: http(n.port, "/api/sequence/get/a.flood1", headers=reader)[0] != 401, 5, 0.1)
st, body, _ = http(n.port, "/api/sequence/get/a.flood1", headers=reader)
check(st == 404 and "unknown_sequence" in body, "ids alone: an unknown sequence is not created (%d)" % st)
rs = RespStream(n.resp_port)
check(rs.call("AUTH", "reader", reader_secret(r)) == "OK", "RESP AUTH as the reader")
reply = rs.call("INCR", "sequence:a.flood2")
check(isinstance(reply, RespError) and "UNKNOWN" in reply.upper(),
      "RESP INCR with ids alone: not created (%r)" % reply)
hs = RespStream(n.resp_port)
reply = hs.call("HELLO", "2", "AUTH", "reader", reader_secret(r), "BOGUS")
check(isinstance(reply, RespError) and "Syntax" in reply, "HELLO with a bad option: an error (%r)" % reply)
reply = hs.call("INCR", "sequence:a.made")
check(isinstance(reply, RespError) and reply.startswith("NOAUTH"),
      "and the connection is not logged in by its AUTH part (%r)" % reply)
check(http(n.port, "/api/sequence/get/a.made", headers=auth)[0] == 200,
      "a user with create on it creates it by asking")
check(http(n.port, "/api/sequence/get/a.made", headers=reader)[0] == 200, "then the reader gets IDs")
ADMIN = {"Authorization": "Bearer " + TOKEN}
check(http(n.port, "/cluster", headers=ADMIN)[0] == 200, "/cluster answers (the survey reads ZooKeeper)")
time.sleep(1.5)  # the survey's first round
conns = zk_connections(n.proc.p.pid, zk_port)
log("connections to ZooKeeper with every mode on: %d" % conns)
check(conns == 1, "one connection to ZooKeeper per process with every mode on (got %d)" % conns)
st, body, _ = http(n.port, "/cluster", headers=ADMIN)
check( "127.0.0.1:%d" % n.port in body, "/cluster lists this node from ZooKeeper")

sid = session_id(n)
check(sid is not None, "leafd logs its one session id")
# zk_expire attaches a second handle to the session and closes it; now and then (a loaded
# machine) the node's own reconnect wins that race and the session lives on: try again.
new_sid = None
for attempt in range(3):
    check(expire_session(zk.address(), sid), "the one session expired (zk_expire)")
    new_sid = wait_until(lambda: session_id(n) if session_id(n) != sid else None, 10)
    if new_sid is not None:
        break
    log("the session survived zk_expire (attempt %d): again" % (attempt + 1))
check(new_sid is not None, "a new session after the expiry (%s)" % new_sid)
eph = "127.0.0.1:%d" % n.port
check(wait_until(lambda: eph in (cli_list(zk, "/snowflake/one/leaf_temporary") or []), 20, 0.5),
      "snowflake: the ephemeral node is back")
check(wait_until(ids_ok, 20, 0.2), "every mode serves again on the new session (users still loaded)")
r = subprocess.run([LEAFCTL, "user", "add", "late", "--grant", "snowflake:*:ids", "-c", n.conf],
                   capture_output=True, text=True, timeout=30)
check(r.returncode == 0, "a user added after the expiry: %s" % (r.stdout + r.stderr).strip()[:200])
late = basic("late", json.loads(r.stdout)["secret"])
check(wait_until(lambda: http(n.port, "/api/snowflake/get/a", headers=late)[0] == 200, 5, 0.1),
      "users: a change made on the new session arrives")
conns = zk_connections(n.proc.p.pid, zk_port)
check(conns == 1, "still one connection after the expiry (got %d)" % conns)
metrics = n.get("/metrics")[1]
check("leafd_zk_session_expirations_total 1" in metrics and "leafd_zk_session_connected 1" in metrics,
      "leafd_zk_session_* describe the one session: connected, one expiry")

log("a node with sequences only (no snowflake) reports its session too")
seq_only = {k: v for k, v in props.items() if not k.startswith("leafd.auth") and k != "leafd.admin.token"}
seq_only["leaf.snowflake.enable"] = "false"
s2 = env.leafd("s2", seq_only)
m2 = s2.get("/metrics")[1]
check("leafd_zk_session_connected 1" in m2, "sequences-only node: leafd_zk_session_connected 1")
check(zk_connections(s2.proc.p.pid, zk_port) == 1, "sequences-only node: one connection")
check(s2.stop() == 0, "graceful stop of the sequences-only node")
text = n.log_text()
check(text.count("opened a new ZooKeeper session after expiry") == 1,
      "one reconnect path: one new session for all services")
check(n.stop() == 0, "graceful stop")
check(not (cli_list(zk, "/leafd/one/primary") or []), "the election node is gone at the stop")
env.finish()
