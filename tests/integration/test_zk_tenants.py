"""Tenants of a shared ensemble, squatted znodes, credentials in stages
(docs/reference/zookeeper.md, "ACLs").

1. Shared ensemble: the shared parents /snowflake and /leafd, closed by an
   older leafd with cluster A's credentials, are reopened by A; clusters with
   other credentials, without credentials, and a Meituan Leaf style client
   then all register beside A, whose own trees stay closed. A cluster whose
   root the closed parent would keep it from creating exits naming the parent
   and the fix; a node without A's credentials exits naming leafd.zk.auth.
2. Squatting: znodes pre-created with a foreign digest ACL (a user record, a
   worker-ID record) or with a world ACL (a user record holding an admin whose
   secret the planter knows) never yield a served ID or an accepted
   credential: leafd exits 1 naming the znode.
3. Credentials in stages: a node given leafd.zk.auth beside a node without it
   leaves the trees open (the other keeps serving and reporting), and says who
   holds closing back; `leafd --zk-acl close` is refused naming that node; once
   every node authenticates the trees close by themselves; `--zk-acl open`
   reopens and holds them for a node without credentials (a downgrade), and
   `--zk-acl close` ends the hold.
4. A node whose time writes ZooKeeper refuses (an older leafd closed the trees
   with credentials it lacks) is not ready, says why, and issues nothing above
   what ZooKeeper acknowledged until the trees are reopened.
"""
import base64
import hashlib
import json
import os
import subprocess
import time

from leafdtest import LEAFD_BIN, Env, check, log, wait_until
from zkhelpers import zk_props

A, C, ATTACKER = "tenant-a:secret-a-0", "tenant-c:secret-c-0", "attacker:planted-0"
TOKEN = "tenants-admin-token-0123456789"


def digest_id(auth):
    user = auth.split(":", 1)[0]
    return "%s:%s" % (user, base64.b64encode(hashlib.sha1(auth.encode()).digest()).decode())


def refused(out):
    return "Insufficient permission" in out or "NoAuth" in out or "not authenticated" in out


def acl_of(zk, path, auth=None):
    """The ACL lines zkCli prints for path (its scheme,id and perms), without any log noise."""
    out = zk.cli_as(auth, "getAcl", path)
    lines = [l.strip() for l in out.splitlines()]
    return [l for l in lines if l.startswith("'") or l.startswith(": ")]


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


def start_fails(env, name, props, timeout=40):
    """Starts a node that must exit 1; returns its log."""
    n = env.leafd(name, props, wait_ready=False)
    rc = n.wait_exit(timeout)
    check(rc == 1, "%s exits 1 (rc %s)" % (name, rc))
    return n.log_text()


