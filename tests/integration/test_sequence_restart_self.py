"""A node that restarts after a kill -9 leaves its previous process's place in line at once
(docs/cluster.md, "A node that restarts").

The previous process's election node lives until its ZooKeeper session times out, and it
advertises this node's own address: before, the restarted node redirected its own sequence
clients to itself (HTTP 307 to its own port, RESP -MOVED) until then. The node records the
session its election runs on in {leafd.data.dir}/sequence-session; at a start on another
session it deletes that session's election node when it advertises this node (the previous
process has exited: this one holds the data dir's lock), and releases its lease.

With a 20 s session timeout, a sequence on a single node:
- kill -9, start again: served well before the session could have timed out (10 s), no 307 to
  itself, strictly increasing across the restart;
- an in-place upgrade, then kill -9 of the new process, start again: the same (the adopted
  session is the recorded one);
- a second node started with a copy of the first node's sequence-session file (a copied data
  dir) leaves the first node's election node alone (it advertises another node): the first node
  stays primary and serves.
Every call for q is recorded (tests/lib/ordercheck.py's History) and passes the order checker.
"""
import os
import re
import shutil
import signal
import time

from leafdtest import Env, check, http, log, pid_alive, wait_until
from ordercheck import History, verify
from zkhelpers import zk_props

SESSION_MS = 20000

env = Env()
zk = env.zookeeper()
props = zk_props(zk.address(), name="rs", **{
    "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true",
    "leafd.sequence.batch": "10", "leafd.zk.session.timeout.ms": str(SESSION_MS)})
node = env.leafd("n0", props, resp=True)
check(node.wait_sequence("q", 30) == 200, "the sequence q is served")
values = []
HISTORY = os.path.join(env.dir, "history")
hist = History(HISTORY, "test")


def get(path):
    if not path.startswith("/api/sequence/get/q"):
        return _get(path)
    with hist.call("sequence:q") as c:
        st, body, hdr = _get(path)
        if st == 200:
            c.values = body.split()
        else:
            c.fail(st)
    return st, body, hdr


def _get(path):
    try:
        return http(node.port, path, timeout=3)
    except OSError:  # not listening yet
        return None, "", []


def take(n=5):
    for _ in range(n):
        st, body, _ = get("/api/sequence/get/q?count=1")
        if st == 200:
            values.append(int(body.strip().split()[0]))


def back_after_restart(label):
    """Start again; the time until q is served, and the 307s to the node itself meanwhile."""
    node.start(wait_ready=False)
    t0 = time.monotonic()
    self_redirects = 0
    served = None
    while time.monotonic() - t0 < SESSION_MS / 1000 + 5:
        st, _, hdr = get("/api/sequence/get/q?count=1")
        if st == 200:
            served = time.monotonic() - t0
            break
        if st == 307 and (":%d/" % node.port) in dict(hdr).get("Location", ""):
            self_redirects += 1
        time.sleep(0.05)
    log("%s: q served %s s after the start, %d redirects to itself meanwhile"
        % (label, "%.2f" % served if served is not None else "never", self_redirects))
    check(served is not None and served < SESSION_MS / 2000,
          "%s: q served before the dead session could time out (%s s)" % (label, served))
    check(self_redirects == 0, "%s: no redirect to the node itself (%d)" % (label, self_redirects))
    check("election node of this node's previous process" in node.log_text(),
          "%s: the log names the previous process's election node it deleted" % label)


take()
node.proc.p.send_signal(signal.SIGKILL)
node.proc.p.wait()
back_after_restart("kill -9")
take()

pid = node.proc.p.pid
os.kill(pid, signal.SIGUSR2)
check(wait_until(lambda: "handed over to pid" in node.log_text(), 30, 0.01), "upgrade handed over")
new = int(re.findall(r"handed over to pid (\d+)", node.log_text())[-1])
check(wait_until(lambda: get("/ready")[0] == 200, 30, 0.02), "the new process serves")
take()
os.kill(new, signal.SIGKILL)
check(wait_until(lambda: not pid_alive(new), 10, 0.02), "the upgraded process is killed")
back_after_restart("kill -9 after an in-place upgrade")
take()
check(all(a < b for a, b in zip(values, values[1:])) and len(values) >= 15,
      "q strictly increases across the restarts (%d values)" % len(values))

# A copied data dir: the second node records the first node's session.
src = os.path.join(os.path.dirname(node.conf), "data", "sequence-session")
dst_dir = os.path.join(env.dir, "n1", "data")
os.makedirs(dst_dir, exist_ok=True)
shutil.copy(src, os.path.join(dst_dir, "sequence-session"))
other = env.leafd("n1", props, resp=True, wait_ready=False)
check(wait_until(lambda: "left alone (was the data dir copied?)" in other.log_text(), 20, 0.1),
      "the second node leaves the first node's election node alone")
before = len(values)
take()
check(len(values) == before + 5, "the first node still serves q")
check(all(a < b for a, b in zip(values, values[1:])), "q strictly increases")
hist.close()
ok, text = verify(HISTORY)
log(text)
check(ok, "every call for q passes the order checker: %s" % text)
env.finish()
