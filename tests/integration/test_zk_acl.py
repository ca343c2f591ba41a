"""Closed coordination data (docs/SECURITY.md): leafd.zk.auth.

A cluster first run without it has an open tree (world:anyone cdrwa). Restarted
with leafd.zk.auth, the node authenticates its one session, closes every znode
it owns that was created open (all rights to its digest identity, read to
anyone; the users' tree unreadable to anyone else), and creates new ones closed.
An anonymous client can then neither write a worker-ID node, a sequence record
or the cluster's shape, nor add a user or read the users. Users without
leafd.zk.auth are refused at start naming the key.
"""
import os
import subprocess

from leafdtest import LEAFD_BIN, Env, check, log
from zkhelpers import zk_props

AUTH = "leafd:zk-secret-0"
env = Env()
zk = env.zookeeper()
base = zk_props(zk.address(), name="acl", **{"leafd.sequence.enable": "true",
                                             "leafd.sequence.autocreate": "true"})
n = env.leafd("n", base)
# /ready 200 is no promise that the sequence primary is elected yet: wait for the first ID.
st = n.wait_sequence("orders")
check(st == 200, "sequences serve (tree created open): %s" % st)
check("world,'anyone\n: cdrwa" in zk.cli("getAcl", "/snowflake/acl/leafd_shape"),
      "without leafd.zk.auth the tree is open")
check(n.stop() == 0, "graceful stop")

n.props.update({"leafd.zk.auth": "digest:" + AUTH, "leafd.auth.enable": "true",
                "leafd.admin.token": "acl-admin-token-0123456789"})
n.start()
text = n.log_text()
check("closed " in text and "znode(s) created open" in text, "the open znodes are closed at start")
acl = zk.cli("getAcl", "/snowflake/acl/leafd_shape")
check("digest,'leafd:" in acl and ": cdrwa" in acl and "world,'anyone\n: r" in acl,
      "the shape node: all rights to the digest identity, read to anyone:\n" + acl)
acl = zk.cli_as(AUTH, "getAcl", "/leafd/acl/users")
check("digest,'leafd:" in acl and "world" not in acl, "the users' tree: no world access:\n" + acl)


def refused(out):
    return "Insufficient permission" in out or "NoAuth" in out


for cmd in (("set", "/snowflake/acl/leafd_shape", "{}"),
            ("set", "/leafd/acl/sequences/orders", '{"max":9}'),
            ("create", "/leafd/acl/users/mallory", '{"name":"mallory","admin":true}'),
            ("ls", "/leafd/acl/users"),
            ("delete", "/snowflake/acl/leafd_marker")):
    out = zk.cli_as(None, *cmd)
    check(refused(out), "anonymous zkCli %s is refused: %s" % (" ".join(cmd[:2]), out.strip()[-160:]))
out = zk.cli_as(AUTH, "ls", "/leafd/acl/users")
check(not refused(out), "the identity of leafd.zk.auth may read the users")
check(zk.cli_as(None, "get", "/snowflake/acl/leafd_shape").count("{") >= 1, "anyone may read the shape")
check(n.get("/api/snowflake/get/a", headers={"Authorization": "Bearer acl-admin-token-0123456789"})[0]
      in (200, 401, 403), "the node serves with its closed tree")
check(n.stop() == 0, "graceful stop")

conf = os.path.join(env.dir, "noauth.properties")
with open(conf, "w") as fh:
    for k, v in dict(base, **{"leafd.auth.enable": "true"}).items():
        fh.write("%s = %s\n" % (k, v))
r = subprocess.run([LEAFD_BIN, "--check-config", "-c", conf], capture_output=True, text=True,
                   timeout=30)
check(r.returncode == 1 and "leafd.zk.auth" in r.stderr,
      "users without leafd.zk.auth are refused naming the key: %s" % r.stderr.strip())
log("done")
env.finish()
