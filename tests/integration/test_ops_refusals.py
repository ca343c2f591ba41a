"""Every refusal's last line names the cause and the fix (docs/OPERATIONS.md, "When a node
refuses to start").

Each case provokes one refusal and checks the exit code and that the last non-empty line of
the output (stdout and stderr together, in order) holds the key or the action that fixes it:
whatever the shutdown logs after the specific error, leafd repeats that error last.

1. Without servers: an unknown argument, no -c, a missing file, a bad value, a short admin
   token, auth without leafd.zk.auth, an unknown LEAFD_* variable, a missing certificate, a key
   that does not match its certificate (run and --check-config), the HTTP and RESP ports in use,
   a data dir another process holds and one that cannot be created, an unknown --zk-acl stage.
2. ZooKeeper unreachable, for a node and for --retire (started before ZooKeeper is, to overlap
   their waits).
3. With ZooKeeper: a cluster closed with credentials, joined without them and with others; a
   shape other than the recorded one; an identity another live node holds (the run-time path:
   "stopped after a failure"); Meituan Leaf's nodes without leafd.snowflake.leaf.compat.
4. With MariaDB: sslMode=REQUIRED against a server without TLS; a wrong password.
"""
import os
import socket
import subprocess
import time

from identityhelpers import leaf_register
from leafdtest import LEAFD_BIN, Env, check, free_port, log, seg_props, wait_until
from zkhelpers import zk_props

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
A = "tenant-a:secret-a-0"


def clean_env():
    e = {k: v for k, v in os.environ.items()
         if not (k.startswith("LEAF_") or k.startswith("LEAFD_")) or k == "LEAFD_BIN"}
    return e


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else ""


def write_conf(d, name, props):
    path = os.path.join(d, name + ".properties")
    with open(path, "w") as f:
        for k, v in props.items():
            f.write("%s = %s\n" % (k, v))
    return path


def spawn(argv, env_extra=None):
    e = clean_env()
    e.update(env_extra or {})
    return subprocess.Popen([LEAFD_BIN] + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=e)


def expect(name, p, want, rc_want=1, timeout=30):
    """p (a Popen) exits rc_want and its last line holds every string of want."""
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    line = last_line(out)
    check(p.returncode == rc_want, "%s: exit %d (got %s; %r)" % (name, rc_want, p.returncode,
                                                                 line[:300]))
    for w in want:
        check(w in line, "%s: the last line names %r: %r" % (name, w, line[:600]))


def node_expect(name, node, want, timeout=40):
    """A harness node (started with wait_ready=False) exits 1, its last line holding want."""
    rc = node.wait_exit(timeout)
    if rc is None:
        node.stop()
    line = last_line(node.log_text())
    check(rc == 1, "%s: exit 1 (got %s; %r)" % (name, rc, line[:300]))
    for w in want:
        check(w in line, "%s: the last line names %r: %r" % (name, w, line[:600]))


def tls_pair(d, name):
    cert, key = os.path.join(d, name + ".pem"), os.path.join(d, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=" + name], check=True,
                   capture_output=True)
    os.chmod(key, 0o600)
    return cert, key


def static(d, name, **extra):
    p = {"leaf.name": "it", "leaf.snowflake.enable": "true", "leafd.snowflake.worker.id": "3",
         "leafd.listen": "127.0.0.1:%d" % free_port(),
         "leafd.data.dir": os.path.join(d, "data-" + name)}
    p.update(extra)
    return write_conf(d, name, p)


def without_servers(d):
    expect("unknown argument", spawn(["--no-such-flag"]), ["--no-such-flag", "--help"])
    expect("no -c", spawn([]), ["-c FILE"])
    missing = os.path.join(d, "nope.properties")
    expect("missing file", spawn(["-c", missing]), [missing, "cannot open"])
    expect("bad value", spawn(["-c", static(d, "bad", **{"leafd.listen": "nonsense"})]),
           ["leafd.listen", "expected IPv4:port"])
    expect("short admin token", spawn(["-c", static(d, "tok", **{"leafd.admin.token": "short"})]),
           ["leafd.admin.token", "openssl rand"])
    auth = write_conf(d, "auth", dict(zk_props("127.0.0.1:1"), **{"leafd.auth.enable": "true"}))
    expect("auth without leafd.zk.auth", spawn(["-c", auth]), ["leafd.auth.enable", "leafd.zk.auth"])
    expect("unknown variable", spawn(["-c", static(d, "env")], {"LEAFD_NO_SUCH_KEY": "1"}),
           ["LEAFD_NO_SUCH_KEY"])
    cert, key = tls_pair(d, "one")
    _, other_key = tls_pair(d, "two")
    tls = {"leafd.tls.listen": "127.0.0.1:%d" % free_port(), "leafd.tls.cert.file": cert,
           "leafd.tls.key.file": key}
    expect("missing certificate", spawn(["-c", static(d, "nocert", **dict(
        tls, **{"leafd.tls.cert.file": os.path.join(d, "none.pem")}))]), ["leafd.tls.cert.file"])
    mismatch = static(d, "mismatch", **dict(tls, **{"leafd.tls.key.file": other_key}))
    expect("key of another certificate", spawn(["-c", mismatch]), ["leafd.tls.key.file"])
    expect("key of another certificate, --check-config", spawn(["--check-config", "-c", mismatch]),
           ["leafd.tls.key.file"])
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        expect("HTTP port in use", spawn(["-c", static(d, "http", **{
            "leafd.listen": "127.0.0.1:%d" % port})]), ["leafd.listen", "Address already in use"])
        expect("RESP port in use", spawn(["-c", static(d, "resp", **{
            "leafd.resp.listen": "127.0.0.1:%d" % port})]),
               ["leafd.resp.listen", "Address already in use"])
    holder = spawn(["-c", static(d, "holder")])
    lock = os.path.join(d, "data-holder", "leafd.lock")
    deadline = time.time() + 20
    while time.time() < deadline and not (os.path.exists(lock) and os.path.getsize(lock) > 0):
        time.sleep(0.05)
    expect("data dir in use", spawn(["-c", static(d, "second", **{
        "leafd.data.dir": os.path.join(d, "data-holder")})]), ["leafd.data.dir", "in use"])
    holder.terminate()
    holder.communicate(timeout=20)
    with open(os.path.join(d, "a-file"), "w") as f:
        f.write("x")
    expect("data dir that cannot be created", spawn(["-c", static(d, "mkdir", **{
        "leafd.data.dir": os.path.join(d, "a-file", "data")})]), ["leafd.data.dir"])
    expect("unknown --zk-acl stage", spawn(["--zk-acl", "shut", "-c", static(d, "acl")]),
           ["status, open or close"], rc_want=2)


