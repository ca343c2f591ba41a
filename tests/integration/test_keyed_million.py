"""The acceptance test of keyed sequences (docs/keyed-sequences.md, "Costs" and "Memory"):
1,000,000 distinct keys of one space each take one ID through RESP (pipelined redis-py INCRs
from four processes) on one node. Every first ID is >= 1, ZooKeeper holds no node per key (the
space's node has at most 256 children, its sections), fewer than 1,000 section writes were made
(leafd_keyed_section_writes_total), and the RSS growth per resident key is printed. Every call
is recorded and the history passes the order checker."""
import os
import time

from keyedload import incr_keys, space_metric
from leafdtest import Env, check, http, log, rss_kb, wait_until
from ordercheck import verify
from zkhelpers import cli_list, zk_props

KEYS = 1000000
PROCS = 4
PIPE = 1000  # INCRs per pipeline
SPACE = "big"


def metric(node, name):
    return space_metric(node, name, SPACE)


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
check(incr_keys(n.resp_port, HISTORY, SPACE, ["u%07d" % k for k in range(KEYS)], PROCS, PIPE, 600),
      "every INCR answered an ID >= 1")
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
