"""TLS for clients, secrets from files and the failed-authentication limit
(docs/SECURITY.md), against the real leafd binary with real clients:

- HTTPS beside plain HTTP: curl --cacert, Python's ssl (TLS 1.2 and 1.3;
  older versions refused); RESP over TLS beside plain RESP: redis-cli --tls
  --cacert, redis-py (ssl=True), ioredis (tls) when node/npm are there.
- A plain-text client or a garbage handshake on a TLS port costs only its own
  connection: an open TLS connection on the same port keeps answering.
- SIGHUP reloads the certificate without dropping an open connection; a
  reload with a broken file keeps the old pair and logs why.
- Client certificates (leafd.tls.client.auth = required).
- leafd.admin.token.file (a file readable by others gets a warn line); an
  admin token under 16 characters stops start-up naming the key.
- 10 failed authentications from one address within 10 s: 429 over HTTP and
  "-ERR too many failed authentications" over RESP, unchecked.

Certificates are made in the test's temp dir with `openssl req`.
"""
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time

from leafdtest import (Env, RespStream, check, free_port, log, raw, resp_command, static_props,
                       wait_until)
from zkhelpers import zk_props

TOKEN = "an-admin-token-of-some-length"


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


def make_certs(d):
    """A CA, two server certificates (127.0.0.1/localhost) and a client certificate."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=leafd test CA", cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name in ("srv1", "srv2", "client"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out",
                name + ".csr", "-subj", "/CN=" + name, cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", name + ".pem", "-days", "2", "-extfile", "san.ext",
                cwd=d)
    return {n: os.path.join(d, n) for n in os.listdir(d)}


def tls_ctx(ca, version=None, cert=None):
    c = ssl.create_default_context(cafile=ca)
    if version:
        c.minimum_version = c.maximum_version = version
    if cert:
        c.load_cert_chain(cert + ".pem", cert + ".key")
    return c


def tls_conn(port, ca, **kw):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return tls_ctx(ca, **kw).wrap_socket(s, server_hostname="127.0.0.1")


def http_over(s, path, headers=""):
    """One GET on an open (TLS) socket; returns (status, body)."""
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path, headers)).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return None, b""
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    n = int([h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0])
    while len(body) < n:
        body += s.recv(65536)
    return int(head.split(b" ")[1]), body[:n]


def peer_cn(port, ca):
    s = tls_conn(port, ca)
    try:
        return dict(x[0] for x in s.getpeercert()["subject"])["commonName"]
    finally:
        s.close()


with Env() as env:
    certs_dir = os.path.join(env.dir, "certs")
    os.makedirs(certs_dir)
    c = make_certs(certs_dir)
    ca = c["ca.pem"]
    live_cert, live_key = os.path.join(certs_dir, "live.pem"), os.path.join(certs_dir, "live.key")
    shutil.copy(c["srv1.pem"], live_cert)
    shutil.copy(c["srv1.key"], live_key)
    token_file = os.path.join(env.dir, "admin.token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o644)  # readable by others: a warn line

    tls_port, rtls_port = free_port(), free_port()
    node = env.leafd("n", static_props(**{
        "leafd.tls.listen": "127.0.0.1:%d" % tls_port,
        "leafd.resp.tls.listen": "127.0.0.1:%d" % rtls_port,
        "leafd.tls.cert.file": live_cert, "leafd.tls.key.file": live_key,
        "leafd.admin.token.file": token_file}), resp=True)

    log("HTTPS beside HTTP")
    r = subprocess.run(["curl", "-sS", "--cacert", ca, "https://127.0.0.1:%d/api/snowflake/get/t" % tls_port],
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 0 and r.stdout.strip().isdigit(), "curl --cacert over HTTPS: an ID (%r %r)" % (r.stdout, r.stderr))
    r = subprocess.run(["curl", "-sS", "--cacert", ca, "https://localhost:%d/health" % tls_port],
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 0 and "ok" in r.stdout, "curl by the name localhost: /health")
    check(node.get("/api/snowflake/get/t")[0] == 200, "plain HTTP still answers")
    for v in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        s = tls_conn(tls_port, ca, version=v)
        st, body = http_over(s, "/api/snowflake/get/t?count=3")
        check(st == 200 and len(body.split(b"\n")) == 3, "%s: 3 IDs" % v.name)
        check(s.version() == v.name.replace("v1_", "v1."), "negotiated %s (%s)" % (v.name, s.version()))
        s.close()
    try:
        s = tls_conn(tls_port, ca, version=ssl.TLSVersion.TLSv1_1)
        s.close()
        check(False, "TLS 1.1 refused")
    except (ssl.SSLError, OSError):
        check(True, "TLS 1.1 refused")

    log("a plain-text client or a bad handshake costs only its own connection")
    keep = tls_conn(tls_port, ca)
    check(http_over(keep, "/health")[0] == 200, "a keep-alive TLS connection answers")
    out = raw(tls_port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
    check(b"200 OK" not in out, "plain HTTP on the TLS port: no answer, closed (%r)" % out[:40])
    out = raw(tls_port, b"\x16\x03\x01\x00\x05garbagegarbage" * 10, timeout=5)
    check(b"200" not in out, "a garbage handshake: closed")
    out = raw(rtls_port, resp_command("PING"), timeout=5)
    check(b"PONG" not in out, "plain RESP on the RESP TLS port: closed")
    check(http_over(keep, "/health")[0] == 200, "the open TLS connection still answers")
    check(node.proc.alive(), "leafd is alive")

    log("RESP over TLS beside plain RESP")
    r = subprocess.run(["redis-cli", "--tls", "--cacert", ca, "-h", "127.0.0.1", "-p", str(rtls_port),
                        "INCR", "snowflake:t"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 0 and r.stdout.strip().isdigit(), "redis-cli --tls --cacert INCR (%r %r)" % (r.stdout, r.stderr))
    rs = RespStream(node.resp_port)
    check(rs.call("PING") == "PONG", "plain RESP still answers")
    rs.close()
    try:
        import redis
        rc = redis.Redis(host="127.0.0.1", port=rtls_port, ssl=True, ssl_ca_certs=ca)
        v = rc.execute_command("INCR", "snowflake:t")
        ids = rc.execute_command("LEAF.IDS", "snowflake:t", 5)
        check(isinstance(v, int) and v > 0 and len(ids) == 5, "redis-py ssl=True: INCR and LEAF.IDS")
        rc.close()
    except ImportError:
        log("SKIP redis-py: not installed for this python")
    node_dir = os.environ.get("LEAFD_NODE_DIR", "")
    mods = os.path.join(node_dir, "node_modules")
    if node_dir and shutil.which("node") and shutil.which("npm") and not os.path.exists(os.path.join(mods, "ioredis")):
        subprocess.run(["npm", "install", "--prefix", node_dir, "--no-audit", "--no-fund",
                        "--fetch-retries=1", "ioredis@5"], capture_output=True, timeout=90)
    if node_dir and os.path.exists(os.path.join(mods, "ioredis", "package.json")):
        script = os.path.join(env.dir, "io_tls.js")
        with open(script, "w") as f:
            f.write("""
