"""TLS hardening (README.md, "TLS and secrets"):

- TLS 1.2 offers forward-secret AEAD suites only: a client that offers only
  AES128-SHA, AES256-SHA or AES128-SHA256 (RSA key exchange, CBC) is refused;
  ECDHE-RSA-AES128-GCM-SHA256 and ECDHE-RSA-CHACHA20-POLY1305 are served;
  TLS 1.3 is unchanged.
- A TLS key file that others may read is warned about at start, naming the
  key and the fix.
"""
import os
import ssl
import socket
import subprocess

from leafdtest import Env, check, free_port, log, static_props


def handshake(port, ca, ciphers=None, tls13=False):
    c = ssl.create_default_context(cafile=ca)
    if tls13:
        c.minimum_version = ssl.TLSVersion.TLSv1_3
    else:
        c.minimum_version = c.maximum_version = ssl.TLSVersion.TLSv1_2
        c.set_ciphers(ciphers + ":@SECLEVEL=0")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            with c.wrap_socket(s, server_hostname="localhost") as t:
                return t.cipher()[0]
    except (ssl.SSLError, OSError):
        return None


with Env() as env:
    d = os.path.join(env.dir, "certs")
    os.makedirs(d)
    run = lambda *a: subprocess.run(["openssl"] + list(a), cwd=d, check=True, capture_output=True)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=ca")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=srv")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "srv.pem", "-days", "2", "-extfile", "san.ext")
    key = os.path.join(d, "srv.key")
    os.chmod(key, 0o644)
    tport = free_port()
    node = env.leafd("tls", static_props(11, **{
        "leafd.tls.listen": "127.0.0.1:%d" % tport, "leafd.tls.cert.file": os.path.join(d, "srv.pem"),
        "leafd.tls.key.file": key}))
    ca = os.path.join(d, "ca.pem")

    log("TLS 1.2: forward-secret AEAD suites only")
    for weak in ("AES128-SHA", "AES256-SHA", "AES128-SHA256", "ECDHE-RSA-AES128-SHA"):
        got = handshake(tport, ca, weak)
        check(got is None, "%s refused (%s)" % (weak, got))
    for good in ("ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384",
                 "ECDHE-RSA-CHACHA20-POLY1305"):
        got = handshake(tport, ca, good)
        check(got == good, "%s served (%s)" % (good, got))
    check(handshake(tport, ca, tls13=True) is not None, "TLS 1.3 unchanged")

    log("a key file others may read is warned about")
    text = node.log_text()
    lines = [l for l in text.splitlines() if "leafd.tls.key.file" in l and "readable" in l]
    check(lines and "chmod" in lines[0], "the warning names the key and the fix: %s" % lines[:1])
    node.stop()
    os.chmod(key, 0o600)
    node = env.leafd("tls600", static_props(12, **{
        "leafd.tls.listen": "127.0.0.1:%d" % free_port(), "leafd.tls.cert.file": os.path.join(d, "srv.pem"),
        "leafd.tls.key.file": key}))
    check("leafd.tls.key.file" not in "".join(l for l in node.log_text().splitlines() if "readable" in l),
          "a 0600 key: no warning")
    node.stop()
    env.finish()
