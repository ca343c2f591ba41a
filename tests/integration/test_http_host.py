"""DNS rebinding (README.md, "Security", DNS
rebinding): a page on
evil.example whose name is made to resolve to the node sends Host and Origin
that agree, so the Origin check alone lets its POST through. A state change is
accepted only when Host names the node: an IP address, localhost, the
machine's host name, or a name in leafd.http.allowed.hosts; otherwise 403
host_not_allowed, before any handler or credential check. GET is unaffected.
"""
import socket

from leafdtest import Env, check, http, log, static_props


def post(port, host, origin=None):
    h = {"Host": host}
    if origin:
        h["Origin"] = origin
    return http(port, "/api/leaf", method="POST", body='{"biz_tag":"t"}', headers=h)


with Env() as env:
    node = env.leafd("host", static_props(11, **{"leafd.http.allowed.hosts": "ids.example, *.nope"}))
    p = node.port

    log("a rebinding page: Host and Origin both evil.example")
    st, body, _ = post(p, "evil.example:%d" % p, "http://evil.example:%d" % p)
    check(st == 403 and '"code":"host_not_allowed"' in body, "refused: %d %s" % (st, body))
    st, body, _ = post(p, "evil.example:%d" % p)
    check(st == 403 and '"code":"host_not_allowed"' in body, "without Origin too: %d %s" % (st, body))
    st, body, _ = post(p, "ids.example.evil.example")
    check(st == 403, "a name that only starts with an allowed one: %d" % st)
    st, _, _ = http(p, "/health", headers={"Host": "evil.example"})
    check(st == 200, "GET is unaffected (%d)" % st)

    log("names of the node pass the Host check (and reach the route)")
    for host in ("127.0.0.1:%d" % p, "localhost:%d" % p, "LOCALHOST.", "[::1]:%d" % p,
                 "ids.example", "IDS.example:%d" % p, socket.gethostname()):
        st, body, _ = post(p, host)
        check('"host_not_allowed"' not in body, "Host %s passes (%d %s)" % (host, st, body[:80]))
    env.finish()
