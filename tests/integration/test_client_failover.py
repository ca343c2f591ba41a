"""libleafd-client through two nodes, one killed with -9 mid-run: 4 threads x 2,000,000
segment IDs with 0 failed calls, 0 IDs repeated, ascending per thread; and snowflake IDs through
the same client: unique.

The client keeps a short buffer here (prefetch.max, batch.max), so it goes to the nodes hundreds
of times during the run and the kill lands between its requests, not after its last one.
The driver is tests/tools/client_load.c; the library is src/client (docs/man/leafd_client.3)."""
import json
import os
import signal
import subprocess

from leafdtest import Env, check, log, seg_props, static_props

LOAD = os.environ["CLIENT_LOAD_BIN"]


def run_load(endpoints, options, key, threads, count, *flags):
    return subprocess.Popen([LOAD, endpoints, options, key, str(threads), str(count)]
                            + list(flags), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def summary(p, timeout=120):
    """The driver's JSON summary, and what the library wrote to stderr (log=1)."""
    out, err = p.communicate(timeout=timeout)
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    for ln in err.splitlines()[:10]:
        log("client: " + ln)
    check(p.returncode == 0 and lines, "client_load ran: rc %s, %s" % (p.returncode, err[-2000:]))
    return (json.loads(lines[-1]) if lines else {}), err


def main():
    with Env() as env:
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('client', 1, 20000)")
        nodes = [env.leafd("a", static_props(1, **seg_props(db))),
                 env.leafd("b", static_props(2, **seg_props(db)))]
        endpoints = ",".join("http://127.0.0.1:%d" % n.port for n in nodes)
        # Patient callers (wait.ms, timeout.ms): on a loaded machine a refill may take seconds, and
        # what is checked here is that no call fails while a node serves.
        options = ("prefetch.min=5000;prefetch.max=200000;batch.max=20000;retry.min.ms=50;"
                   "wait.ms=30000;timeout.ms=10000")
        p = run_load(endpoints, options, "segment:client", 4, 2000000, "--progress",
                     "--pace", "20000", "2000")
        killed_at = None
        for line in p.stdout:
            if line.startswith("progress") and killed_at is None:
                done = int(line.split()[1])
                if done >= 2400000:
                    nodes[0].stop(signal.SIGKILL)
                    killed_at = done
                    log("node a killed with -9 after %d IDs" % done)
                    break
        s, err = summary(p)
        log("4 x 2,000,000 segment IDs: %r" % s)
        check("skipping 127.0.0.1:%d" % nodes[0].port in err,
              "the client saw node a fail and went on with node b")
        check(killed_at is not None and killed_at < 8000000, "the kill came mid-run")
        check(s.get("ids") == 8000000, "8,000,000 IDs taken: %r" % s.get("ids"))
        check(s.get("failed") == 0, "0 failed calls: %r" % s.get("failed"))
        check(s.get("dups") == 0, "0 IDs repeated: %r" % s.get("dups"))
        check(s.get("disorder") == 0, "ascending per thread: %r" % s.get("disorder"))
        # The snowflake mode through the surviving node: unique.
        p = run_load(endpoints, "log=0;wait.ms=30000;timeout.ms=10000", "snowflake:client", 4,
                     50000, "--batch", "100")
        s, _ = summary(p)
        log("4 x 50,000 snowflake IDs: %r" % s)
        check(s.get("ids") == 200000 and s.get("failed") == 0 and s.get("dups") == 0,
              "snowflake IDs through the client: all taken, none repeated")
    env.finish()


if __name__ == "__main__":
    main()
