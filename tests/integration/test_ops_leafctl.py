"""tools/programs/leafctl against a real node: start, double start refused, status,
restart, stop (clean exit), stale pid file handled, start failure reported;
--help (exit 0, every command), status's one-line verdict, demote with the
admin token read from the configuration and never on curl's command line (a
curl shim records its arguments), and a missing binary as a clear error; keyed
list and keyed create refused with a last line that names the cause and the fix
(the sequences are off here; a bad name or step is refused before any call).
A second node configured on the port the first one serves: its start fails (its
leafd dies on bind) although /ready answers 200 there, and its status says "not
running" (exit 3) with no pid file or a stale one, never "ready"."""
import os
import re
import shutil
import subprocess

from leafdtest import Env, check, free_port, http, log, static_props

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
LEAFCTL = os.path.join(ROOT, "tools", "programs", "leafctl")


def leafctl(*args, conf, env_extra=None):
    e = dict(os.environ)
    e.pop("LEAFD_ADMIN_TOKEN", None)
    e.update(env_extra or {})
    r = subprocess.run([LEAFCTL] + list(args) + ["-c", conf], capture_output=True, text=True,
                       timeout=90, env=e)
    return r.returncode, r.stdout + r.stderr


TOKEN = "tok-3f9a1c-in-the-config-only"