def zk_acl_cmd(props_node, verb):
    r = subprocess.run([LEAFD_BIN, "--zk-acl", verb, "-c", props_node.conf], capture_output=True,
                       text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


env = Env()
zk = env.zookeeper()
addr = zk.address()

# ---- 1. a shared ensemble -------------------------------------------------
# An older leafd of cluster A closed the shared parents with A's credentials.
for parent in ("/snowflake", "/leafd"):
    out = zk.cli_as(A, "create", parent, "{}", "auth::cdrwa,world:anyone:r")
    check("Created" in out, "the shared parent %s pre-closed as an older leafd did: %s" % (parent, out[-200:]))
a = env.leafd("a", zk_props(addr, name="A", **{
    "leafd.zk.auth": "digest:" + A, "leafd.auth.enable": "true", "leafd.admin.token": TOKEN,
    "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true"}))
check("reopened the shared parent /snowflake" in a.log_text(), "A reopens the parents it had closed")
for parent in ("/snowflake", "/leafd"):
    check(acl_of(zk, parent) == ["'world,'anyone", ": cdrwa"], "%s is open to every cluster: %s" %
          (parent, acl_of(zk, parent)))
check(a.get("/ready")[0] == 200, "A is ready on its closed trees")
b = env.leafd("b", zk_props(addr, name="B"))
c = env.leafd("c", zk_props(addr, name="C", **{"leafd.zk.auth": "digest:" + C}))
for n, name in ((b, "B (no credentials)"), (c, "C (other credentials)")):
    st, body, _ = n.get("/api/snowflake/get/x")
    check(st == 200 and int(body) > 0, "cluster %s serves beside A: %d %s" % (name, st, body))
out = zk.cli_as(None, "create", "/snowflake/leafjava", "")
out += zk.cli_as(None, "create", "/snowflake/leafjava/leaf_forever", "")
out += zk.cli_as(None, "create", "/snowflake/leafjava/leaf_forever/127.0.0.1:9999-0000000000",
                 '{"ip":"127.0.0.1","port":"9999","timestamp":1}')
check(out.count("Created") == 3, "a Leaf-style client registers its own cluster: %s" % out[-300:])
# A's own trees stay closed.
for cmd in (("set", "/snowflake/A/leafd_shape", "{}"), ("delete", "/snowflake/A/leafd_marker"),
            ("setAcl", "/leafd/A/primary", "world:anyone:cdrwa"), ("ls", "/leafd/A/users")):
    out = zk.cli_as(None, *cmd)
    check(refused(out), "anonymous %s on A's tree is refused" % " ".join(cmd[:2]))
out = zk.cli_as(C, "set", "/snowflake/A/leafd_shape", "{}")
check(refused(out), "cluster C's credentials cannot write A's tree")
check(acl_of(zk, "/snowflake/C/leafd_shape", C) == ["'digest,'" + digest_id(C), ": cdrwa",
                                                    "'world,'anyone", ": r"],
      "C closes its own tree with its own identity")
# A node of A without the credentials is refused, naming the key.
text = start_fails(env, "a-nocreds", zk_props(addr, name="A"))
check("leafd.zk.auth" in last_line(text), "its last line names leafd.zk.auth: " + last_line(text))
# A parent closed by another owner keeps a new cluster from creating its root.
out = zk.cli_as(ATTACKER, "setAcl", "/leafd", "auth::cdrwa,world:anyone:r")
text = start_fails(env, "d", zk_props(addr, name="D", **{"leafd.sequence.enable": "true"}))
check("/leafd" in last_line(text) and "setAcl" in last_line(text),
      "the last line names the shared parent and the fix: " + last_line(text))
zk.cli_as(ATTACKER, "setAcl", "/leafd", "world:anyone:cdrwa")
for n in (a, b, c):
    check(n.stop() == 0, "graceful stop")

# ---- 2. squatting -----------------------------------------------------------
admin = json.dumps({"name": "evil", "admin": True, "secret": "sha256:" + "0" * 64})
for cmds, name, node in (
        ([("create", "/leafd/SQ1", ""), ("create", "/leafd/SQ1/users", ""),
          ("create", "/leafd/SQ1/users/evil", admin, "auth::cdrwa,world:anyone:r")],
         "SQ1", "/leafd/SQ1/users/evil"),
        ([("create", "/leafd/SQ2", ""), ("create", "/leafd/SQ2/users", ""),
          ("create", "/leafd/SQ2/users/evil", admin)], "SQ2", "/leafd/SQ2/users/evil"),
        ([("create", "/snowflake/SQ3", ""), ("create", "/snowflake/SQ3/leaf_forever", ""),
          ("create", "/snowflake/SQ3/leaf_forever/127.0.0.1:1-0000000000",
           '{"ip":"127.0.0.1","port":"1","timestamp":1}', "auth::cdrwa,world:anyone:r")],
         "SQ3", "/snowflake/SQ3/leaf_forever/127.0.0.1:1-0000000000")):
    out = "".join(zk.cli_as(ATTACKER, *cmd) for cmd in cmds)
    check(out.count("Created") == len(cmds), "squatted %s planted" % node)
    text = start_fails(env, name.lower(), zk_props(addr, name=name, **{
        "leafd.zk.auth": "digest:" + A, "leafd.auth.enable": "true", "leafd.admin.token": TOKEN}))
    check(node in last_line(text), "%s: the last line names the squatted znode: %s" %
          (name, last_line(text)))
    check("users applied from ZooKeeper: 1" not in text, "%s: no squatted user applied" % name)

# ---- 3. credentials in stages ----------------------------------------------
base = zk_props(addr, name="ST", **{"leafd.sequence.enable": "true",
                                    "leafd.sequence.autocreate": "true"})
n1 = env.leafd("st1", base)
n2 = env.leafd("st2", base)
check(n1.stop() == 0, "n1 stops for its upgrade to credentials")
n1.props["leafd.zk.auth"] = "digest:" + A
n1.start()
check(wait_until(lambda: "held back by: 127.0.0.1:%d (no leafd.zk.auth)" % n2.port in n1.log_text(),
                 10), "n1 says which node holds closing back")
check(acl_of(zk, "/snowflake/ST/leafd_shape") == ["'world,'anyone", ": cdrwa"], "the trees stay open")
ready = json.loads(n1.get("/ready")[1])
check(ready.get("zk_acl", {}).get("closed") is False and
      "127.0.0.1:%d" % n2.port in ready["zk_acl"]["held_back"],
      "/ready names the node that holds closing back: %s" % ready.get("zk_acl"))
cl = json.loads(n1.get("/cluster?format=json")[1])
check("127.0.0.1:%d" % n2.port in cl.get("zk_acl", {}).get("held_back", ""),
      "/cluster names it too: %s" % cl.get("zk_acl"))
check("closing is held back by" in n1.get("/cluster")[1], "and its page says so")
time.sleep(4)  # more than one of n2's 3 s time reports
check(n2.get("/ready")[0] == 200 and n2.get("/api/snowflake/get/x")[0] == 200,
      "n2 (no credentials) stays ready and serves beside n1")
check("failed" not in n2.log_text().split("reopened")[-1] or "not authenticated" not in n2.log_text(),
      "n2's writes are not refused")
rc, out = zk_acl_cmd(n1, "close")
check(rc == 1 and "127.0.0.1:%d" % n2.port in out, "--zk-acl close is refused naming n2: " + out.strip())
rc, out = zk_acl_cmd(n1, "status")
check(rc == 0 and "trees: open" in out and "version" in out, "--zk-acl status: " + out.strip())
# Each node once: in the held-back line, and on its member line without its address again.
check(out.count("127.0.0.1:%d" % n2.port) == 2 and
      "held back by: 127.0.0.1:%d (no leafd.zk.auth)\n" % n2.port in out and
      "member 127.0.0.1:%d version " % n2.port in out and " http " not in out,
      "--zk-acl status names n2 once per line: " + out.strip())
check(n2.stop() == 0, "n2 stops for its upgrade to credentials")
n2.props["leafd.zk.auth"] = "digest:" + A
n2.start()
check(wait_until(lambda: ": cdrwa" in "".join(acl_of(zk, "/snowflake/ST/leafd_shape"))
                 and "'world,'anyone" in acl_of(zk, "/snowflake/ST/leafd_shape")
                 and acl_of(zk, "/snowflake/ST/leafd_shape")[-1] == ": r", 15),
      "once every node authenticates the trees close by themselves")
for n in (n1, n2):
    st = n.get("/api/sequence/get/s")[0]
    check(n.get("/api/snowflake/get/x")[0] == 200 and st in (200, 307),
          "%s serves on closed trees (sequence: %d, 307 from the node in line)" % (n.name, st))
zki = subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                   "programs", "zk-inspect"), addr, "ST"], capture_output=True, text=True,
                     timeout=120).stdout
