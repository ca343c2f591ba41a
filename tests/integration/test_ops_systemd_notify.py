"""Type=notify (conf/leafd.service): a Python datagram socket stands in for systemd
($NOTIFY_SOCKET). A node whose database is down at start tells STATUS= with the
reason and no READY=1; once the database is up, READY=1 arrives when /ready answers
200; SIGTERM sends STOPPING=1. The same run checks leafd.log.format = json (every
line a JSON object with time, level, component, msg), that the database outage is
logged once plus the count held back (not a line per reconnect), that leafd_ready
follows, and that a static node's stop does not claim it wrote to ZooKeeper."""
import json
import os
import time

from fakesystemd import FakeSystemd
from leafdtest import Env, check, http, log, seg_props, static_props, wait_until


def metric(text, line_start):
    return next((l.rsplit(" ", 1)[1] for l in text.splitlines() if l.startswith(line_start)), None)


with Env() as env:
    db = env.mariadb()
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('sd', 1, 1000, '')")
    db.stop()  # down at the node's start

    systemd = FakeSystemd(os.path.join(env.dir, "notify.sock"))
    systemd.start()
    props = static_props(7, **seg_props(db, **{"leafd.log.format": "json"}))
    node = env.leafd("n1", props, wait_ready=False,
                     extra_env={"NOTIFY_SOCKET": systemd.path})
    check(wait_until(lambda: any("not ready" in m[1].get("STATUS", "") for m in systemd.messages), 10),
          "STATUS= says the node is not ready (got %r)" % systemd.messages[:3])
    status = next(m[1]["STATUS"] for m in systemd.messages if "STATUS" in m[1])
    check("segment" in status and "database unreachable" in status,
          "the STATUS names the component and the reason (got %r)" % status)
    check(systemd.first("READY") is None, "no READY=1 while the database is down")
    st, _, _ = http(node.port, "/ready")
    check(st == 503, "and /ready answers 503 meanwhile (got %d)" % st)
    st, m, _ = http(node.port, "/metrics")
    check(metric(m, 'leafd_ready{component="segment"}') == "0" and metric(m, 'leafd_ready{component="all"}') == "0"
          and metric(m, 'leafd_ready{component="snowflake"}') == "1",
          "leafd_ready: segment 0, snowflake 1, all 0")
    time.sleep(3)  # a few reconnect attempts (backoff 100 ms doubling to 2 s)

    db.start()
    check(wait_until(lambda: systemd.first("READY") is not None, 20), "READY=1 once the database is back")
    st, _, _ = http(node.port, "/ready")
    check(st == 200, "/ready answers 200 when READY=1 has been sent (got %d)" % st)
    ready = systemd.first("READY")[1]
    check(ready.get("READY") == "1" and ready.get("STATUS") == "ready",
          "READY=1 comes with STATUS=ready (got %r)" % ready)
    st, m, _ = http(node.port, "/metrics")
    check(metric(m, 'leafd_ready{component="all"}') == "1", "leafd_ready{component=\"all\"} is 1")

    check(node.stop() == 0, "SIGTERM: the node stops cleanly")
    check(wait_until(lambda: systemd.first("STOPPING") is not None, 3), "STOPPING=1 at the drain")
    stopping = systemd.first("STOPPING")
    check(stopping[0] >= systemd.first("READY")[0] and "draining" in stopping[1].get("STATUS", ""),
          "STOPPING=1 after READY=1, with a STATUS saying it drains (got %r)" % (stopping[1],))
    systemd.stop()

    lines = [l for l in node.log_text().splitlines() if l.strip()]
    parsed = []
    for l in lines:
        try:
            o = json.loads(l)
        except ValueError:
            o = None
        check(isinstance(o, dict) and set(o) >= {"time", "level", "component", "msg"},
              "leafd.log.format = json: a JSON object with time, level, component, msg: %r" % l)
        parsed.append(o or {})
    db_errors = [o for o in parsed if o.get("component") == "segment" and o.get("level") in ("warn", "error")
                 and "connect(" in o.get("msg", "")]
    log("database error lines while it was down: %d" % len(db_errors))
    check(len(db_errors) == 1 and "a summary every 30 s" in db_errors[0]["msg"],
          "one line for the outage, not one per reconnect (got %r)" % [o["msg"] for o in db_errors])
    check(any("held back while it was away" in o.get("msg", "") for o in parsed),
          "the reconnect reports the lines held back")
    persisted = [o["msg"] for o in parsed if "persisted the last issued time" in o.get("msg", "")]
    check(persisted and "ZooKeeper" not in persisted[0],
          "a static node's stop does not say it persisted to ZooKeeper (got %r)" % persisted)
    env.finish()
