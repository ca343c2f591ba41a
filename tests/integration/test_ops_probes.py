"""The probes a Kubernetes pod is given (docs/kubernetes.md, "Probes" and "Stopping"):

- ZooKeeper is a weak dependency of segment IDs: with ZooKeeper gone a node with snowflake
  (a named identity, as the StatefulSet runs it) and segment stops snowflake within seconds, a plain /ready turns 503, but
  /ready?mode=segment and /ready?mode=any stay 200 while segment IDs are served, and
  /ready?mode=snowflake answers 503 naming snowflake;
- leafd.stop.delay.ms: after SIGTERM the node answers /ready 503 ("stopping") and still
  serves IDs for the delay, then drains and exits 0."""
import json
import signal
import time

from leafdtest import Env, check, log, seg_props, wait_until
from zkhelpers import zk_props

with Env() as env:
    zk = env.zookeeper()
    db = env.mariadb()
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('p', 1, 1000, '')")
    props = zk_props(zk.address(), **seg_props(db, **{"leafd.zk.session.timeout.ms": "4000",
                                                      "leafd.snowflake.identity": "probes-0",
                                                      "leafd.stop.delay.ms": "2000"}))
    n = env.leafd("n", props)
    check(n.get("/api/segment/get/p")[0] == 200, "segment IDs before ZooKeeper goes")

    zk.stop()
    log("ZooKeeper stopped")
    check(wait_until(lambda: n.get("/ready")[0] == 503, 15, 0.2),
          "a plain /ready turns 503 once snowflake stops (ZooKeeper gone)")
    for path in ("/ready?mode=segment", "/ready?mode=any"):
        st, body, _ = n.get(path)
        check(st == 200, "%s: 200 while segment can issue (got %d %s)" % (path, st, body[:300]))
    st, body, _ = n.get("/ready?mode=snowflake")
    check(st == 503 and "snowflake" in json.loads(body).get("message", ""),
          "/ready?mode=snowflake: 503 naming snowflake (got %d %s)" % (st, body[:300]))
    check(n.get("/api/segment/get/p")[0] == 200, "segment IDs still served without ZooKeeper")
    zk.start()

    # The stop delay: /ready 503 at once, IDs still served, then the drain.
    t0 = time.monotonic()
    n.proc.p.send_signal(signal.SIGTERM)
    check(wait_until(lambda: n.get("/ready?mode=segment")[0] == 503, 1, 0.05),
          "after SIGTERM /ready?mode=segment answers 503 at once")
    st, body, _ = n.get("/ready")
    check(st == 503 and json.loads(body).get("stopping") is True and "stopping" in body,
          "/ready says the node is stopping: %s" % body[-200:])
    time.sleep(1.0)
    check(n.proc.alive() and n.get("/api/segment/get/p")[0] == 200,
          "1 s into the 2 s delay: the listener is open and IDs are served")
    rc = n.wait_exit(20)
    took = time.monotonic() - t0
    check(rc == 0 and took >= 2.0, "exit 0 after the delay and the drain (rc %s, %.1f s)" % (rc, took))
    check("leafd.stop.delay.ms" in n.log_text(), "the log names the delay")
    n.proc = None
    env.finish()