check("127.0.0.1:%d" % n1.port in zki and "version 1.0" in zki and "auth yes" in zki,
      "tools/programs/zk-inspect lists the members with their versions: " + zki[-400:])
rc, out = zk_acl_cmd(n1, "open")
check(rc == 0 and "reopened" in out, "--zk-acl open reopens: " + out.strip())
rc, out = zk_acl_cmd(n1, "status")
check(rc == 0 and "trees: open, held open" in out and "held back by: the hold only\n" in out,
      "--zk-acl status while held open: " + out.strip())
time.sleep(4)
check(acl_of(zk, "/snowflake/ST/leafd_shape") == ["'world,'anyone", ": cdrwa"],
      "the trees stay open while held (no node closes them again)")
n3 = env.leafd("st3", base)
check(n3.get("/api/snowflake/get/x")[0] == 200, "a node without credentials (a downgrade) serves")
rc, out = zk_acl_cmd(n1, "close")
check(rc == 1 and "127.0.0.1:%d" % n3.port in out, "close is refused while it runs")
check(n3.stop() == 0, "graceful stop")
rc, out = zk_acl_cmd(n1, "close")
check(rc == 0 and "closed" in out, "--zk-acl close ends the hold: " + out.strip())
check(acl_of(zk, "/snowflake/ST/leafd_shape")[-1] == ": r", "the trees are closed again")
rc, out = zk_acl_cmd(n1, "status")
check(rc == 0 and "trees: closed\n" in out and "locked out: nobody\n" in out and
      "held back" not in out, "closed trees hold nothing back: " + out.strip())
for n in (n1, n2):
    check(n.stop() == 0, "graceful stop")

# ---- 4. a node whose writes are refused is not ready ------------------------
# An older leafd given credentials closes the trees at once; a node without
# them must stop being ready, issue nothing it cannot record, and come back
# when the trees are reopened.
r = env.leafd("rf", zk_props(addr, name="RF"))
zk.cli_as(A, "setAcl", "-R", "/snowflake/RF", "auth::cdrwa,world:anyone:r")
check(wait_until(lambda: r.get("/ready")[0] == 503, 10), "the refused node turns not ready")
st, body, _ = r.get("/ready")
check("leafd.zk.auth" in body, "/ready names the cause and the key: " + body)
check("refuses this node's time writes" in r.log_text(), "its log says why")
time.sleep(6)  # past the last acknowledged reservation
check(r.get("/api/snowflake/get/x")[0] == 503, "nothing is issued that ZooKeeper cannot record")
zk.cli_as(A, "setAcl", "-R", "/snowflake/RF", "world:anyone:cdrwa")
check(wait_until(lambda: r.get("/ready")[0] == 200, 15), "ready again once the trees are reopened")
check(r.get("/api/snowflake/get/x")[0] == 200, "and serving")
check(r.stop() == 0, "graceful stop")
log("done")
env.finish()
