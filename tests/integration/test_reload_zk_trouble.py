"""ZooKeeper trouble around an in-place upgrade (docs/UPGRADING.md, "In place, without a
restart"): an upgrade must not make a serving node unavailable.

- SIGUSR2 while the node's ZooKeeper session is not connected (ZooKeeper stopped; the node
  still serves snowflake IDs from its reservation): no new process is started, the node logs
  `in-place upgrade not started: the ZooKeeper session is not connected` and serves on; once
  ZooKeeper is back, the next SIGUSR2 upgrades it.
- ZooKeeper paused (SIGSTOP) right as the new process adopts the listeners, for 9 s with a 6 s
  session: the new process waits for it (logging `waiting for ZooKeeper ... to resume the adopted
  session`) instead of exiting 1 after the session timeout, and serves once ZooKeeper answers.
Under HTTP snowflake clients that wait as long as the hand-over may take: 0 failed requests,
0 duplicates, the same worker ID.
"""
import os
import re
import signal
import time

import reloadload
from leafdtest import Env, check, http, log, pid_alive, wait_until
from zkhelpers import worker_of, zk_props

env = Env()
zk = env.zookeeper()
props = zk_props(zk.address(), name="rz", **{"leafd.zk.session.timeout.ms": "6000"})
node = env.leafd("n0", props, resp=True)
w0 = worker_of(node.get_ids("/api/snowflake/get/rz")[0])
pid = node.proc.p.pid


def handed_to():
    handed = re.findall(r"handed over to pid (\d+)", node.log_text())
    return int(handed[-1]) if handed else None


def ready():
    try:
        return http(node.port, "/ready", timeout=2)[0] == 200
    except OSError:
        return False


try:
    log("SIGUSR2 with ZooKeeper stopped")
    zk.stop()
    time.sleep(1.5)  # the client notices the closed connection within a tick
    started_before = node.log_text().count("in-place upgrade: started pid")
    os.kill(pid, signal.SIGUSR2)
    check(wait_until(lambda: "in-place upgrade not started: the ZooKeeper session is not "
                             "connected" in node.log_text(), 10, 0.05),
          "the upgrade is refused while the session is not connected, and logged")
    check(node.log_text().count("in-place upgrade: started pid") == started_before,
          "no new process was started")
    check(pid_alive(pid), "the old process still runs")
    ids = node.get_ids("/api/snowflake/get/rz")
    check(len(ids) == 1 and worker_of(ids[0]) == w0, "and still serves snowflake IDs")
    sessions = len(re.findall(r"ZooKeeper session 0x[0-9a-f]+ established", node.log_text()))
    zk.start()
    check(wait_until(lambda: len(re.findall(r"ZooKeeper session 0x[0-9a-f]+ established",
                                                node.log_text())) > sessions and ready(),
                     30, 0.05), "the session is back once ZooKeeper is")
    os.kill(pid, signal.SIGUSR2)
    check(wait_until(lambda: handed_to() is not None, 30, 0.02), "then the upgrade runs")
    pid = handed_to() or pid
    check(wait_until(ready, 30, 0.05), "and the new process serves")

    log("ZooKeeper paused 9 s (session 6 s) as the new process adopts the listeners")
    st, cl = reloadload.start(node.port, node.resp_port, "rz", ("http", "http"))
    time.sleep(0.5)
    adopted = node.log_text().count("adopted the listeners")
    os.kill(pid, signal.SIGUSR2)
    check(wait_until(lambda: node.log_text().count("adopted the listeners") > adopted, 30, 0.001),
          "the new process adopted the listeners")
    zk.proc.p.send_signal(signal.SIGSTOP)
    t_stop = time.monotonic()
    time.sleep(9)
    zk.proc.p.send_signal(signal.SIGCONT)
    ok = wait_until(lambda: handed_to() not in (None, pid) and ready(), 60, 0.05)
    log("serving again %.1f s after ZooKeeper was paused" % (time.monotonic() - t_stop))
    check(ok, "a process serves once ZooKeeper answers again")
    text = node.log_text()
    check("to resume the adopted session" in text,
          "the new process logged that it waits for ZooKeeper")
    check("not started (exit 1)" not in text, "no process exited 1")
    workers = reloadload.stop(st, cl, "ZooKeeper paused at the hand-over")
    check(workers == {w0}, "the same worker ID throughout (%s, was %s)" % (workers, w0))
    pid = handed_to() or pid
finally:
    if pid != node.proc.p.pid and pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        check(wait_until(lambda: not pid_alive(pid), 20, 0.1), "the last process stops at SIGTERM")
    check("Sanitizer" not in node.log_text(), "no sanitizer report in the log of any process")
env.finish()
