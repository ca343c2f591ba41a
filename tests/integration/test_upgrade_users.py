"""Users across a rolling upgrade from 0.2.0 (docs/UPGRADING.md, docs/SECURITY.md): a node of
0.2.0 (commit 6ac706c, built from git history by tests/lib/releasebuild.py) and a 1.0 node share
one cluster with leafd.zk.auth and leafd.auth.enable, as a 0.2.0 cluster with users is upgraded
node by node.
  closed    0.2.0 closes the cluster's trees at its start (it did so at the first node with the
            credentials); the 1.0 node that joins finds them closed and applies the same users;
  changes   a user added, rotated, given a grant less and deleted, through the 1.0 node and
            through the 0.2.0 node in turn: each change is applied by both nodes within the
            session timeout; a rotated secret and a deleted user are refused on both (no
            revocation gap between versions);
  replaced  the 0.2.0 node restarted as 1.0: the users still work there.
Runs about 20 s (labelled upgrade: it builds 0.2.0 the first time). Exit 77 (a shallow clone)
is a skip.
"""
import base64
import json
import os
import subprocess
import time

from leafdtest import LEAFD_BIN, Env, check, http, log, wait_until
from releasebuild import release_binary
from upgradehelpers import VLeafd
from zkhelpers import zk_props

PREVIOUS = "6ac706c"  # 0.2.0
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEAFCTL = os.path.join(ROOT, "tools", "programs", "leafctl")
TOKEN = "upgrade-users-admin-token-0123"
SESSION_MS = 4000
# A change is applied by every node within the session timeout (docs/SECURITY.md); the
# test allows that plus a second for the polling itself.
APPLIED_S = SESSION_MS / 1000.0 + 1.0

old = release_binary(PREVIOUS)
env = Env()
zk = env.zookeeper()
props = zk_props(zk.address(), name="uu", **{
    "leafd.zk.auth": "digest:leafd:uu-zk-secret-0", "leafd.auth.enable": "true",
    "leafd.admin.token": TOKEN, "leafd.zk.session.timeout.ms": str(SESSION_MS),
    "leafd.auth.failures.max": "0"})
a = VLeafd(env, "a", props, binary=old, wait_ready=False)
check(a.wait_ready(40), "a (0.2.0) with users and credentials is ready:\n%s" % a.log_text()[-1500:])
b = VLeafd(env, "b", props, wait_ready=False)
check(b.wait_ready(40), "b (1.0) joins and is ready:\n%s" % b.log_text()[-1500:])
nodes = {"0.2.0": a, "1.0": b}
ready = json.loads(http(b.port, "/ready")[1])
check(ready.get("zk_acl", {}).get("closed") is True,
      "the trees are closed (0.2.0 closed them; 1.0 keeps them so): %s" % ready.get("zk_acl"))


def basic(user, secret):
    return {"Authorization": "Basic " +
            base64.b64encode(("%s:%s" % (user, secret)).encode()).decode()}


def status(node, user, secret, path="/api/snowflake/get/uu.orders"):
    try:
        return http(node.port, path, headers=basic(user, secret), timeout=3)[0]
    except OSError:
        return None


def leafctl(node, *args):
    e = dict(os.environ)
    e.pop("LEAFD_ADMIN_TOKEN", None)
    r = subprocess.run([LEAFCTL, "user"] + list(args) + ["-c", node.conf], capture_output=True,
                       text=True, timeout=30, env=e)
    return r.returncode, r.stdout + r.stderr


def everywhere(cond, what):
    """Waits until cond(node) holds on both nodes; checks it did within APPLIED_S."""
    t0 = time.monotonic()
    ok = wait_until(lambda: all(cond(n) for n in nodes.values()), APPLIED_S + 5, 0.05)
    took = time.monotonic() - t0
    check(ok and took <= APPLIED_S, "%s on both nodes in %.2f s (<= %.1f s): %s" % (
        what, took, APPLIED_S, {v: cond(n) for v, n in nodes.items()}))
    return took


timings = {}
log("changes through each node in turn, each checked on both")
for via, node in (("1.0", b), ("0.2.0", a)):
    user = "team-" + via.replace(".", "")
    rc, out = leafctl(node, "add", user, "--grant", "snowflake:uu.*:ids")
    check(rc == 0, "add %s through the %s node: %s" % (user, via, out.strip()[:300]))
    if rc != 0:
        continue
    s1 = json.loads(out)["secret"]
    timings["add via " + via] = everywhere(lambda n: status(n, user, s1) == 200,
                                           "%s (added via %s) gets IDs" % (user, via))
    rc, out = leafctl(node, "rotate", user)
    check(rc == 0, "rotate %s through the %s node: %s" % (user, via, out.strip()[:300]))
    s2 = json.loads(out)["secret"] if rc == 0 else s1
    timings["rotate via " + via] = everywhere(
        lambda n: status(n, user, s1) == 401 and status(n, user, s2) == 200,
        "%s rotated via %s: the old secret refused, the new one works" % (user, via))
    rc, out = leafctl(node, "revoke", user, "snowflake:uu.*")
    check(rc == 0, "revoke %s's grant through the %s node: %s" % (user, via, out.strip()[:300]))
    timings["revoke via " + via] = everywhere(
        lambda n: status(n, user, s2) == 403, "%s's grant revoked via %s: 403" % (user, via))
    rc, out = leafctl(node, "del", user)
    check(rc == 0, "delete %s through the %s node: %s" % (user, via, out.strip()[:300]))
    timings["del via " + via] = everywhere(
        lambda n: status(n, user, s2) == 401, "%s deleted via %s: 401" % (user, via))
log("applied on both nodes (s): %s" % {k: round(v, 2) for k, v in timings.items()})

log("replaced: the 0.2.0 node restarts as 1.0; a user added before still works there")
rc, out = leafctl(b, "add", "keeper", "--grant", "*:ids")
check(rc == 0, "add keeper: %s" % out.strip()[:300])
sk = json.loads(out)["secret"] if rc == 0 else ""
everywhere(lambda n: status(n, "keeper", sk) == 200, "keeper gets IDs")
a.proc.stop()
a.binary = LEAFD_BIN
a.start(wait_ready=False)
check(a.wait_ready(40), "a restarted as 1.0 is ready:\n%s" % a.log_text()[-1500:])
check(wait_until(lambda: status(a, "keeper", sk) == 200, APPLIED_S + 5, 0.05),
      "keeper still gets IDs from a, now 1.0")
env.finish()
