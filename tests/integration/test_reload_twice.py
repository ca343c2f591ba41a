"""Two in-place upgrades in a row (docs/UPGRADING.md, "In place, without a restart": "A second
upgrade while one runs").

`systemctl reload` twice in a row sends the second SIGUSR2 to the new process while it starts
(the old one told systemd MAINPID=<new> at the hand-over). The new process cannot hand over
listeners it has not started serving: it logs the signal and runs the upgrade once it accepts.

Under load (tests/lib/reloadload.py: HTTP keep-alive snowflake clients, a sequence client, a
redis-py client and a RESP client with 10 commands in flight), each round sends SIGUSR2 to the
serving process and a second SIGUSR2 to its new process 50 ms into its main() (in the second
round with ZooKeeper paused 1.5 s, so that the new process is surely still starting):
0 failed requests, 0 short pipelines, 0 refused connections, the same worker ID throughout, a
third process that serves at the end, and the second process's log says it held the upgrade until
it accepted. A SIGUSR2 to a process that is stopping after its hand-over is logged and ignored.
In the second round the sequence client retries a 503 `no_primary` as docs/reference/errors.md
tells clients to ("retry shortly"), counted and printed, and must be served again after it. There
ZooKeeper is paused 1.5 s while the second process starts, and the process that resumes the
session reads and fences each sequence through ZooKeeper before it issues again; a request waits
for that at most a second, then answers `no_primary` (never a hung request,
docs/reference/guarantees.md), and the new process itself accepts after at most 3 s of waiting for
the election (docs/UPGRADING.md, "In place, without a restart", step 4). Under ThreadSanitizer beside four other
jobs that took longer once. The first round, with ZooKeeper up, still allows no failed request at
all, and every round checks strict order, no duplicate and the same worker ID.
The pid file (leafctl's) and the data-dir lock name the serving process after each upgrade, and
`leafctl status` finds it.
"""
import os
import re
import signal
import socket
import subprocess
import threading
import time

import reloadload
from leafdtest import Env, check, http as http_get, log, pid_alive, wait_until
from zkhelpers import worker_of, zk_props

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
env = Env()
zk = env.zookeeper()
props = zk_props(zk.address(), name="rt", **{
    "leafd.sequence.enable": "true", "leafd.sequence.batch": "100",
    "leafd.sequence.autocreate": "true", "leafd.zk.session.timeout.ms": "6000"})
node = env.leafd("n0", props, resp=True)
check(node.wait_sequence("rs", 30) == 200, "the sequence rs is served")


def started():
    """The pids the node's processes started for upgrades, in order."""
    return [int(p) for p in re.findall(r"in-place upgrade: started pid (\d+)", node.log_text())]


def handed_to():
    """The pid the last hand-over went to."""
    handed = re.findall(r"handed over to pid (\d+)", node.log_text())
    return int(handed[-1]) if handed else None


w0 = worker_of(node.get_ids("/api/snowflake/get/rt")[0])
pid = node.proc.p.pid
# The pid file leafctl start writes; each upgrade's new process rewrites it (and the lock's pid).
data_dir = os.path.join(os.path.dirname(node.conf), "data")
with open(os.path.join(data_dir, "leafd.pid"), "w") as f:
    f.write("%d\n" % pid)
