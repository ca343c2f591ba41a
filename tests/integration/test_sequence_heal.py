"""Sequences heal themselves when an operator errs (docs/IDENTITY.md).

Two leafd nodes with sequences on (autocreate off, batch 1000, session 4 s),
one ZooKeeper:
  5. a sequence asked for before it exists (404 unknown_sequence) and then
     created is served at once on the node that answered the 404 (HTTP and
     RESP), and within 2 s when it was created through the other node;
  4. the record of a serving sequence changed by hand to {"max":500000}: the
     primary re-reads it and serves above 500000 within the session timeout
     + 2 s (it used to answer TRYAGAIN until a manual demote); changed by
     hand to a lower max, it serves above everything it issued;
  6. a demotion and a SIGTERM hand over without skipping an ID (the records
     are written back down to the last ID issued);
 12. deleteall /leafd/<name> under the running primary: the tree is created
     again, the primary's log does not claim another primary wrote, and the
     sequence created again issues above everything issued before (the
     node's local floor).
IDs of `orders` strictly increase over the whole run; every call that asks for IDs is
recorded (tests/lib/ordercheck.py's History) and the history passes the order checker.
About 40 s."""
import json
import os
import re
import socket
import time

from leafdtest import Env, check, http, log, wait_until
from ordercheck import History, verify
from seqclients import RespReader, resp_command
from seqcluster import seq_props

SESSION_MS = 4000
BATCH = 1000

env = Env()
zk = env.zookeeper()
HISTORY = os.path.join(env.dir, "history")
hist = History(HISTORY, "test")
props = [seq_props(zk.address(), SESSION_MS, BATCH, **{"leafd.sequence.autocreate": "false"})
         for _ in range(2)]


def role(n):
    try:
        return json.loads(http(n.port, "/ready", timeout=2)[1])["sequence"]["role"]
    except (OSError, ValueError, KeyError):
        return None


def find_primary(nodes, timeout=20, exclude=None):
    """The node whose /ready says primary (autocreate is off: no probe sequence)."""
    return wait_until(lambda: next((n for n in nodes if n is not exclude and n.proc.alive() and
                                    role(n) == "primary"), None), timeout)


nodes = []
for i, pr in enumerate(props):
    n = env.leafd("n%d" % i, pr, wait_ready=False)
    n.resp_port = int(pr["leafd.resp.listen"].rsplit(":", 1)[1])
    check(wait_until(lambda: role(n) in ("primary", "standby"), 30), "%s is in line" % n.name)
    nodes.append(n)
p = find_primary(nodes)
check(p is not None, "a primary is elected")
s = [n for n in nodes if n is not p][0]
log("primary %s, standby %s" % (p.name, s.name))
issued = []  # every ID of orders, in the order received


def get(node, name, count=1, follow=True):
    """(status, ids or body) of GET /api/sequence/get/name, following one redirect."""
    path = "/api/sequence/get/%s%s" % (name, "?count=%d" % count if count > 1 else "")
    with hist.call("sequence:" + name, who=node.name) as c:
        st, body, hdr = http(node.port, path, timeout=5)
        if st == 307 and follow:
            port = int(re.sub(r"^https?://", "", hdr.get("Location", "")).split("/")[0].split(":")[1])
            st, body, hdr = http(port, path, timeout=5)
        if st != 200:
            c.fail(st)
            return st, body
        c.values = body.split()
    return st, [int(x) for x in body.split()]


def resp(node, *args):
    with hist.call(args[1], who=node.name) as call:  # INCR sequence:<name>
        with socket.create_connection(("127.0.0.1", node.resp_port), timeout=5) as c:
            c.sendall(resp_command(*args))
            r = RespReader(c).read()
        if isinstance(r, int):
            call.value = r
        else:
            call.fail(r)
    return r


def orders(node, count=1):
    st, ids = get(node, "orders", count)
    if st == 200:
        issued.extend(ids)
    return st, ids


def create(node, name, start):
    return http(node.port, "/api/sequence", method="POST",
                body=json.dumps({"name": name, "start": start}))[0]


# ---- 5. asked for before it exists, then created -----------------------------------------
st, body = get(p, "inv")
check(st == 404 and "unknown_sequence" in body, "inv before it exists -> 404: %s %s" % (st, body))
check(create(p, "inv", 100) == 201, "POST inv start 100 -> 201")
st, ids = get(p, "inv")
check(st == 200 and ids == [100], "inv is served at once on the node that answered 404: %s %s"
      % (st, ids))
