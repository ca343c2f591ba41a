"""Many keys of one keyed space through pipelined RESP INCRs (docs/keyed-sequences.md), for the
tests that touch a million keys (test_keyed_million, test_keyed_evict): forked client processes,
each recording every call in its own history (tests/lib/ordercheck.py), and the per-space
metrics."""
import multiprocessing
import os
import re
import time

import redis

from ordercheck import History


def _client(i, procs, port, hdir, space, keys, pipe_n):
    """Keys i, i + procs, ... of keys, pipe_n INCRs per round trip; exits 1 on a bad answer."""
    hist = History(hdir, "resp%d" % i)
    r = redis.Redis(port=port, socket_timeout=60)
    mine = keys[i::procs]
    bad = 0
    for at in range(0, len(mine), pipe_n):
        batch = mine[at:at + pipe_n]
        pipe = r.pipeline(transaction=False)
        for k in batch:
            pipe.incr("keyed:%s:%s" % (space, k))
        t0 = time.monotonic_ns()
        got = pipe.execute(raise_on_error=False)
        t1 = time.monotonic_ns()
        for k, v in zip(batch, got):
            if isinstance(v, int) and v >= 1:
                hist.record("keyed:%s:%s" % (space, k), t0, t1, first=v, who="resp%d" % i)
            else:
                hist.record("keyed:%s:%s" % (space, k), t0, t1, error=str(v)[:60])
                bad += 1
    hist.close()
    r.close()
    os._exit(1 if bad else 0)


def incr_keys(port, hdir, space, keys, procs=4, pipe_n=1000, timeout=600):
    """One INCR of every key of keys, split over procs forked processes; True when every INCR
    answered an ID >= 1 (every call, answered or not, is in the histories under hdir)."""
    ctx = multiprocessing.get_context("fork")
    ps = [ctx.Process(target=_client, args=(i, procs, port, hdir, space, keys, pipe_n))
          for i in range(procs)]
    for p in ps:
        p.start()
    ok = True
    for p in ps:
        p.join(timeout)
        ok = ok and p.exitcode == 0
    return ok


def space_metric(node, name, space):
    """The value of the family name for the space in the node's /metrics, or None."""
    body = node.get("/metrics")[1]
    m = re.search(r'^%s\{space="%s"\} (\d+)' % (name, re.escape(space)), body, re.M)
    return int(m.group(1)) if m else None
