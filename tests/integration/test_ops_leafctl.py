"""tools/leafctl against a real node: start, double start refused, status,
restart, stop (clean exit), stale pid file handled, start failure reported."""
import os
import subprocess

from leafdtest import Env, check, free_port, http, log, static_props

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
LEAFCTL = os.path.join(ROOT, "tools", "leafctl")


def leafctl(*args, conf):
    r = subprocess.run([LEAFCTL] + list(args) + ["-c", conf], capture_output=True, text=True,
                       timeout=90, env=dict(os.environ))
    return r.returncode, r.stdout + r.stderr


with Env() as env:
    port = free_port()
    d = os.path.join(env.dir, "node")
    os.makedirs(d)
    conf = os.path.join(d, "leafd.properties")
    props = static_props(4, **{"leafd.listen": "127.0.0.1:%d" % port, "leafd.data.dir": "data"})
    with open(conf, "w") as f:
        f.writelines("%s = %s\n" % kv for kv in props.items())
    pidfile = os.path.join(d, "data", "leafd.pid")

    rc, out = leafctl("status", conf=conf)
    check(rc == 3, "status before start exits 3 (not answering), got %d: %s" % (rc, out))

    rc, out = leafctl("start", conf=conf)
    check(rc == 0 and "ready" in out, "start succeeds and waits for /ready: %d %s" % (rc, out))
    check(os.path.exists(pidfile), "pid file written under the data dir (relative to the config)")
    pid = int(open(pidfile).read())
    check(http(port, "/api/snowflake/get/x")[0] == 200, "node serves after start")

    rc, out = leafctl("start", conf=conf)
    check(rc != 0 and "already running" in out, "second start refused: %d %s" % (rc, out))
    check(int(open(pidfile).read()) == pid, "pid file untouched by the refused start")

    rc, out = leafctl("status", conf=conf)
    check(rc == 0 and '"status":"ready"' in out, "status exits 0 with /ready: %d %s" % (rc, out))

    rc, out = leafctl("restart", conf=conf)
    check(rc == 0, "restart succeeds: %s" % out)
    pid2 = int(open(pidfile).read())
    check(pid2 != pid, "restart runs a new process")
    check(not os.path.exists("/proc/%d" % pid) or
          "zombie" in open("/proc/%d/status" % pid).read().lower(), "old process gone")

    rc, out = leafctl("stop", conf=conf)
    check(rc == 0 and "stopped" in out, "stop exits 0: %s" % out)
    check(not os.path.exists(pidfile), "pid file removed on stop")
    logtext = open(os.path.join(d, "data", "leafd.log")).read()
    check("stopped cleanly" in logtext, "the node logged a clean stop")
    rc, out = leafctl("status", conf=conf)
    check(rc == 3, "status after stop exits 3: %d" % rc)

    # A stale pid file (process gone) is removed and start proceeds.
    with open(pidfile, "w") as f:
        f.write("999999\n")
    rc, out = leafctl("start", conf=conf)
    check(rc == 0 and "stale pid file" in out, "stale pid file handled: %d %s" % (rc, out))
    rc, out = leafctl("stop", conf=conf)
    check(rc == 0, "stop after stale-pid start")

    # A node that cannot start is reported with its log's tail.
    with open(conf, "a") as f:
        f.write("leafd.no.such.key = 1\n")
    rc, out = leafctl("start", conf=conf)
    check(rc != 0 and "leafd.no.such.key" in out, "bad config reported by start: %d %s" % (rc, out))
    log("leafctl checks done")
    env.finish()
