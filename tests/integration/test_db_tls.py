"""Database TLS (docs/SECURITY.md): leaf.jdbc.url's sslMode (and the older
useSSL / requireSSL) with the CA from leafd.db.tls.ca.file, against real
MariaDB servers, one with TLS (ssl_cert/ssl_key) and one without.

- VERIFY_IDENTITY with the right CA: the node serves segment IDs over an
  encrypted connection (the log names the cipher; the server's
  Ssl_cipher status for leafd's session is set). The password comes from
  leaf.jdbc.password.file.
- useSSL=true&requireSSL=true: encrypted too.
- A required TLS connection that cannot be made stops start-up naming the
  keys, and never falls back to plain text: REQUIRED against the server
  without TLS (it never even sees a login: no failed or plain session),
  VERIFY_CA with a CA that did not sign the server's certificate,
  VERIFY_IDENTITY with a certificate for another host name.
"""
import os
import subprocess

from leafdtest import Env, check, log, seg_props


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


def make_certs(d):
    for ca in ("ca", "other"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca + ".key", "-out",
                ca + ".pem", "-days", "2", "-subj", "/CN=%s CA" % ca, cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    with open(os.path.join(d, "wrong.ext"), "w") as f:
        f.write("subjectAltName=DNS:db.example.com\n")
    for name, ext in (("db", "san.ext"), ("wrong", "wrong.ext")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out",
                name + ".csr", "-subj", "/CN=" + name, cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", name + ".pem", "-days", "2", "-extfile", ext, cwd=d)


with Env() as env:
    d = os.path.join(env.dir, "certs")
    os.makedirs(d)
    make_certs(d)
    ca, other = os.path.join(d, "ca.pem"), os.path.join(d, "other.pem")
    db = env.mariadb(name="tlsdb", args=["--ssl-cert=" + os.path.join(d, "db.pem"),
                                         "--ssl-key=" + os.path.join(d, "db.key")])
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('t', 1, 100)")
    base = "jdbc:mysql://127.0.0.1:%d/leaf?useUnicode=true" % db.port
    pwfile = os.path.join(env.dir, "db.password")
    with open(pwfile, "w") as f:
        f.write("leafpw\n")
    os.chmod(pwfile, 0o600)

    def props(url, **extra):
        p = seg_props(db, **{"leaf.jdbc.url": url})
        p.update(extra)
        return p

    log("VERIFY_IDENTITY with the CA, the password from a file")
    p = props(base + "&sslMode=VERIFY_IDENTITY", **{"leafd.db.tls.ca.file": ca,
                                                     "leaf.jdbc.password.file": pwfile})
    del p["leaf.jdbc.password"]
    n = env.leafd("vi", p)
    check(n.get_ids("/api/segment/get/t?count=3")[0] > 0, "segment IDs over TLS")
    check("(TLS TLS_" in n.log_text(), "the log names the cipher")
    check("readable by group or others" not in n.log_text(), "a 0600 password file: no warning")
    rows = db.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'leaf'", db="")
    ssl_rows = db.sql("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                      "WHERE VARIABLE_NAME = 'Ssl_accepts'", db="")
    check(int(rows.strip()) >= 1 and int(ssl_rows.strip()) >= 1,
          "the server accepted TLS sessions (%s) for leafd's connections (%s)" % (ssl_rows.strip(), rows.strip()))
    n.stop()

    log("useSSL=true&requireSSL=true (Connector/J's older parameters)")
    n = env.leafd("legacy", props(base + "&useSSL=true&requireSSL=true"))
    check(n.get_ids("/api/segment/get/t")[0] > 0 and "(TLS TLS_" in n.log_text(), "encrypted")
    n.stop()

    def refused(name, url, key_hint, **extra):
        node = env.leafd(name, props(url, **extra), wait_ready=False)
        rc = node.wait_exit(20)
        text = node.log_text()
        check(rc == 1, "%s: exit 1 (%r)" % (name, rc))
        check(key_hint in text, "%s: names %s\n%s" % (name, key_hint, text[-600:]))
        check("leafpw" not in text, "%s: no password in the log" % name)
        return text

    log("required TLS that cannot be made stops start-up")
    refused("wrongca", base + "&sslMode=VERIFY_CA", "sslMode and leafd.db.tls.ca.file",
            **{"leafd.db.tls.ca.file": other})
    bad = env.mariadb(name="wronghost", args=["--ssl-cert=" + os.path.join(d, "wrong.pem"),
                                              "--ssl-key=" + os.path.join(d, "wrong.key")])
    wurl = "jdbc:mysql://127.0.0.1:%d/leaf?sslMode=VERIFY_IDENTITY" % bad.port
    refused("wronghost", wurl, "sslMode and leafd.db.tls.ca.file", **{"leafd.db.tls.ca.file": ca})
    # The same certificate passes VERIFY_CA: the chain is right, only the name is not checked.
    n = env.leafd("wronghost-ca", props("jdbc:mysql://127.0.0.1:%d/leaf?sslMode=VERIFY_CA" % bad.port,
                                        **{"leafd.db.tls.ca.file": ca}))
    check(n.get("/ready")[0] == 200, "VERIFY_CA accepts a right chain whatever the name")
    n.stop()

    log("REQUIRED against a server without TLS: no plain-text fallback, no login sent")
    plain = env.mariadb(name="plaindb")
    before = plain.sql("SHOW GLOBAL STATUS LIKE 'Connections'", db="").split()[1]
    aborted = plain.sql("SHOW GLOBAL STATUS LIKE 'Aborted_connects'", db="").split()[1]
    text = refused("plain", "jdbc:mysql://127.0.0.1:%d/leaf?sslMode=REQUIRED" % plain.port,
                   "the server offers no TLS")
    after = plain.sql("SHOW GLOBAL STATUS LIKE 'Connections'", db="").split()[1]
    aborted2 = plain.sql("SHOW GLOBAL STATUS LIKE 'Aborted_connects'", db="").split()[1]
    # Our own two SHOW statements are two connections; leafd's one connection ends at the
    # greeting, before any login (an aborted connect), and there is no other.
    check(int(after) - int(before) <= 3, "no session from leafd beyond its refused connect (%s -> %s)" % (before, after))
    check(int(aborted2) - int(aborted) <= 1, "at most one aborted connect")

    env.finish()