with Env() as env:
    port = free_port()
    d = os.path.join(env.dir, "node")
    os.makedirs(d)
    conf = os.path.join(d, "leafd.properties")
    props = static_props(4, **{"leafd.listen": "127.0.0.1:%d" % port, "leafd.data.dir": "data",
                               "leafd.admin.token": TOKEN})
    with open(conf, "w") as f:
        f.writelines("%s = %s\n" % kv for kv in props.items())
    pidfile = os.path.join(d, "data", "leafd.pid")

    r = subprocess.run([LEAFCTL, "--help"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and all(c in r.stdout for c in
                                    ("start", "stop", "restart", "status", "demote", "user add",
                                     "user list", "user grant", "user revoke", "user rotate",
                                     "user del", "keyed list", "keyed create", "help")),
          "--help exits 0 and lists every command: %d %s" % (r.returncode, r.stdout))
    r = subprocess.run([LEAFCTL, "nosuch"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "unknown command" in r.stderr, "an unknown command: exit 2")
    rc, out = leafctl("status", conf=conf, env_extra={"LEAFD_BIN": "/nonexistent/leafd"})
    check(rc == 1 and "/nonexistent/leafd" in out and "command not found" not in out,
          "a missing binary is a clear error: %d %s" % (rc, out))

    rc, out = leafctl("status", conf=conf)
    check(rc == 3, "status before start exits 3 (not answering), got %d: %s" % (rc, out))
    check(out.startswith("NOT RUNNING"), "status's first line is the verdict: %s" % out)

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
    check("pid %d" % pid in out, "status names the pid that answers: %s" % out)
    check(re.search(r"^version \d+\.\d+\.\d+ \(commit [0-9a-f]+(-dirty)?\)$", out, re.M),
          "status names the node's version and commit: %s" % out)
    check(out.splitlines()[0] == "READY: leafd pid %d on http://127.0.0.1:%d" % (pid, port),
          "status's first line is the verdict: %s" % out)

    # With no -c, leafctl finds the quickstart's node (var/leafd.properties while
    # var/leafd/leafd.pid is alive), here in a copy of the tree's layout.
    qroot = os.path.join(env.dir, "qroot")
    os.makedirs(os.path.join(qroot, "tools", "programs"))
    os.makedirs(os.path.join(qroot, "var", "leafd"))
    shutil.copy(LEAFCTL, os.path.join(qroot, "tools", "programs", "leafctl"))
    qprops = dict(props, **{"leafd.data.dir": os.path.join(qroot, "var", "leafd")})
    with open(os.path.join(qroot, "var", "leafd.properties"), "w") as f:
        f.writelines("%s = %s\n" % kv for kv in qprops.items())
    with open(os.path.join(qroot, "var", "leafd", "leafd.pid"), "w") as f:
        f.write("%d\n" % pid)
    e = dict(os.environ, LEAFD_BIN=os.environ.get("LEAFD_BIN", ""))
    e.pop("LEAFD_CONF", None)
    r = subprocess.run([os.path.join(qroot, "tools", "programs", "leafctl"), "status"],
                       capture_output=True, text=True, timeout=30, env=e)
    check(r.returncode == 0 and r.stdout.startswith("READY: leafd pid %d" % pid),
          "leafctl status with no -c finds the quickstart's node: %d %s %s"
          % (r.returncode, r.stdout, r.stderr))

    # demote: the token comes from the configuration, and reaches curl on its stdin only.
    shim = os.path.join(env.dir, "shim")
    os.makedirs(shim)
    argv_log = os.path.join(env.dir, "curl-argv")
    with open(os.path.join(shim, "curl"), "w") as f:
        f.write("#!/bin/sh\nprintf '%%s\\n' \"$*\" >>%s\nexec /usr/bin/curl \"$@\"\n" % argv_log)
    os.chmod(os.path.join(shim, "curl"), 0o755)
    rc, out = leafctl("demote", conf=conf,
                      env_extra={"PATH": shim + ":" + os.environ.get("PATH", "")})
    check(rc == 1 and "sequence" in out and "unauthorized" not in out and "admin" not in out,
          "demote sent the configuration's token (sequences are off here): %d %s" % (rc, out))
    check(os.path.exists(argv_log) and "/api/cluster/demote" in open(argv_log).read(),
          "demote ran curl")
    check(TOKEN not in open(argv_log).read(), "the token is not on curl's command line")

    # keyed: the sequences are off on this node, so the node refuses; the last line says why
    # and what to change. A bad name or step never reaches the node.
    for args in (["list"], ["list", "--json"], ["create", "chat", "--step", "100"]):
        rc, out = leafctl("keyed", *args, conf=conf)
        last = out.strip().splitlines()[-1]
        check(rc == 1 and '"code":"sequence_disabled"' in out and
              "leafd.sequence.enable = true" in last and last.startswith("leafctl: keyed "),
              "keyed %s with the sequences off: exit 1, cause and fix last: %d %s"
              % (" ".join(args), rc, out))
    for args, why in ((["create", "a/b"], "[A-Za-z0-9._-]"), (["create", ".."], "not . or .."),
                      (["create", "chat", "--step", "0"], "1 to 2^40"),
                      (["create", "chat", "--step", "1099511627777"], "1 to 2^40"),
                      (["create", "chat", "--size", "3"], "unknown option"),
                      (["list", "extra"], "unknown argument"), (["nosuch"], "usage: leafctl keyed")):
        rc, out = leafctl("keyed", *args, conf=conf)
        check(rc == 1 and why in out.strip().splitlines()[-1] and '"code"' not in out,
              "keyed %s refused before any call: %d %s" % (" ".join(args), rc, out))

    # A second node (own config and data dir) on the port node 1 serves: /ready answers
    # 200 there all along, from node 1. Its leafd dies on bind; start must say so.
    d2 = os.path.join(env.dir, "node2")
    os.makedirs(d2)
    conf2 = os.path.join(d2, "leafd.properties")
    props2 = static_props(5, **{"leafd.listen": "127.0.0.1:%d" % port, "leafd.data.dir": "data"})
    with open(conf2, "w") as f:
        f.writelines("%s = %s\n" % kv for kv in props2.items())
    pidfile2 = os.path.join(d2, "data", "leafd.pid")
    rc, out = leafctl("status", conf=conf2)
    check(rc == 3 and "not running" in out and "ready" not in out.replace("already", ""),
          "status of a node never started, its port served by another: exit 3: %d %s" % (rc, out))
    rc, out = leafctl("start", conf=conf2)
    check(rc == 1, "start on a port another leafd serves fails: %d %s" % (rc, out))
    check("exited" in out and "bind(" in out and "leafd started" not in out,
          "the failure says leafd exited and shows the bind error from its log: %s" % out)
    check("another process answers" in out, "the failure names the other listener: %s" % out)
    check(not os.path.exists(pidfile2), "no pid file left by the failed start")
    rc, out = leafctl("status", conf=conf2)
    check(rc == 3 and "not running" in out, "status after the failed start: exit 3: %d %s" % (rc, out))
    # A stale pid file (a pid that is not a live leafd) is not running either, even with
    # /ready answering 200 on the port.
    with open(pidfile2, "w") as f:
        f.write("999999\n")
    rc, out = leafctl("status", conf=conf2)
    check(rc == 3 and "stale pid file" in out and "pid ?" not in out,
          "status with a stale pid file: exit 3, says stale: %d %s" % (rc, out))
    with open(pidfile2, "w") as f:
        f.write("%d\n" % os.getpid())  # alive, but not leafd
    rc, out = leafctl("status", conf=conf2)
    check(rc == 3 and "not running" in out,
          "status with a pid file naming a live non-leafd process: exit 3: %d %s" % (rc, out))
    os.unlink(pidfile2)
    check(http(port, "/api/snowflake/get/x")[0] == 200 and int(open(pidfile).read()) == pid,
          "node 1 unaffected by node 2's attempts")

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
    rc, out = leafctl("keyed", "list", conf=conf)
    check(rc == 1 and "no answer from" in out.strip().splitlines()[-1] and "leafctl status" in out,
          "keyed list with no node: exit 1, says so: %d %s" % (rc, out))

    # A stale pid file (process gone): status says not running; start removes it.
    with open(pidfile, "w") as f:
        f.write("999999\n")
    rc, out = leafctl("status", conf=conf)
    check(rc == 3 and "stale pid file" in out, "status with a stale pid file exits 3: %d %s" % (rc, out))
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
