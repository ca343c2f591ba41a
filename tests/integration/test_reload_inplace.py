"""In-place binary upgrade (docs/UPGRADING.md, "In place, without a restart").

A forever-mode node with sequences and RESP serves four kinds of clients at
once: HTTP keep-alive clients that reconnect on `Connection: close`, a redis-py
client with default settings, a RESP client with 10 commands in flight and a
sequence client (tests/lib/reloadload.py). `kill -USR2` replaces the
process: 0 failed HTTP requests, 0 errors to the redis-py caller, 0 short
pipelines, 0 refused connections, 0 duplicates, IDs increasing per client (each client's requests
are sequential, across its reconnects), strict sequence order, the same worker
ID after, the old pid gone with exit 0. The longest pause any client saw is
logged.

systemd (Type=notify, a datagram socket standing in for it): the old process
says MAINPID=<new pid>, the new one READY=1 with MAINPID=<its pid>; no
STOPPING=1 (the service does not stop).

A new binary that fails (a bad configuration written before USR2) leaves the
old process serving with 0 failed requests, and the old one logs the reason.

20 upgrades in a row under load: descriptors, RSS and znodes before and after.
"""
import os
import re
import signal
import time

import reloadload
from fakesystemd import FakeSystemd
from leafdtest import check, Env, http as http_get, log, pid_alive, rss_kb, wait_until
from zkhelpers import worker_of, zk_props

env = Env()
systemd = FakeSystemd(os.path.join(env.dir, "notify.sock"))
systemd.start()
zk = env.zookeeper()
props = zk_props(zk.address(), name="rl", **{
    "leafd.sequence.enable": "true", "leafd.sequence.batch": "100",
    "leafd.sequence.autocreate": "true",
    "leafd.zk.session.timeout.ms": "6000"})
node = env.leafd("n0", props, resp=True, extra_env={"NOTIFY_SOCKET": os.path.join(env.dir, "notify.sock")})
port, resp_port = node.port, node.resp_port
check(node.wait_sequence("rs", 30) == 200, "the sequence rs is served")


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def znodes():
    """Every znode under the cluster's trees, counted with zkCli's ls -R."""
    n = 0
    for root in ("/snowflake/rl", "/leafd/rl"):
        out = zk.cli("ls", "-R", root)
        n += sum(1 for line in out.splitlines() if line.startswith(root))
    return n


def start_load():
    return reloadload.start(port, resp_port, "rl", ("http", "http", "seq", "redis", "pipe"))


def stop_load(st, cl, label):
    return reloadload.stop(st, cl, label)


def log_count(pattern):
    return len(re.findall(pattern, node.log_text()))


def upgrade(pid, label, timeout=40):
    """kill -USR2 pid; waits for the hand-over and the old pid's exit; returns the new pid."""
    before = log_count(r"handed over to pid \d+")
    os.kill(pid, signal.SIGUSR2)
    ok = wait_until(lambda: log_count(r"handed over to pid \d+") > before, timeout, 0.05)
    check(ok, "%s: the old process handed over" % label)
    if not ok:
        log(node.log_text()[-3000:])
        return None
    new = int(re.findall(r"handed over to pid (\d+)", node.log_text())[-1])
    check(wait_until(lambda: not pid_alive(pid), 20, 0.05), "%s: the old pid %d is gone" % (label, pid))
    check(wait_until(lambda: http_get(port, "/ready")[0] == 200, 30, 0.05),
          "%s: the new process (pid %d) is ready" % (label, new))
    return new


