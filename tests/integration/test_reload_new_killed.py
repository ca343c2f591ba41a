"""The new process of an in-place upgrade killed after it adopted the listeners, before the old
one handed its ZooKeeper session over (docs/UPGRADING.md, "In place, without a restart"): until
the end of its drain the old process has only stopped accepting (its listening sockets open, its
services and its session untouched), so it calls the drain off and serves on, and says so in its
log (before: it stopped as at SIGTERM and exited 1, and the node was down).

A node with sequences and snowflake IDs under load (tests/lib/reloadload.py: HTTP keep-alive
snowflake clients, a sequence client, redis-py and a RESP client with 10 commands in flight):
SIGUSR2, then kill -9 of the new process as soon as the old one logs that it adopted the
listeners. An idle RESP connection holds the drain open for about 1.3 s (300 ms of quiet, then
up to 1 s for the client's FIN), so that the kill lands inside it, as a crash of the new process
at its start would. The old process logs `in-place upgrade failed: the new process (pid N) was
killed by signal 9 ...; serving on`, keeps serving (/ready 200, requests after the failure
answered), 0 failed requests, no ID twice, IDs in order, the lock and the pid file name it again.
Then a second SIGUSR2 upgrades it normally, under load again.
"""
import os
import re
import signal
import socket
import time

import reloadload
from leafdtest import Env, check, http, log, pid_alive, wait_until

KINDS = ("http", "http", "seq", "redis", "pipe")

env = Env()
zk = env.zookeeper()
node, w0, data_dir = reloadload.sequence_node(env, zk, "rn")
pid = node.proc.p.pid


def ready():
    return reloadload.ready(node.port)


def started():
    """The pids the node's processes started for upgrades, in order."""
    return [int(p) for p in re.findall(r"in-place upgrade: started pid (\d+)", node.log_text())]


def named(name):
    with open(os.path.join(data_dir, name)) as f:
        return f.read().strip()


def second_upgrade():
    """SIGUSR2 to the old process under load again: a normal upgrade; returns the new pid."""
    st, cl = reloadload.start(node.port, node.resp_port, "rn", KINDS)
    time.sleep(0.5)
    n0 = len(started())
    os.kill(pid, signal.SIGUSR2)
    check(wait_until(lambda: len(started()) > n0, 20, 0.01), "the old process starts a new one")
    new = started()[-1]
    check(wait_until(lambda: "handed over to pid %d" % new in node.log_text(), 60, 0.02),
          "the second upgrade hands over to pid %d" % new)
    check(wait_until(lambda: not pid_alive(pid), 30, 0.05), "the old process exits")
    check(wait_until(ready, 30, 0.05), "the new process serves")
    time.sleep(0.5)
    workers = reloadload.stop(st, cl, "second upgrade")
    check(workers == {w0}, "the same worker ID after the upgrade (%s, was %s)" % (workers, w0))
    for name in ("leafd.pid", "leafd.lock"):
        check(named(name) == str(new), "%s names the new process %d (%s)"
              % (name, new, named(name)))
    check("not started (exit 1)" not in node.log_text(), "no process exited 1")
    return new


serving = pid
new = None
try:
    # 1. The new process killed during the old one's drain.
    st, cl = reloadload.start(node.port, node.resp_port, "rn", KINDS)
    time.sleep(0.5)
    idle = socket.create_connection(("127.0.0.1", node.resp_port))
    idle.sendall(b"PING\r\n")
    check(idle.recv(100) == b"+PONG\r\n", "an idle RESP connection to the serving process")
    adopted = node.log_text().count("adopted the listeners")
    os.kill(pid, signal.SIGUSR2)
    check(wait_until(lambda: node.log_text().count("adopted the listeners") > adopted, 30, 0.001),
          "the new process adopted the listeners")
    new = started()[-1]
    os.kill(new, signal.SIGKILL)
    killed_at = time.monotonic()
    line = "in-place upgrade failed: the new process (pid %d) was killed by signal 9" % new
    check(wait_until(lambda: line in node.log_text(), 20, 0.005),
          "the old process logs the failure (%s ...)" % line)
    resumed = time.monotonic() - killed_at
    text = node.log_text()
    m = re.search(re.escape(line) + r"[^\n]*", text)
    log("%.0f ms from the kill to the log line: %s" % (resumed * 1000, m.group(0) if m else "?"))
    check(m is not None and "serving on from this process (pid %d)" % pid in m.group(0),
          "the line says the old process serves on")
    check(wait_until(ready, 10, 0.02), "the old process answers /ready 200")
    count = st.count
    time.sleep(1.5)
    check(st.count > count + 50, "requests after the failure are answered (%d in 1.5 s)"
          % (st.count - count))
    check(pid_alive(pid), "the old process (pid %d) runs" % pid)
    check(not pid_alive(new), "the new process (pid %d) is gone" % new)
    idle.close()
    workers = reloadload.stop(st, cl, "new process killed")
    check(workers == {w0}, "the same worker ID throughout (%s, was %s)" % (workers, w0))
    text = node.log_text()
    check("handed over to pid" not in text, "no hand-over")
    check("exiting 1" not in text and "stopped after a failure" not in text,
          "the old process did not stop")
    for name in ("leafd.pid", "leafd.lock"):
        check(named(name) == str(pid), "%s names the old process %d again (%s)"
              % (name, pid, named(name)))

    # 2. A second SIGUSR2 upgrades it as usual (not tried when the old process has gone).
    if pid_alive(pid):
        serving = second_upgrade()
finally:
    if serving != node.proc.p.pid and pid_alive(serving):
        os.kill(serving, signal.SIGTERM)
        check(wait_until(lambda: not pid_alive(serving), 20, 0.1),
              "the serving process stops at SIGTERM")
        time.sleep(0.3)
    check("Sanitizer" not in node.log_text(), "no sanitizer report in the log of any process")
env.finish()
