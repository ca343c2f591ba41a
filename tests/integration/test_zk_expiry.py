"""Forced session expiry (a second handle with the same session id, then
closed): the node opens a new session, the ephemeral node comes back, IDs
keep flowing without a single error, and /ready and /metrics show it."""
import time

from leafdtest import Env, check, log, wait_until
from zkhelpers import (Load, cli_list, expire_session, ready_json, session_id, worker_of,
                       zk_props)

env = Env()
zk = env.zookeeper()
n = env.leafd("n", zk_props(zk.address(), **{"leafd.zk.session.timeout.ms": "4000"}))
w = worker_of(n.get_ids("/api/snowflake/get/e")[0])
eph = "127.0.0.1:%d" % n.port
sid = session_id(n)
check(sid is not None, "leafd logs its session id")

load = Load([n], count=20)
load.start()
time.sleep(0.5)
check(expire_session(zk.address(), sid), "attached to the node's session and closed it")
new_sid = wait_until(lambda: session_id(n) if session_id(n) != sid else None, 20)
check(new_sid is not None, "a new session was established after expiry (%s)" % new_sid)
back = wait_until(lambda: eph in (cli_list(zk, "/snowflake/it/leaf_temporary") or []), 20,
                  interval=0.5)
check(back, "the ephemeral node came back after expiry")
st, r = wait_until(lambda: (lambda x: x if x[1]["snowflake"]["zookeeper"]["ephemeral"] else None)(
    ready_json(n)), 10) or (0, {})
log("ready after expiry: %s" % r)
z = r.get("snowflake", {}).get("zookeeper", {})
check(st == 200 and z.get("session") == "connected" and z.get("expirations") == 1,
      "/ready shows a connected session and one expiration: %s" % z)
metrics = n.get("/metrics")[1]
check("leafd_zk_session_expirations_total 1" in metrics, "metrics count the expiry")
time.sleep(1.0)
errors = load.finish()
check(not errors, "no client saw an error across the expiry: %s" % errors[:3])
check(len(load.ids[n.port]) > 100, "IDs kept flowing (%d)" % len(load.ids[n.port]))
check(worker_of(n.get_ids("/api/snowflake/get/e")[0]) == w, "same worker ID after expiry")
kids = cli_list(zk, "/snowflake/it/leaf_forever")
check(len(kids or []) == 1, "expiry created no second leaf_forever node: %s" % kids)
check(n.stop() == 0, "graceful stop")
env.finish()