pids = [node.proc.p.pid]
try:
    log("one upgrade under load")
    w_before = worker_of(node.get_ids("/api/snowflake/get/rl")[0])
    st, cl = start_load()
    time.sleep(1.0)
    new = upgrade(pids[-1], "upgrade 1")
    time.sleep(1.0)
    workers = stop_load(st, cl, "upgrade 1")
    check(new is not None, "upgrade 1 gave a new pid")
    if new is not None:
        pids.append(new)
        check(node.proc.p.wait(10) == 0, "the old process exited 0")
        w_after = worker_of(node.get_ids("/api/snowflake/get/rl")[0])
        check(workers == {w_before} and w_after == w_before,
              "the same worker ID before and after (%s, %s, during %s)" % (w_before, w_after, workers))
        check(wait_until(lambda: any(m.get("READY") == "1" and m.get("MAINPID") == str(new)
                                     for m in systemd.kvs()), 10, 0.05),
              "systemd: READY=1 with MAINPID=%d from the new process" % new)
        check(any(m.get("MAINPID") == str(new) and "READY" not in m for m in systemd.kvs()),
              "systemd: MAINPID=%d from the old process before it exits" % new)
        check(not any("STOPPING" in m for m in systemd.kvs()), "systemd: no STOPPING=1")
        gap = re.findall(r"accepting again (\d+) ms after", node.log_text())
        log("gap logged by the new process: %s ms" % gap)
        check(len(gap) == 1, "the new process logged the gap")

        log("a failing new binary: bad configuration written before USR2")
        good = open(node.conf).read()
        with open(node.conf, "a") as f:
            f.write("leafd.no.such.key = 1\n")
        st, cl = start_load()
        time.sleep(0.5)
        os.kill(pids[-1], signal.SIGUSR2)
        check(wait_until(lambda: "in-place upgrade failed" in node.log_text(), 30, 0.05),
              "the old process logs the failed upgrade")
        time.sleep(0.5)
        stop_load(st, cl, "failed upgrade")
        text = node.log_text()
        line = [x for x in text.splitlines() if "in-place upgrade failed" in x]
        log("logged: %s" % (line[-1][:400] if line else None))
        check(line and "no.such.key" in line[-1], "the reason names the bad key")
        check(pid_alive(pids[-1]), "the old process still runs")
        check(http_get(port, "/ready")[0] == 200, "and is ready")
        with open(node.conf, "w") as f:
            f.write(good)

        log("a changed listen address is a restart: refused, the old keeps serving")
        from leafdtest import free_port
        with open(node.conf, "w") as f:
            f.write(good.replace("leafd.resp.listen = 127.0.0.1:%d" % resp_port,
                                 "leafd.resp.listen = 127.0.0.1:%d" % free_port()))
        os.kill(pids[-1], signal.SIGUSR2)
        check(wait_until(lambda: log_count("in-place upgrade failed") == 2, 30, 0.05),
              "the old process logs the second failed upgrade")
        line = [x for x in node.log_text().splitlines() if "in-place upgrade failed" in x]
        log("logged: %s" % (line[-1][-300:] if line else None))
        check(line and "changed listen address needs a restart" in line[-1],
              "the reason says a changed listen address needs a restart")
        check(pid_alive(pids[-1]) and http_get(port, "/ready")[0] == 200, "the old process still serves")
        with open(node.conf, "w") as f:
            f.write(good)

        log("a changed data dir is a restart: refused, the old keeps serving")
        other = os.path.join(env.dir, "other-data")
        os.makedirs(other)
        with open(node.conf, "w") as f:
            f.write(re.sub(r"(?m)^leafd\.data\.dir = .*$", "leafd.data.dir = " + other, good))
        os.kill(pids[-1], signal.SIGUSR2)
        check(wait_until(lambda: log_count("in-place upgrade failed") == 3, 30, 0.05),
              "the old process logs the third failed upgrade")
        line = [x for x in node.log_text().splitlines() if "in-place upgrade failed" in x]
        log("logged: %s" % (line[-1][-300:] if line else None))
        check(line and "leafd.data.dir changed" in line[-1],
              "the reason says leafd.data.dir changed (the lock handed over is another dir's)")
        check(pid_alive(pids[-1]) and http_get(port, "/ready")[0] == 200, "the old process still serves")
        with open(node.conf, "w") as f:
            f.write(good)

        log("20 upgrades in a row under load")
        time.sleep(0.5)
        fd0, rss0, zn0 = fd_count(pids[-1]), rss_kb(pids[-1]), znodes()
        st, cl = start_load()
        for i in range(20):
            new = upgrade(pids[-1], "upgrade %d of 20" % (i + 1))
            if new is None:
                break
            pids.append(new)
            time.sleep(0.3)
        stop_load(st, cl, "20 upgrades")
        time.sleep(0.5)
        fd1, rss1, zn1 = fd_count(pids[-1]), rss_kb(pids[-1]), znodes()
        log("before/after 20 upgrades: fds %d/%d, RSS %d/%d kB, znodes %d/%d"
            % (fd0, fd1, rss0, rss1, zn0, zn1))
        check(fd1 <= fd0 + 2, "no descriptor leak (%d -> %d)" % (fd0, fd1))
        check(rss1 < rss0 * 1.5, "no memory growth (%d -> %d kB)" % (rss0, rss1))
        check(zn1 == zn0, "no znode leak (%d -> %d)" % (zn0, zn1))
        check(len(set(pids)) == len(pids), "every upgrade is a new process")
        sessions = set(re.findall(r"handed over to pid \d+ \(ZooKeeper session (0x[0-9a-f]+)",
                                  node.log_text()))
        check(len(sessions) == 1, "one ZooKeeper session through every upgrade (%s)" % sessions)
finally:
    last = pids[-1]
    if last != node.proc.p.pid and pid_alive(last):
        os.kill(last, signal.SIGTERM)
        check(wait_until(lambda: not pid_alive(last), 20, 0.1), "the last process stops at SIGTERM")
        time.sleep(0.5)
        text = node.log_text()
        check(text.rstrip().endswith('msg="stopped cleanly"'), "the last process stopped cleanly")
        check("Sanitizer" not in text, "no sanitizer report in the log of any process")
env.finish()