def main():
    env = Env()
    d = os.path.join(env.dir, "refusals")
    os.makedirs(d)
    # ZooKeeper unreachable: started first, so their waits overlap the rest.
    down = dict(zk_props("127.0.0.1:1", name="down"), **{
        "leafd.zk.session.timeout.ms": "2000", "leafd.listen": "127.0.0.1:%d" % free_port(),
        "leafd.data.dir": os.path.join(d, "data-down")})
    zk_down = spawn(["-c", write_conf(d, "down", down)])
    retire_down = spawn(["--retire", "stopped", "-c", os.path.join(d, "down.properties")])

    log("1. without servers")
    without_servers(d)

    log("2. ZooKeeper unreachable")
    expect("ZooKeeper unreachable", zk_down, ["leaf.snowflake.zk.address"], timeout=40)
    expect("--retire, ZooKeeper unreachable", retire_down, ["leaf.snowflake.zk.address"],
           timeout=40)

    log("3. ZooKeeper")
    zk = env.zookeeper()
    addr = zk.address()
    a = env.leafd("a", zk_props(addr, name="A", **{"leafd.zk.auth": "digest:" + A}))
    # The identity wait (the session timeout + 2 s) runs while the other cases do.
    twin = env.leafd("twin", zk_props(addr, name="A", **{
        "leafd.zk.auth": "digest:" + A, "leaf.snowflake.port": str(a.port),
        "leafd.zk.session.timeout.ms": "2000"}), wait_ready=False)
    node_expect("closed tree, no credentials",
                env.leafd("nocreds", zk_props(addr, name="A"), wait_ready=False), ["leafd.zk.auth"])
    node_expect("closed tree, other credentials", env.leafd("othercreds", zk_props(addr, name="A", **{
        "leafd.zk.auth": "digest:other:secret-0"}), wait_ready=False), ["leafd.zk.auth"])
    node_expect("another shape", env.leafd("shape", zk_props(addr, name="A", **{
        "leafd.zk.auth": "digest:" + A, "leafd.snowflake.time.unit.ms": "10"}), wait_ready=False),
        ["leafd.snowflake.time.unit.ms", "shape"])
    node_expect("identity held by a live node (at run time)", twin,
                ["stopped after a failure", "leaf.snowflake.port"])
    # Ready again within 5 s: in a loaded full suite (ctest -j3) one probe once found it 503
    # (cause not traced: no log was kept); a node that lost its identity to the twin would not
    # come back.
    first = a.get("/ready")[0]
    check(first == 200 or wait_until(lambda: a.get("/ready")[0] == 200, 5),
          "the node that holds the identity still serves (first /ready %d)" % first)
    leaf_register(zk, "LC", [("127.9.9.1", 8080, int(time.time() * 1000) - 1000)])
    node_expect("Meituan Leaf's nodes, compat off",
                env.leafd("compat", zk_props(addr, name="LC"), wait_ready=False),
                ["leafd.snowflake.leaf.compat"])

    log("4. MariaDB")
    db = env.mariadb()
    p = seg_props(db)
    p["leaf.jdbc.url"] += ("&" if "?" in p["leaf.jdbc.url"] else "?") + "sslMode=REQUIRED"
    node_expect("TLS required, none offered", env.leafd("dbtls", p, wait_ready=False),
                ["sslMode", "leafd.db.tls.ca.file"])
    node_expect("wrong database password", env.leafd("dbpw", seg_props(db, **{
        "leaf.jdbc.password": "wrong-password"}), wait_ready=False), ["leaf.jdbc.password"])
    env.finish()


main()