check(resp(p, "INCR", "sequence:inv") == 101, "and over RESP: 101")
# RESP first, created through the standby: the primary serves it within 2 s.
r = resp(p, "INCR", "sequence:inv2")
check("unknown" in str(r).lower() or "not" in str(r).lower(), "inv2 unknown over RESP: %r" % r)
check(create(s, "inv2", 7) == 201, "POST inv2 start 7 through the standby -> 201")
t0 = time.monotonic()
got = wait_until(lambda: resp(p, "INCR", "sequence:inv2") == 7, 3, interval=0.05)
log("inv2 served %.0f ms after its create through the standby" % ((time.monotonic() - t0) * 1000))
check(got and time.monotonic() - t0 <= 2.5, "inv2 served by the primary within 2 s of its create")
check(create(p, "inv", 5) == 409, "a second POST answers 409")

# ---- 4. the record changed by hand -----------------------------------------------------------
check(create(p, "orders", 1) == 201, "POST orders start 1 -> 201")
for _ in range(5):
    orders(p, 100)
zk.cli("set", "/leafd/it/sequences/orders", '{"max":500000}')
log("set orders to {\"max\":500000}")
t0 = time.monotonic()
end = t0 + SESSION_MS / 1000.0 + 2.0
above = None
while time.monotonic() < end:
    st, ids = orders(p, 100)
    if st == 200 and ids[-1] > 500000:
        above = time.monotonic() - t0
        break
    time.sleep(0.02)
check(above is not None, "serves above the hand-set max 500000 within %d ms (last %s)"
      % (SESSION_MS + 2000, issued[-1:]))
log("served above 500000 %.0f ms after the change" % ((above or 0) * 1000))
check("changed by someone else" in p.log_text(), "the log says the record was changed")
check("until this node is elected again" not in p.log_text(), "no 'until elected again'")
hi = issued[-1]
zk.cli("set", "/leafd/it/sequences/orders", '{"max":5}')
log("set orders to {\"max\":5}")
t0 = time.monotonic()
refused = wait_until(lambda: orders(p, 300) and p.log_text().count("changed by someone else") >= 2,
                     SESSION_MS / 1000.0 + 2.0, interval=0.02)
check(refused, "the next top-up is refused")
st, ids = orders(p, 1)
check(st == 200 and ids[0] > hi, "after a lower hand-set max it serves above what it issued (%d): "
      "%s" % (hi, (st, ids)))
check(p.log_text().count("below this node's floor") == 1, "and warns that ZooKeeper was below its "
      "floor")

# ---- 6. handovers skip no ID ------------------------------------------------------------------
last = issued[-1]
st, body, _ = http(p.port, "/api/cluster/demote", method="POST", body="")
check(200 <= st < 300, "demote accepted: %d" % st)
new = find_primary(nodes, timeout=10, exclude=p)
check(new is s, "the standby took over")
st, ids = orders(s, 1)
check(st == 200 and ids == [last + 1], "after the demotion the next ID is %d: %s" % (last + 1, ids))
orders(s, 250)
last = issued[-1]
check(s.stop() == 0, "the new primary stops cleanly (SIGTERM)")
check(find_primary([p], timeout=10) is p, "the first node is primary again")
st, ids = orders(p, 1)
check(st == 200 and ids == [last + 1], "after the SIGTERM the next ID is %d: %s" % (last + 1, ids))
check("records back down" in p.log_text(), "the handover wrote the records back down")

# ---- 12. deleteall under the running primary -------------------------------------------------
orders(p, 100)
seen = max(issued)
zk.cli("deleteall", "/leafd/it")
log("deleteall /leafd/it")
t0 = time.monotonic()
gone = wait_until(lambda: get(p, "orders")[0] == 404, 20, interval=0.1)
log("orders answers 404 %.1f s after the deleteall" % (time.monotonic() - t0))
check(gone, "after the deleteall the primary serves again (orders unknown): %s"
      % (get(p, "orders"),))
check("another primary wrote it since" not in p.log_text(),
      "the log does not blame another primary")
check(create(p, "orders", 1) == 201, "POST orders start 1 again -> 201")
st, ids = orders(p, 10)
check(st == 200 and ids[0] > seen, "the re-created orders issues above everything before "
      "(%d): %s" % (seen, ids[:1]))
check(p.log_text().count("below this node's floor") >= 2,
      "the log warns that ZooKeeper was below the floor")

hist.close()
ok, text = verify(HISTORY)
log(text)
check(ok, "no duplicate, strictly increasing: %s" % text)
check(p.stop() == 0, "stops cleanly")
env.finish()
