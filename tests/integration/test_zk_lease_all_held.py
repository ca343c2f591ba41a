"""Lease mode with every slot held (docs/IDENTITY.md, docs/IDENTITY.md).

A layout with one worker bit has two slots. Two lease nodes hold them; a third
starts anyway: /health 200 at once, /ready 503 naming "2 of 2 lease slots
held", one warn line saying so (not one per retry), the metric
leafd_snowflake_lease_slots_seen_held 2, and no snowflake ID. When one holder
stops, the third claims the freed slot by itself (no restart) and serves,
above everything the slot's holder issued. All IDs are unique.
"""
import time

from leafdtest import Env, check, http, log, wait_until
from zkhelpers import ready_json, zk_props

LAYOUT = "time:41,worker:1,sequence:21"


def props(zk):
    return zk_props(zk.address(), **{"leafd.snowflake.worker.mode": "lease",
                                     "leafd.snowflake.layout": LAYOUT,
                                     "leafd.zk.session.timeout.ms": "4000"})


def ids(node, n=200):
    st, body, _ = http(node.port, "/api/snowflake/get/a?count=%d" % n)
    return [int(x) for x in body.split()] if st == 200 else []


env = Env()
zk = env.zookeeper()
a = env.leafd("a", props(zk))
b = env.leafd("b", props(zk))
issued = ids(a) + ids(b)
check(len(issued) == 400, "two lease nodes hold the two slots and serve")

t0 = time.monotonic()
c = env.leafd("c", props(zk), wait_ready=False)
health = wait_until(lambda: http(c.port, "/health")[0] == 200, 10, 0.1)
check(health, "the third node answers /health 200 while every slot is held")
log("third node's /health up after %.1f s" % (time.monotonic() - t0))
st, r = ready_json(c)
reason = r.get("snowflake", {}).get("reason", "") or str(r)
check(st == 503 and "2 of 2 lease slots held" in reason, "/ready 503 names the slots: %s" % reason)
check(http(c.port, "/api/snowflake/get/a")[0] == 503, "no snowflake ID while no slot is held")
metrics = http(c.port, "/metrics")[1]
check("leafd_snowflake_lease_slots_seen_held 2" in metrics, "the metric shows the 2 held slots")
time.sleep(3)  # several retries
text = c.log_text()
n_warn = text.count("2 of 2 lease slots under")
check(n_warn == 1, "one warn line in 3 s of retries, not one per retry (%d)" % n_warn)
check(c.proc.alive(), "the third node keeps running (no exit after a timeout)")

issued += ids(a)
t1 = time.monotonic()
check(a.stop() == 0, "a holder stops gracefully")
ready = wait_until(lambda: http(c.port, "/ready")[0] == 200, 15, 0.1)
check(ready, "the third node claims the freed slot and becomes ready without a restart")
log("third node ready %.1f s after a holder stopped" % (time.monotonic() - t1))
issued += ids(c) + ids(b)
check(len(issued) == len(set(issued)), "no ID issued twice (%d IDs)" % len(issued))
check(c.stop() == 0 and b.stop() == 0, "graceful stops")
env.finish()
