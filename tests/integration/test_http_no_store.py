"""Caches keep no IDs and no pages (README.md, "Security"): every answer that
carries IDs and every page says Cache-Control: no-store (a cache in between
that served one ID twice would hand out a duplicate)."""
from leafdtest import Env, check, http, log, static_props

with Env() as env:
    node = env.leafd("nostore", static_props(11))
    p = node.port
    for path in ("/api/snowflake/get/a", "/api/snowflake/get/a?count=3",
                 "/api/snowflake/get/a?count=5000", "/"):
        st, _, hdr = http(p, path)
        check(st == 200 and hdr.get("Cache-Control") == "no-store",
              "%s: Cache-Control: no-store (%d %r)" % (path, st, hdr.get("Cache-Control")))
    env.finish()
