"""Out of file descriptors (README.md,
`leafd.http.max.connections`): a node that runs out of
descriptors pauses accepting, logs it at most once a second, and serves again
as soon as descriptors free; it never spins or floods its log.

- With RLIMIT_NOFILE lowered to 200 (soft and hard) under a running node,
  800 clients connect at once and hold their connections for 3 s while more
  keep connecting: the node's
  CPU stays well below a full core, its log grows by a few lines, and once
  the clients leave /health answers within a second. With 1 and 2 loops.
- At start, leafd.http.max.connections above the soft RLIMIT_NOFILE (less a
  margin) is lowered, with a warning that names both.
"""
import os
import resource
import socket
import stat
import time

import leafdtest
from leafdtest import Env, check, http, log, static_props

CLIENTS = 800
HOLD_S = 3.0


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def flood(node, threads):
    pid = node.proc.p.pid
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (200, 200))
    log_before = os.path.getsize(node.proc.logpath)
    cpu_before = cpu_s(pid)
    t0 = time.monotonic()
    socks = []

    def connect(n):
        for _ in range(n):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", node.port))
            except (BlockingIOError, ConnectionRefusedError):
                pass
            socks.append(s)

    connect(CLIENTS)
    # More keep arriving while the node is out of descriptors (each loop's listener sees them).
    while time.monotonic() - t0 < HOLD_S:
        connect(10)
        time.sleep(0.02)
    spent = cpu_s(pid) - cpu_before
    held = time.monotonic() - t0
    grown = os.path.getsize(node.proc.logpath) - log_before
    for s in socks:
        s.close()
    t1 = time.monotonic()
    ok = leafdtest.wait_until(lambda: http(node.port, "/health", timeout=1)[0] == 200, timeout=5,
                              interval=0.05)
    back = time.monotonic() - t1
    log("%d loop(s): CPU %.2f s in %.1f s, log +%d bytes, /health back after %.2f s"
        % (threads, spent, held, grown, back))
    check(spent < 0.5 * held, "%d loop(s): CPU stays bounded (%.2f s in %.1f s)" % (threads, spent, held))
    check(grown < 4096, "%d loop(s): the log grows by a few lines (%d bytes)" % (threads, grown))
    check(ok and back < 1.0, "%d loop(s): /health answers within a second (%.2f s)" % (threads, back))
    check(node.proc.alive(), "%d loop(s): the node is alive" % threads)
    text = node.log_text()
    check("too many open files" in text.lower() or "descriptors" in text,
          "%d loop(s): the log says why it paused" % threads)


soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))

with Env() as env:
    for threads in (1, 2):
        log("RLIMIT_NOFILE 200 under a running node, %d loop(s), %d clients" % (threads, CLIENTS))
        node = env.leafd("emfile%d" % threads, static_props(11, **{"leafd.threads": str(threads)}))
        flood(node, threads)
        node.stop()

    log("at start: leafd.http.max.connections above RLIMIT_NOFILE is lowered")
    wrapper = os.path.join(env.dir, "leafd-nofile")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec prlimit --nofile=300:300 -- %s \"$@\"\n" % leafdtest.LEAFD_BIN)
    os.chmod(wrapper, stat.S_IRWXU)
    real, leafdtest.LEAFD_BIN = leafdtest.LEAFD_BIN, wrapper
    try:
        node = env.leafd("capped", static_props(12))
    finally:
        leafdtest.LEAFD_BIN = real
    text = node.log_text()
    line = [l for l in text.splitlines() if "leafd.http.max.connections" in l]
    check(line and "RLIMIT_NOFILE" in line[0] and "300" in line[0],
          "a warning names the key and the limit: %s" % (line[:1] or text[-600:]))
    node.stop()

    env.finish()
