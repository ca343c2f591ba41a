"""The acceptance test of keyed sequences (docs/keyed-sequences.md, "Costs" and "Memory"):
1,000,000 distinct keys of one space each take one ID through RESP (pipelined redis-py INCRs
from four processes) on one node. Every first ID is >= 1, ZooKeeper holds no node per key (the
space's node has at most 256 children, its sections), fewer than 1,000 section writes were made
(leafd_keyed_section_writes_total), and the RSS growth per resident key is printed. Every call
is recorded and the history passes the order checker."""
import multiprocessing
import os
import re
import time

import redis

from leafdtest import Env, check, http, log, wait_until
from ordercheck import History, verify
from zkhelpers import cli_list, zk_props

KEYS = 1000000
PROCS = 4
PIPE = 1000  # INCRs per pipeline
SPACE = "big"


def client(i, port, hdir):
    """Keys i, i + PROCS, ... below KEYS, PIPE INCRs per round trip; exits 1 on a bad answer."""
    hist = History(hdir, "resp%d" % i)
    r = redis.Redis(port=port, socket_timeout=30)
    keys = ["u%07d" % k for k in range(i, KEYS, PROCS)]
    bad = 0
    for at in range(0, len(keys), PIPE):
        batch = keys[at:at + PIPE]
        pipe = r.pipeline(transaction=False)
        for k in batch:
            pipe.incr("keyed:%s:%s" % (SPACE, k))
        t0 = time.monotonic_ns()
        got = pipe.execute(raise_on_error=False)
        t1 = time.monotonic_ns()
        for k, v in zip(batch, got):
            if isinstance(v, int) and v >= 1:
                hist.record("keyed:%s:%s" % (SPACE, k), t0, t1, first=v, who="resp%d" % i)
            else:
                hist.record("keyed:%s:%s" % (SPACE, k), t0, t1, error=str(v)[:60])
                bad += 1
    hist.close()
    r.close()
    os._exit(1 if bad else 0)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))


def metric(node, name):
    body = node.get("/metrics")[1]
    m = re.search(r'^%s\{space="%s"\} (\d+)' % (name, SPACE), body, re.M)
    return int(m.group(1)) if m else None


env = Env()
zk = env.zookeeper()
HISTORY = os.path.join(env.dir, "history")
n = env.leafd("n0", zk_props(zk.address(), name="km", **{"leafd.sequence.enable": "true"}),
              resp=True, wait_ready=True)
st, body, _ = http(n.port, "/api/keyed", method="POST", body='{"name":"%s"}' % SPACE)
check(wait_until(lambda: http(n.port, "/api/keyed/get/%s/warm" % SPACE)[0] == 200, 20),
      "space %s created (%d %s) and serving" % (SPACE, st, body))

rss0 = rss_kb(n.proc.p.pid)
t0 = time.monotonic()
ctx = multiprocessing.get_context("fork")
procs = [ctx.Process(target=client, args=(i, n.resp_port, HISTORY)) for i in range(PROCS)]
for p in procs:
    p.start()
for p in procs:
    p.join(600)
    check(p.exitcode == 0, "client %s: every INCR answered an ID >= 1 (rc %s)" % (p.name, p.exitcode))
took = time.monotonic() - t0
rss1 = rss_kb(n.proc.p.pid)
resident = metric(n, "leafd_keyed_resident_keys")
writes = metric(n, "leafd_keyed_section_writes_total")
issued = metric(n, "leafd_keyed_issued_total")
log("%d keys in %.1f s (%.0f IDs/s); issued %s, resident %s, section writes %s" %
    (KEYS, took, KEYS / took, issued, resident, writes))
log("RSS %d kB -> %d kB: %.1f bytes per resident key (an ASan debug build when LEAFD_BIN is one)"
    % (rss0, rss1, (rss1 - rss0) * 1024.0 / max(resident or KEYS, 1)))
check(issued is not None and issued >= KEYS, "leafd_keyed_issued_total counts them: %s" % issued)
check(writes is not None and writes < 1000, "fewer than 1,000 section writes: %s" % writes)
children = cli_list(zk, "/leafd/km/keyed/%s" % SPACE)
check(children is not None and len(children) <= 256,
      "ZooKeeper holds no node per key: %s children of the space" % (children and len(children)))

ok, text = verify(HISTORY)
log(text)
check(ok and "0 violations" in text, "the history passes the order checker: %s" % text)
env.finish()
