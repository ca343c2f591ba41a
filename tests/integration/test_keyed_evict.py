"""The bound on resident keys (docs/keyed-sequences.md, "Eviction" and "Memory"): one node with
leafd.keyed.max.keys = 100000; 1,000,000 distinct keys of one space are touched in rounds through
pipelined RESP INCRs (redis-py, several processes), each round after the first revisiting keys of
the earlier rounds, most of them evicted since. Every call is recorded and the history passes the
order checker (0 violations: no call below an earlier one, no repeat): a key that comes back continues above all it issued
before. The node's RSS is read after each round and stays bounded (the last round's within a small
factor of the RSS at 100,000 keys, and far below what 1,000,000 resident keys would take);
leafd_keyed_resident_keys stays <= 100000 and leafd_keyed_evictions_total counts the keys that
left."""
import os
import time

from keyedload import incr_keys, space_metric
from leafdtest import Env, check, http, log, rss_kb, wait_until
from ordercheck import verify
from zkhelpers import zk_props

MAX_KEYS = 100000
KEYS = 1000000
FIRST = 100000  # round 0: the bound's worth of keys, then the RSS every later round is held to
ROUNDS = 4  # later rounds, each (KEYS - FIRST) / ROUNDS new keys and REVISIT earlier ones
REVISIT = 50000
PROCS = 4
PIPE = 1000  # INCRs per pipeline
SPACE = "ev"
RSS_FACTOR = 1.25  # the last round's RSS within this factor of the RSS at 100,000 keys


def metric(node, name):
    return space_metric(node, name, SPACE)


env = Env()
zk = env.zookeeper()
HISTORY = os.path.join(env.dir, "history")
n = env.leafd("n0", zk_props(zk.address(), name="kev", **{
    "leafd.sequence.enable": "true", "leafd.keyed.max.keys": str(MAX_KEYS)}),
    resp=True, wait_ready=True)
st, body, _ = http(n.port, "/api/keyed", method="POST", body='{"name":"%s","step":1000}' % SPACE)
check(wait_until(lambda: http(n.port, "/api/keyed/get/%s/warm" % SPACE)[0] == 200, 20),
      "space %s created (%d %s) and serving" % (SPACE, st, body))

pid = n.proc.p.pid
per_round = (KEYS - FIRST) // ROUNDS
rss = []
touched = 0
t_all = time.monotonic()
for rnd in range(ROUNDS + 1):
    fresh = FIRST if rnd == 0 else per_round
    new = ["u%07d" % k for k in range(touched, touched + fresh)]
    # Revisit keys spread over every earlier round: the bound evicted most of them long ago.
    back = ["u%07d" % k for k in range(0, touched, max(1, touched // REVISIT))][:REVISIT]
    t0 = time.monotonic()
    check(incr_keys(n.resp_port, HISTORY, SPACE, new + back, PROCS, PIPE, 300),
          "round %d: every INCR answered an ID >= 1 (%d new keys, %d revisited)" % (rnd, fresh, len(back)))
    touched += fresh
    rss.append(rss_kb(pid))
    resident = metric(n, "leafd_keyed_resident_keys")
    evicted = metric(n, "leafd_keyed_evictions_total")
    log("round %d: %d keys touched so far, %d calls in %.1f s; RSS %d kB, resident %s, evictions %s"
        % (rnd, touched, fresh + len(back), time.monotonic() - t0, rss[-1], resident, evicted))
    check(resident is not None and resident <= MAX_KEYS,
          "round %d: leafd_keyed_resident_keys <= %d: %s" % (rnd, MAX_KEYS, resident))
log("%d keys in %.1f s" % (touched, time.monotonic() - t_all))
check(touched == KEYS, "1,000,000 distinct keys touched: %d" % touched)

evicted = metric(n, "leafd_keyed_evictions_total")
writes = metric(n, "leafd_keyed_section_writes_total")
check(evicted is not None and evicted >= KEYS - MAX_KEYS,
      "leafd_keyed_evictions_total counts the keys that left: %s" % evicted)
log("section writes: %s" % writes)
# Bounded: 900,000 keys past the bound would take over 50 MB resident (docs/keyed-sequences.md,
# "Memory"); evicted, they take nothing.
grown_kb = rss[-1] - rss[0]
log("RSS after each round (kB): %s; at %d keys %d kB, at the end %d kB (%.2fx, %+d kB)"
    % (rss, FIRST, rss[0], rss[-1], rss[-1] / float(rss[0]), grown_kb))
check(rss[-1] <= rss[0] * RSS_FACTOR,
      "RSS stays bounded: %d kB at the end <= %.1f x %d kB at %d keys" % (rss[-1], RSS_FACTOR, rss[0], FIRST))
check(n.proc.alive(), "the node is still serving")

t0 = time.monotonic()
ok, text = verify(HISTORY)
log(text)
log("order checker: %.1f s" % (time.monotonic() - t0))
# A repeated value is one of the checker's violations (docs/testing.md, "The order checker").
check(ok and "0 violations" in text and " 0 failed calls" in text,
      "the history passes the order checker: every key that comes back continues above: %s" % text)
env.finish()
