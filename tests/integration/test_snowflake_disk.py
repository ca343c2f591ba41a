"""A data dir that cannot be written (docs/RELIABILITY.md).

The tests run as root, for whom a read-only mode or a full small tmpfs is
not at hand (no mount rights, and root ignores permissions); so the node's
cache directory {data.dir}/{leaf.name}/{port} is replaced by a plain file:
every write of the time reservation then fails (ENOTDIR), as on a
read-only or full disk. Checked:
- the node keeps issuing until its persisted reservation runs out, then
  stops (503), and /ready says "time reservation not persisted";
- the failure is logged once, not once per attempt (every 3 s);
- once the directory is back, the node resumes by itself and says so.
"""
import ctypes
import os
import time

from leafdtest import Env, check, log, static_props, wait_until

RESERVE_MS = 2000
_libc = ctypes.CDLL(None, use_errno=True)


def swap(a, b):
    """Exchanges the paths a and b in one step (renameat2 RENAME_EXCHANGE): the node, which makes
    its cache directory again when it is missing, never sees a moment with neither."""
    if _libc.renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        e = ctypes.get_errno()
        raise OSError(e, "renameat2(%s, %s, RENAME_EXCHANGE): %s" % (a, b, os.strerror(e)))


def main():
    env = Env()
    n = env.leafd("n", static_props(**{"leafd.snowflake.reserve.ms": str(RESERVE_MS)}))
    cache_dir = os.path.join(n.props["leafd.data.dir"], "it", str(n.port))
    check(os.path.exists(os.path.join(cache_dir, "workerID.properties")), "the cache file exists")
    check(n.get("/api/snowflake/get/d")[0] == 200, "serving before")

    away = cache_dir + ".away"
    with open(away, "w") as f:
        f.write("not a directory\n")
    swap(cache_dir, away)  # the file where the directory was; the directory kept at away
    t0 = time.monotonic()
    log("cache directory replaced by a file")
    last_ok = [None]

    def stopped():
        st = n.get("/api/snowflake/get/d")[0]
        if st == 200:
            last_ok[0] = time.monotonic()
        return st == 503
    check(wait_until(stopped, 15, 0.05), "stops issuing once the reservation runs out")
    dt = time.monotonic() - t0
    log("stopped %.2f s after the disk went bad" % dt)
    check(dt <= RESERVE_MS / 1000 + 3.5, "stops within the reservation plus one report (%.2f s)" % dt)
    st, body, _ = n.get("/ready")
    check(st == 503 and "time reservation not persisted" in body, "/ready: 503 %s" % body[:200])
    time.sleep(7)  # two or three more failed attempts
    lines = [l for l in n.log_text().splitlines() if "cannot persist the time reservation" in l]
    log("error lines: %d" % len(lines))
    check(len(lines) == 1, "the failure is logged once, not per attempt (%d lines)" % len(lines))
    check(n.get("/api/snowflake/get/d")[0] == 503, "still stopped while the disk is bad")

    swap(cache_dir, away)
    os.remove(away)
    t1 = time.monotonic()
    ok = wait_until(lambda: n.get("/api/snowflake/get/d")[0] == 200, 10, 0.05)
    log("resumed %.2f s after the disk came back" % (time.monotonic() - t1))
    check(ok, "resumes by itself once the disk is writable")
    check(n.get("/ready")[0] == 200, "/ready 200 again")
    check(wait_until(lambda: "persisted to" in n.log_text() and "again after" in n.log_text(), 5),
          "the log says it persists again")
    check(n.stop() == 0, "graceful stop")
    env.finish()


if __name__ == "__main__":
    main()
