"""The old process of an in-place upgrade killed during the hand-over (docs/UPGRADING.md, "In
place, without a restart"): the new process already holds the sockets and the lock, so it
carries on alone, on a new ZooKeeper session, as a restart after a crash would, and says so in
the log the operator reads (before: it exited 1 with no line at all, its stderr being a pipe to
the dead process, and the node was down).

A node with sequences and snowflake IDs under HTTP clients (snowflake and a sequence): SIGUSR2,
then kill -9 of the old process as soon as the new one has adopted the listeners. The new process
logs `exited before it handed over ... starting alone`, serves with the same worker ID, the
sequence goes on strictly increasing, no ID twice, and the pid file names it.
"""
import os
import re
import signal
import time

import reloadload
from leafdtest import Env, check, http, log, pid_alive, wait_until
from zkhelpers import worker_of

env = Env()
zk = env.zookeeper()
node, w0, data_dir = reloadload.sequence_node(env, zk, "rk")
pid = node.proc.p.pid


def ready():
    return reloadload.ready(node.port)


new = None
try:
    st, cl = reloadload.start(node.port, node.resp_port, "rk", ("http", "http", "seq"))
    time.sleep(0.5)
    os.kill(pid, signal.SIGUSR2)
    check(wait_until(lambda: "adopted the listeners" in node.log_text(), 30, 0.001),
          "the new process adopted the listeners")
    os.kill(pid, signal.SIGKILL)
    node.proc.p.wait()
    started = re.findall(r"in-place upgrade: started pid (\d+)", node.log_text())
    new = int(started[-1]) if started else None
    check(wait_until(lambda: "exited before it handed over" in node.log_text(), 20, 0.02),
          "the new process logs that the old one exited before handing over")
    check(wait_until(ready, 30, 0.05), "the new process serves")
    time.sleep(1.0)
    # Requests in flight on the killed process fail (kill -9); none may repeat an ID.
    for c in cl:
        c.stop_flag.set()
    for c in cl:
        c.join(30)
    snow = [x for c in cl if c.kind != "seq" for x in c.mine]
    seq = [x for c in cl if c.kind == "seq" for x in c.mine]
    log("%d snowflake and %d sequence IDs; %d failed requests (%s)"
        % (len(snow), len(seq), st.failed, st.errors[:3]))
    check(len(snow) == len(set(snow)), "no snowflake ID twice")
    check({worker_of(x) for x in snow} == {w0}, "the same worker ID throughout")
    check(all(a < b for a, b in zip(seq, seq[1:])), "the sequence strictly increases")
    check(new is not None and pid_alive(new), "the new process (pid %s) runs" % new)
    with open(os.path.join(data_dir, "leafd.pid")) as f:
        check(f.read().strip() == str(new), "the pid file names the new process")
    check("not started (exit 1)" not in node.log_text(), "no process exited 1")
finally:
    if new is not None and pid_alive(new):
        os.kill(new, signal.SIGTERM)
        check(wait_until(lambda: not pid_alive(new), 20, 0.1), "the new process stops at SIGTERM")
    check("Sanitizer" not in node.log_text(), "no sanitizer report in the log of any process")
env.finish()