const fs = require("fs"); const Redis = require("ioredis");
const r = new Redis({host: "127.0.0.1", port: +process.argv[2], tls: {ca: fs.readFileSync(process.argv[3]), servername: "localhost"}, lazyConnect: true});
(async () => { await r.connect(); const v = await r.incr("snowflake:t"); if (!(v > 0)) throw new Error("bad " + v);
  console.log("ok " + v); r.disconnect(); })().catch(e => { console.error(e); process.exit(1); });
""")
        io = subprocess.run(["node", script, str(rtls_port), ca], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, NODE_PATH=mods))
        check(io.returncode == 0 and io.stdout.startswith("ok"), "ioredis tls: INCR (%s)" % io.stderr[-300:])
    else:
        log("SKIP ioredis: node, npm or the ioredis package is not there")

    log("SIGHUP reloads the certificate; open connections stay")
    check(peer_cn(tls_port, ca) == "srv1", "serving srv1")
    shutil.copy(c["srv2.pem"], live_cert)
    shutil.copy(c["srv2.key"], live_key)
    node.proc.p.send_signal(signal.SIGHUP)
    check(wait_until(lambda: peer_cn(tls_port, ca) == "srv2", 5), "after SIGHUP: new connections get srv2")
    check(http_over(keep, "/health")[0] == 200, "the connection opened before the reload still answers")
    with open(live_cert, "w") as f:
        f.write("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n")
    node.proc.p.send_signal(signal.SIGHUP)
    check(wait_until(lambda: "TLS reload failed" in node.log_text(), 5), "a broken reload is logged")
    check(peer_cn(tls_port, ca) == "srv2", "and the previous pair is still served")
    check(http_over(keep, "/health")[0] == 200, "the open connection still answers")
    check(node.proc.alive(), "leafd survived both reloads")

    log("secrets from files; the failed-authentication limit (no users: the admin token)")
    check("admin.token.file" in node.log_text() and "readable by group or others" in node.log_text(),
          "a warn line for the token file readable by others")
    bearer = lambda t: {"Authorization": "Bearer " + t}
    check(node.get("/db", headers=bearer(TOKEN))[0] != 403, "the token from the file is the admin token")
    # Each over HTTPS (the limit is per client address, whatever the listener).
    codes = []
    for _ in range(10):
        s = tls_conn(tls_port, ca)
        codes.append(http_over(s, "/db", "Authorization: Bearer wrong-token-wrong-token\r\n")[0])
        s.close()
    check(codes == [403] * 10, "10 wrong tokens: 403 each (%r)" % codes)
    st, body, hdr = node.get("/db", headers=bearer(TOKEN))
    check(st == 429 and "too_many_failed_authentications" in body, "the 11th, even right: 429 unchecked (%d)" % st)
    check(hdr.get("Retry-After") == "10", "429 says Retry-After: 10")
    check(node.get("/api/snowflake/get/t")[0] == 200, "requests without credentials still answer")

    log("client certificates (leafd.tls.client.auth = required)")
    mtls_port = free_port()
    mnode = env.leafd("m", static_props(worker=2, **{
        "leafd.tls.listen": "127.0.0.1:%d" % mtls_port,
        "leafd.tls.cert.file": c["srv1.pem"], "leafd.tls.key.file": c["srv1.key"],
        "leafd.tls.ca.file": ca, "leafd.tls.client.auth": "required"}))
    try:
        s = tls_conn(mtls_port, ca)
        st, _ = http_over(s, "/health")
        check(st is None, "no client certificate: no answer")
    except (ssl.SSLError, OSError):
        check(True, "no client certificate: handshake refused")
    s = tls_conn(mtls_port, ca, cert=os.path.join(certs_dir, "client"))
    check(http_over(s, "/health")[0] == 200, "with a client certificate: 200")
    s.close()
    mnode.stop()

    log("an admin token under 16 characters stops start-up")
    bad = env.leafd("short", static_props(worker=3, **{"leafd.admin.token": "too-short"}),
                    wait_ready=False)
    check(bad.wait_exit(10) == 1, "exit code 1")
    check("leafd.admin.token: too short" in bad.log_text() and "too-short" not in bad.log_text(),
          "the message names the key, not the token")

    log("failed authentications with users (HTTP 429, RESP -ERR), ZooKeeper")
    zk = env.zookeeper()
    au = env.leafd("au", zk_props(zk.address(), name="tlsau", **{
        "leafd.auth.enable": "true", "leafd.zk.auth": "digest:leafd:zk-secret-0", "leafd.admin.token": TOKEN}), resp=True)
    # AUTH <secret> <user>, swapped: the secret is not logged as an unknown user's name
    # (from another loopback address, so that the block below stays the only one).
    sw = socket.socket()
    sw.bind(("127.0.0.7", 0))
    sw.connect(("127.0.0.1", au.resp_port))
    sw.sendall(resp_command("AUTH", "Swapped-Secret-0042", "default"))
    got = sw.recv(200)
    sw.close()
    check(got.startswith(b"-WRONGPASS"), "swapped AUTH refused (%r)" % got)
    check(wait_until(lambda: "authentication failed (unknown_user)" in au.log_text(), 5),
          "the failure is logged")
    check("Swapped-Secret-0042" not in au.log_text(), "the secret typed as a user name is not logged")
    basic = {"Authorization": "Basic d3Jvbmc6d3Jvbmc="}  # wrong:wrong
    codes = [au.get("/api/snowflake/get/t", headers=basic)[0] for _ in range(10)]
    check(codes == [401] * 10, "10 wrong passwords: 401 each (%r)" % codes)
    st, body, _ = au.get("/api/snowflake/get/t", headers=bearer(TOKEN))
    check(st == 429, "then 429 unchecked, even for the right token (%d)" % st)
    st, body, _ = au.get("/metrics", headers=bearer(TOKEN))
    check(st == 429, "/metrics with the right token: 429 unchecked too (%d)" % st)
    st, body, _ = au.get("/metrics", headers=basic)
    check(st == 429, "/metrics with a wrong password: 429 unchecked (%d)" % st)
    st, body, _ = au.get("/metrics")
    check(st == 200, "/metrics without credentials stays open (%d)" % st)
    rs = RespStream(au.resp_port)
    reply = rs.call("AUTH", "wrong", "wrong")
    check(reply == "ERR too many failed authentications", "RESP AUTH: -ERR too many failed authentications (%r)" % reply)
    rs.close()
    # (The block's end after 10 s is unit-tested: test_security.c, test_auth_limit.)

    env.finish()
