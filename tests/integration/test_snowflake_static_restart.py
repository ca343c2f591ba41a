"""Static worker mode keeps the time reservation in its local cache, so a
static node never goes back in time across restarts either:

- kill -9, then restart with the wall clock 2 s back: the node waits until it
  is past everything it may have issued, and every new ID is above the old;
- graceful stop, then restart with the clock 10 min back: refused (exit 1),
  naming the stored time; a restart with the right clock serves again."""
import os
import time

from leafdtest import Env, check, log, static_props
from zkhelpers import faketime_env

with Env() as env:
    n = env.leafd("s", static_props(9))
    cache = os.path.join(n.dir, "data", "it", str(n.port), "workerID.properties")
    check(os.path.exists(cache), "the reservation is kept in %s" % cache)
    before = n.get_ids("/api/snowflake/get/r?count=1000")
    text = open(cache).read()
    check("workerID=9" in text and "timestamp=" in text, "cache holds workerID and timestamp: %r" % text)

    n.stop(9)
    t0 = time.time()
    n.start(extra_env=faketime_env(spec="-2"), timeout=40)
    waited = time.time() - t0
    after = n.get_ids("/api/snowflake/get/r?count=1000")
    log("restart after kill -9 with the clock 2 s back took %.1f s" % waited)
    check(after[0] > before[-1], "IDs after a crash and a 2 s step back are above the old ones")
    check("waiting before serving" in n.log_text(), "the node said it waited for its clock")
    last = after[-1]

    check(n.stop() == 0, "graceful stop")
    n.start(wait_ready=False, extra_env=faketime_env(spec="-600"))
    rc = n.wait_exit(30)
    check(rc == 1, "restart with the clock 10 min back refused with exit 1 (got %r)" % rc)
    check("stored time" in n.log_text(), "the refusal names the stored time")

    n.start()
    check(n.get_ids("/api/snowflake/get/r")[0] > last, "with the right clock it serves again, above all")
    env.finish()