rounds = 2
try:
    for r in range(rounds):
        st, cl = reloadload.start(node.port, node.resp_port, "rt",
                                  ("http", "http", "seq", "redis", "pipe"), retry_no_primary=r == 1)
        time.sleep(0.5)
        n0 = len(started())
        os.kill(pid, signal.SIGUSR2)
        ok = wait_until(lambda: len(started()) > n0, 20, 0.002)
        check(ok, "round %d: the old process started a new one" % r)
        if not ok:
            break
        second = started()[-1]
        # 50 ms into its main(): a SIGUSR2 before main() installs its handler ends the process
        # (the default action; ~100 ms after exec in a sanitizer build, ~1 ms in a release
        # build), and the old one keeps serving (test_reload_inplace's failed upgrade).
        check(wait_until(lambda: "starting (pid %d," % second in node.log_text(), 20, 0.002),
              "round %d: pid %d runs" % (r, second))
        if r == 1:
            # ZooKeeper slow for 1.5 s (well within the 6 s session): the second process is
            # surely still starting when the next SIGUSR2 comes.
            zk.proc.p.send_signal(signal.SIGSTOP)
            threading.Timer(1.5, lambda: zk.proc.p.send_signal(signal.SIGCONT)).start()
        time.sleep(0.05)
        os.kill(second, signal.SIGUSR2)  # as a second `systemctl reload` would, to MAINPID
        ok = wait_until(lambda: len(started()) > n0 + 1, 60, 0.01)
        check(ok, "round %d: pid %d started the third process once it accepted" % (r, second))
        if not ok:
            log(node.log_text()[-4000:])
            break
        third = started()[-1]
        check(wait_until(lambda: handed_to() == third, 60, 0.02),
              "round %d: pid %d handed over to the third process %d" % (r, second, third))
        check(wait_until(lambda: not pid_alive(pid) and not pid_alive(second), 30, 0.05),
              "round %d: the first two processes are gone" % r)
        check(wait_until(lambda: http_get(node.port, "/ready")[0] == 200, 30, 0.05),
              "round %d: the third process serves" % r)
        time.sleep(0.5)
        workers = reloadload.stop(st, cl, "round %d" % r)
        check(workers == {w0}, "round %d: the same worker ID throughout (%s, was %s)"
              % (r, workers, w0))
        text = node.log_text()
        check(r == 0 or "received SIGUSR2 while starting" in text,
              "round %d: the second process logged the SIGUSR2 it held" % r)
        check("closing its 0 inherited socket" not in text,
              "round %d: no process was handed 0 listeners" % r)
        pid = third
    # A SIGUSR2 to a process that stops after its hand-over: logged, ignored. An idle RESP
    # connection keeps the old process draining for NET_POLITE_IDLE_MS (300 ms).
    idle = socket.create_connection(("127.0.0.1", node.resp_port))
    idle.sendall(b"PING\r\n")
    check(idle.recv(100) == b"+PONG\r\n", "an idle RESP connection to the serving process")
    n0 = len(started())
    adopted = node.log_text().count("adopted the listeners")
    os.kill(pid, signal.SIGUSR2)
    check(wait_until(lambda: node.log_text().count("adopted the listeners") > adopted, 30, 0.001),
          "a last upgrade: the new process adopted the listeners")
    # The old process drains now; 50 ms on it is surely past daemon_stop (a SIGUSR2 between the
    # "adopted" line and daemon_stop reaches the control loop's handler as that is closed, and
    # is dropped unlogged: a window of microseconds).
    time.sleep(0.05)
    os.kill(pid, signal.SIGUSR2)
    new = started()[-1]
    check(wait_until(lambda: handed_to() == new, 30, 0.01), "the last upgrade handed over")
    check(wait_until(lambda: not pid_alive(pid), 20, 0.05), "the old process exits")
    idle.close()
    check("received SIGUSR2 while stopping" in node.log_text(),
          "the stopping process logged the SIGUSR2 it ignored")
    check(len(started()) == n0 + 1, "and started nothing")
    check(wait_until(lambda: http_get(node.port, "/ready")[0] == 200, 30, 0.05),
          "the last process serves")
    pid = new
    check(worker_of(node.get_ids("/api/snowflake/get/rt")[0]) == w0, "the same worker ID at the end")
    for name in ("leafd.pid", "leafd.lock"):
        with open(os.path.join(data_dir, name)) as f:
            named = f.read().strip()
        check(named == str(pid), "%s names the serving process %d (%s)" % (name, pid, named))
    r = subprocess.run([os.path.join(ROOT, "tools", "programs", "leafctl"), "status", "-c", node.conf],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "READY" in r.stdout,
          "leafctl status finds the serving process (exit %d: %s)" % (r.returncode,
                                                                      (r.stdout + r.stderr)[:300]))
finally:
    if pid != node.proc.p.pid and pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        check(wait_until(lambda: not pid_alive(pid), 20, 0.1), "the last process stops at SIGTERM")
        time.sleep(0.3)
    check("Sanitizer" not in node.log_text(), "no sanitizer report in the log of any process")
env.finish()
