"""A ZooKeeper restored from an older copy never repeats sequence IDs
(docs/IDENTITY.md: every sequence node keeps the highest max it
has seen per sequence in its data dir, and a primary starts above the larger
of ZooKeeper's and its own).

Two leafd nodes (autocreate on, batch 1000, session 4 s), one ZooKeeper.
`orders` is issued up to X; ZooKeeper's data dir is copied (the server
stopped for the copy and started again); more is issued, several batches
beyond X; both nodes stop (SIGTERM), ZooKeeper is stopped, the old copy put
back and started, and the nodes are started again (the old primary first).
Then: 0 duplicates and 0 order violations over every ID of the run (every call recorded,
tests/lib/ordercheck.py's History, and passed through the order checker), and the
primary logs at warn that ZooKeeper's max was below its floor. About 35 s."""
import json
import os
import shutil
import time

from leafdtest import Env, check, http, log, wait_until
from ordercheck import History, verify
from seqcluster import seq_props
from zkhelpers import cli_get

SESSION_MS = 4000
BATCH = 1000

env = Env()
zk = env.zookeeper()
props = [seq_props(zk.address(), SESSION_MS, BATCH) for _ in range(2)]
issued = []
HISTORY = os.path.join(env.dir, "history")
hist = History(HISTORY, "test")


def role(n):
    try:
        return json.loads(http(n.port, "/ready", timeout=2)[1])["sequence"]["role"]
    except (OSError, ValueError, KeyError):
        return None


def in_line(n, timeout=30):
    return wait_until(lambda: role(n) in ("primary", "standby"), timeout)


def take(node, count):
    with hist.call("sequence:orders", who=node.name) as c:
        st, body, _ = http(node.port, "/api/sequence/get/orders?count=%d" % count, timeout=5)
        if st == 200:
            c.values = body.split()
            issued.extend(int(x) for x in body.split())
        else:
            c.fail(st)
    return st


def take_until(node, n, timeout=20):
    """Issues from node until n more IDs came back (503s while it takes over are retried)."""
    want = len(issued) + n
    end = time.monotonic() + timeout
    while len(issued) < want and time.monotonic() < end:
        if take(node, 100) != 200:
            time.sleep(0.05)
    return len(issued) >= want


nodes = []
for i, pr in enumerate(props):
    n = env.leafd("n%d" % i, pr, wait_ready=False)
    check(in_line(n), "%s is in line" % n.name)
    nodes.append(n)
check(wait_until(lambda: role(nodes[0]) == "primary", 20), "n0 is primary")
p = nodes[0]
check(take_until(p, 2500), "2500 IDs before the copy")
x = max(issued)
m_copy = json.loads(cli_get(zk, "/leafd/it/sequences/orders") or '{"max":0}')["max"]

zk.stop()
backup = os.path.join(env.dir, "zk-copy")
shutil.copytree(os.path.join(zk.dir, "data"), backup)
zk.start()
log("ZooKeeper's data dir copied at max ID %d, persisted max %d" % (x, m_copy))
end = time.monotonic() + 30
while max(issued) <= m_copy + 2 * BATCH and time.monotonic() < end:
    take_until(p, 1000)
y = max(issued)
check(y > m_copy + 2 * BATCH, "issued beyond the copy's persisted max (%d > %d)" % (y, m_copy))
log("issued up to %d, %d beyond the copy's persisted max" % (y, y - m_copy))

for n in reversed(nodes):
    check(n.stop() == 0, "%s stops cleanly" % n.name)
zk.stop()
shutil.rmtree(os.path.join(zk.dir, "data"))
shutil.copytree(backup, os.path.join(zk.dir, "data"))
zk.start()
log("ZooKeeper restored from the copy")
for n in nodes:
    n.start(wait_ready=False)
    check(in_line(n), "%s is in line again" % n.name)
    time.sleep(0.3)
# The restored tree still holds the old sessions' election nodes until they expire.
primary = wait_until(lambda: next((n for n in nodes if role(n) == "primary"), None), 20)
check(primary is not None, "a primary after the restore")
check(take_until(primary, 1000), "1000 IDs after the restore")
first_after = issued[-1000]
log("first ID after the restore %d (before: max %d; ZooKeeper's copy had max %d)"
    % (first_after, y, m_copy))
check(first_after > y, "the first ID after the restore is above every ID before (%d > %d)"
      % (first_after, y))
check("below this node's floor" in primary.log_text(),
      "the primary warns that ZooKeeper's max was below its floor")

hist.close()
ok, text = verify(HISTORY)
log(text)
check(ok, "0 duplicates and 0 order violations: %s" % text)
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
