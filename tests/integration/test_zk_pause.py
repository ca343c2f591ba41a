"""Paused processes (docs/RELIABILITY.md): SIGSTOP past the ZooKeeper session timeout.

1. The ZooKeeper server is stopped for PAUSE_S (> the 4 s session timeout)
   while a client takes snowflake IDs: every request is answered 200 (IDs
   flow on the local time reservation), IDs strictly increase, and after
   SIGCONT the node's session and ephemeral node are back.
2. A leafd node is stopped for PAUSE_S; meanwhile its session expires and
   two new nodes start. They get worker IDs of their own. After SIGCONT the
   paused node notices the expiry, registers again (ephemeral node back,
   same worker ID) and serves within a second, above every ID it issued
   before the pause.
"""
import os
import signal
import time

from leafdtest import Env, check, log, wait_until
from zkhelpers import Load, cli_list, worker_of, zk_props

PAUSE_S = 7
SESSION_MS = "4000"


def zk_paused(env, zk):
    n = env.leafd("a", zk_props(zk.address(), **{"leafd.zk.session.timeout.ms": SESSION_MS}))
    load = Load([n], count=10)
    load.start()
    time.sleep(1.0)
    before = load.requests
    os.kill(zk.proc.p.pid, signal.SIGSTOP)
    log("ZooKeeper stopped for %d s" % PAUSE_S)
    time.sleep(PAUSE_S)
    during = load.requests - before
    os.kill(zk.proc.p.pid, signal.SIGCONT)
    eph = "127.0.0.1:%d" % n.port
    back = wait_until(lambda: eph in (cli_list(zk, "/snowflake/it/leaf_temporary") or []), 30, 0.5)
    check(back, "ZooKeeper paused: the ephemeral node is there after SIGCONT")
    time.sleep(0.5)
    errors = load.finish()
    log("ZooKeeper paused: %d requests during the pause, %d errors" % (during, len(errors)))
    check(during > 50, "ZooKeeper paused: IDs kept flowing during the pause (%d requests)" % during)
    check(not errors, "ZooKeeper paused: no request failed (%r)" % errors[:3])
    check(n.get("/ready")[0] == 200, "ZooKeeper paused: ready afterwards")
    n.stop()


def node_paused(env, zk):
    n1 = env.leafd("p1", zk_props(zk.address(), name="np", **{"leafd.zk.session.timeout.ms": SESSION_MS}))
    ids_before = n1.get_ids("/api/snowflake/get/x?count=100")
    w1 = worker_of(ids_before[0])
    eph = "127.0.0.1:%d" % n1.port
    os.kill(n1.proc.p.pid, signal.SIGSTOP)
    log("node stopped for %d s" % PAUSE_S)
    t0 = time.monotonic()
    def expired():
        kids = cli_list(zk, "/snowflake/np/leaf_temporary")
        return kids is not None and eph not in kids
    gone = wait_until(expired, PAUSE_S + 10, 0.5)
    check(gone, "node paused: its session expired (ephemeral node gone)")
    n2 = env.leafd("p2", zk_props(zk.address(), name="np"))
    n3 = env.leafd("p3", zk_props(zk.address(), name="np"))
    w2 = worker_of(n2.get_ids("/api/snowflake/get/x")[0])
    w3 = worker_of(n3.get_ids("/api/snowflake/get/x")[0])
    check(len({w1, w2, w3}) == 3, "node paused: nodes started meanwhile get other worker IDs (%d, %d, %d)"
          % (w1, w2, w3))
    time.sleep(max(0.0, PAUSE_S - (time.monotonic() - t0)))
    os.kill(n1.proc.p.pid, signal.SIGCONT)
    t1 = time.monotonic()
    ok = wait_until(lambda: n1.get("/api/snowflake/get/x", timeout=2)[0] == 200, 10, 0.02)
    served = time.monotonic() - t1
    back = wait_until(lambda: eph in (cli_list(zk, "/snowflake/np/leaf_temporary") or []), 20, 0.2)
    registered = time.monotonic() - t1
    log("node paused: served %.3f s after SIGCONT, ephemeral node back after %.1f s" % (served, registered))
    check(ok and served < 1.5, "node paused: serves within a second of SIGCONT (%.3f s)" % served)
    check(back, "node paused: registered again (ephemeral node back)")
    after = n1.get_ids("/api/snowflake/get/x?count=100")
    check(worker_of(after[0]) == w1, "node paused: same worker ID after the pause")
    check(after[0] > ids_before[-1], "node paused: IDs after the pause are above those before")
    check("expired" in n1.log_text().lower(), "node paused: the log says the session expired")


def main():
    env = Env()
    zk = env.zookeeper()
    zk_paused(env, zk)
    node_paused(env, zk)
    env.finish()


if __name__ == "__main__":
    main()
