"""The audit line's actor (README.md, "Security"): with authentication off a
Basic user name is not checked, so it is never written as the actor (anyone
could claim "alice"); the line names the loopback client or "anonymous"."""
import base64
import re

from leafdtest import Env, check, http, log, static_props, wait_until

with Env() as env:
    node = env.leafd("audit", static_props(11))
    basic = "Basic " + base64.b64encode(b"alice:whatever").decode()
    st, body, _ = http(node.port, "/api/leaf", method="POST", body='{"biz_tag":"t"}',
                       headers={"Authorization": basic, "Host": "127.0.0.1"})
    log("POST /api/leaf with Basic alice, auth off: %d" % st)
    check(wait_until(lambda: "component=audit" in node.log_text(), timeout=5), "an audit line")
    lines = [l for l in node.log_text().splitlines() if "component=audit" in l]
    check(lines and "alice" not in lines[-1], "the unchecked Basic name is not the actor: %s" % lines[-1:])
    check(lines and re.search(r"user=(loopback|anonymous) ", lines[-1]), "the actor is loopback: %s" % lines[-1:])
    env.finish()
