"""libleafd-client with every node stopped (killed with -9): it serves what it holds, then answers
LEAFD_CLIENT_EUNAVAILABLE (-2, docs/man/leafd_client.3); with the nodes back it recovers by
itself, the same handle, no call from the program but its next.

The driver (tests/tools/client_load.c --outage) takes IDs in one thread and says when the first
error came and how many IDs were served after the test said the nodes had stopped."""
import json
import os
import signal
import subprocess
import time

from leafdtest import Env, check, log, seg_props

LOAD = os.environ["CLIENT_LOAD_BIN"]


def main():
    with Env() as env:
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('outage', 1, 20000)")
        nodes = [env.leafd("a", seg_props(db)), env.leafd("b", seg_props(db))]
        endpoints = ",".join("http://127.0.0.1:%d" % n.port for n in nodes)
        options = ("prefetch.min=20000;prefetch.max=20000;retry.min.ms=50;retry.max.ms=200;"
                   "wait.ms=500")
        p = subprocess.Popen([LOAD, endpoints, options, "segment:outage", "1", "0", "--outage"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        # Killed (-9), not drained: the flag follows at once, so what the client serves after
        # it is its buffer, not a node's last answers.
        for n in nodes:
            n.stop(signal.SIGKILL)
        p.stdin.write("stopped\n")
        p.stdin.flush()
        t_stop = time.time()
        line = p.stdout.readline().split()
        log("every node stopped: %r after %.2f s" % (line, time.time() - t_stop))
        check(line[:1] == ["error"] and line[1] == "-2",
              "the documented error, LEAFD_CLIENT_EUNAVAILABLE (-2): %r" % line)
        check(len(line) == 4 and int(line[3]) > 0, "the buffer was served first: %r" % line)
        time.sleep(1.0)
        for n in nodes:
            n.start()
        t_back = time.time()
        p.stdin.write("started\n")
        p.stdin.flush()
        line = p.stdout.readline().split()
        log("nodes back: %r, %.2f s after they were ready" % (line, time.time() - t_back))
        check(line[:1] == ["recovered"], "the client recovered by itself: %r" % line)
        # The rest through the same reader: communicate() reads the pipe itself and misses what
        # readline() already buffered, which held the summary whenever it came in one read with
        # "recovered" (under TSan, once in a few runs). read() ends when client_load exits.
        out = p.stdout.read()
        _, err = p.communicate(timeout=60)
        lines = out.splitlines()
        # Its summary is the last line; without one, say how it ended.
        check(lines != [], "client_load printed its summary (exit %s; stderr: %s)" %
              (p.returncode, " | ".join(err.splitlines()[-5:])))
        s = json.loads(lines[-1]) if lines else {}
        check(p.returncode == 0 and s.get("disorder") == 0, "ascending throughout: %r" % s)
        for ln in err.splitlines()[:6]:
            log("client: " + ln)
    env.finish()


if __name__ == "__main__":
    main()
