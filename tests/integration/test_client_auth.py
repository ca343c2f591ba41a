"""libleafd-client with credentials and TLS, through the Python binding: a node with users on
(leafd.auth.enable) and a TLS listener with a test CA. The client with ca= and user=/secret=
takes IDs over https; without ca= (the system's CAs) the handshake fails and the node counts
as down (EUNAVAILABLE); a wrong secret is LEAFD_CLIENT_EAUTH, and the client does not retry it
into the node's limit on failed authentications; a user without the right on the key: EAUTH
too (403). Plain http with the right user works as well. docs/man/leafd_client.3, "OPTIONS"."""
import json
import os
import subprocess

from clientbinding import import_leafd

leafd = import_leafd()
from leafdtest import Env, check, free_port, http, log, seg_props  # noqa: E402
from zkhelpers import zk_props  # noqa: E402

TOKEN = "a-root-token-for-the-client-test"


def openssl(d, *args):
    subprocess.run(["openssl"] + list(args), cwd=d, check=True, capture_output=True)


def make_certs(d):
    """A CA and a server certificate for 127.0.0.1."""
    openssl(d, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=leafd client test CA")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    openssl(d, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr",
            "-subj", "/CN=srv")
    openssl(d, "x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "san.ext")


def add_user(node, name, grant):
    st, body, _ = http(node.port, "/api/users", method="POST",
                       body=json.dumps({"name": name, "grants": [grant]}),
                       headers={"Authorization": "Bearer " + TOKEN,
                                "Content-Type": "application/json"})
    check(st == 201, "user %s added: %d %s" % (name, st, body))
    return json.loads(body)["secret"] if st == 201 else ""


def code_of(fn):
    try:
        fn()
        return 0
    except leafd.Error as e:
        return e.code


def main():
    with Env() as env:
        certs = os.path.join(env.dir, "certs")
        os.makedirs(certs)
        make_certs(certs)
        zk = env.zookeeper()
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('sec', 1, 1000)")
        tls_port = free_port()
        node = env.leafd("n", zk_props(zk.address(), name="cl", **seg_props(db, **{
            "leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0",
            "leafd.admin.token": TOKEN, "leafd.tls.listen": "127.0.0.1:%d" % tls_port,
            "leafd.tls.cert.file": os.path.join(certs, "srv.pem"),
            "leafd.tls.key.file": os.path.join(certs, "srv.key")})))
        secret = add_user(node, "app", "segment:*:ids")
        other = add_user(node, "other", "snowflake:*:ids")
        https = "https://127.0.0.1:%d" % tls_port
        ca = os.path.join(certs, "ca.pem")
        # Patient callers (wait.ms, timeout.ms): on a loaded machine a refill may take seconds, and
        # the failures checked here come at once, whatever wait.ms.
        base = "log=0;retry.max.ms=2000;wait.ms=30000;timeout.ms=10000;"

        with leafd.Client(https, options=base + "ca=%s;user=app;secret=%s" % (ca, secret)) as c:
            ids = c.next_many("segment:sec", 3000) + [c.next("segment:sec")]
            check(len(set(ids)) == 3001 and ids == sorted(ids),
                  "https with ca= and a user: 3001 IDs, ascending")
        log("https with the test CA and user app: %d IDs up to %d" % (len(ids), ids[-1]))

        with leafd.Client(https, options=base + "user=app;secret=%s" % secret) as c:
            got = code_of(lambda: c.next("segment:sec"))
            check(got == leafd.EUNAVAILABLE,
                  "without ca= the test CA is not trusted: EUNAVAILABLE (%d)" % got)

        with leafd.Client("http://127.0.0.1:%d" % node.port,
                          options=base + "user=app;secret=wrong-secret") as c:
            codes = [code_of(lambda: c.next("segment:sec")) for _ in range(20)]
            check(set(codes) == {leafd.EAUTH}, "a wrong secret: EAUTH every time (%r)" % codes)
        # Counted by the node's own metric (log lines about failures are rate-limited, and a
        # bare "429" turns up in pids and ports): no address limit reached, so not a 429 either.
        st, body, _ = http(node.port, "/metrics", headers={"Authorization": "Bearer " + TOKEN})
        tried = sum(int(float(ln.rsplit(" ", 1)[1])) for ln in body.splitlines()
                    if ln.startswith("leafd_auth_failures_total{")) if st == 200 else -1
        log("20 calls with a wrong secret: %d failed authentications on the node" % tried)
        check(0 < tried <= 3, "20 calls with a wrong secret made at most a few attempts on the "
              "node: %d failed authentications counted (/metrics %d)" % (tried, st))

        with leafd.Client("http://127.0.0.1:%d" % node.port,
                          options=base + "user=other;secret=%s" % other) as c:
            check(code_of(lambda: c.next("segment:sec")) == leafd.EAUTH,
                  "a user without ids on the key: EAUTH (403)")
            check(code_of(lambda: c.next("snowflake:sec")) == 0, "... and IDs of its own keys")

        with leafd.Client("http://127.0.0.1:%d" % node.port,
                          options=base + "user=app;secret=%s" % secret) as c:
            check(len(c.next_many("segment:sec", 10)) == 10, "plain http with the user: IDs")
    env.finish()


if __name__ == "__main__":
    main()
