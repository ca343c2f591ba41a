"""Integration-test harness: real servers on loopback in temp dirs.

Every integration test is a plain Python script (stdlib only) run by ctest.
It starts what it needs with the helpers below, which bind 127.0.0.1 on free
ports inside a `mktemp -d`-style directory and stop everything at exit:

    with Env() as env:
        zk = env.zookeeper()
        db = env.mariadb()
        node = env.leafd(snowflake=True, zk=zk)
        ids = node.get_ids("/api/snowflake/get/t?count=10")

Checks use check(cond, msg); the script ends with env.finish(), which prints
"N passed, N failed" and exits non-zero on any failure.
"""
import atexit
import http.client as httpclient
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

LEAFD_BIN = os.environ.get("LEAFD_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "leafd")
ZK_JAR_DIR = "/usr/share/java"

_checks = {"passed": 0, "failed": 0, "first": None}


def check(cond, msg):
    """Records one check; prints failures with their message."""
    if cond:
        _checks["passed"] += 1
    else:
        _checks["failed"] += 1
        _checks["first"] = _checks["first"] or msg
        print("FAIL: " + msg, flush=True)
    return cond


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


_ports_given = set()
_PORT_DIR = os.path.join(tempfile.gettempdir(), "leafd-test-ports")
_port_locks = {}  # port -> (path, fd): held until this test process exits


def reserve_port(p):
    """True when no other test process holds port p: each port given out is a locked file in
    _PORT_DIR for the life of the test process that got it. Tests run in parallel, and the kernel
    may hand a port one test picked (bound to 0, then closed) to another test before the first
    test's server listens on it; two servers of one user would then share it (SO_REUSEPORT)."""
    import fcntl
    os.makedirs(_PORT_DIR, exist_ok=True)
    path = os.path.join(_PORT_DIR, str(p))
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # A holder that exited may have unlinked the file after we opened it: the lock must be
        # on the file the path names now.
        if os.fstat(fd).st_ino != os.stat(path).st_ino:
            raise OSError("the port's file was replaced")
    except OSError:
        os.close(fd)
        return False
    _port_locks[p] = (path, fd)
    return True


@atexit.register
def _release_ports():
    for path, fd in _port_locks.values():
        try:
            os.unlink(path)  # while still locked: a waiter sees the inode change and retries
        except OSError:
            pass
        os.close(fd)


def free_port():
    """A free loopback port, never the same one twice in one test process, nor one another
    test process running now was given (reserve_port)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            p = s.getsockname()[1]
        if p not in _ports_given and reserve_port(p):
            _ports_given.add(p)
            return p


def wait_until(fn, timeout=10.0, interval=0.05):
    """Polls fn() until it returns a truthy value; returns it, or None on timeout."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = fn()
            if v:
                return v
        except Exception:
            pass
        time.sleep(interval)
    return None


def http(port, path, method="GET", body=None, headers=None, timeout=10, host="127.0.0.1"):
    """One request on a fresh connection; returns (status, body text, headers).
    A state change (POST, PUT, DELETE) says its body is JSON unless the caller
    gives a Content-Type (leafd answers 415 otherwise, docs/SECURITY.md)."""
    conn = httpclient.HTTPConnection(host, port, timeout=timeout)
    headers = dict(headers or {})
    if method in ("POST", "PUT", "DELETE") and not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.read().decode("utf-8", "replace"), dict(r.getheaders())
    finally:
        conn.close()


def raw(port, data, timeout=5, read_until_close=True):
    """Sends raw bytes and returns everything the server sends back until it closes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
            if not read_until_close:
                break
        return out
    finally:
        s.close()


class Proc:
    """A child process with its log file."""

    def __init__(self, argv, logpath, env=None, cwd=None):
        self.argv = argv
        self.logpath = logpath
        self.logf = open(logpath, "ab")
        self.p = subprocess.Popen(argv, stdout=self.logf, stderr=subprocess.STDOUT,
                                  env=env, cwd=cwd, start_new_session=True)

    def alive(self):
        return self.p.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.p.poll() is None:
            try:
                self.p.send_signal(sig)
                self.p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.logf.close()
        return self.p.returncode

    def kill9(self):
        return self.stop(signal.SIGKILL)

    def pause(self, timeout=5.0):
        """SIGSTOP, then wait until every thread is stopped (state T in /proc): kill() returns
        before a busy multi-threaded server has stopped, and a request sent at once could still
        be answered. True when all stopped within timeout."""
        self.p.send_signal(signal.SIGSTOP)
        deadline = time.monotonic() + timeout
        task = "/proc/%d/task" % self.p.pid
        while time.monotonic() < deadline:
            states = []
            for tid in os.listdir(task):
                try:
                    with open("%s/%s/stat" % (task, tid)) as f:
                        states.append(f.read().rsplit(")", 1)[1].split()[0])
                except OSError:
                    pass  # a thread that ended meanwhile
            if states and all(st in ("T", "t") for st in states):
                return True
            time.sleep(0.005)
        return False

    def log_text(self):
        with open(self.logpath, "rb") as f:
            return f.read().decode("utf-8", "replace")


class ZooKeeper:
    """A standalone ZooKeeper server (or one member of an ensemble)."""

    def __init__(self, env, name="zk", ensemble=None, myid=None, wait=True, tick_ms=500):
        self.env = env
        self.dir = os.path.join(env.dir, name)
        os.makedirs(os.path.join(self.dir, "data"), exist_ok=True)
        self.port = free_port()
        self.name = name
        # tickTime: the server's clock for sessions (minSessionTimeout is 2 ticks, and a session
        # expires at the first tick after its timeout); 500 ms unless a test asks otherwise.
        lines = ["tickTime=%d" % tick_ms, "initLimit=10", "syncLimit=5",
                 "dataDir=%s/data" % self.dir, "clientPort=%d" % self.port,
                 "clientPortAddress=127.0.0.1", "admin.enableServer=false",
                 "4lw.commands.whitelist=*", "maxSessionTimeout=120000",
                 # A test server need not fsync its transaction log: a kill -9 of the JVM
                 # loses nothing the page cache holds. With fsync, a new session (a
                 # transaction) could wait seconds on a disk busy with the other tests'
                 # servers, longer than a starting node waits for ZooKeeper.
                 "forceSync=no"]
        if ensemble:
            for i, (pp, ep) in enumerate(ensemble, 1):
                lines.append("server.%d=127.0.0.1:%d:%d" % (i, pp, ep))
            with open(os.path.join(self.dir, "data", "myid"), "w") as f:
                f.write(str(myid))
        # A member of an ensemble must run QuorumPeerMain: ZooKeeperServerMain
        # ignores the server.N lines and would run standalone.
        self.main_class = ("org.apache.zookeeper.server.quorum.QuorumPeerMain" if ensemble
                           else "org.apache.zookeeper.server.ZooKeeperServerMain")
        self.cfg = os.path.join(self.dir, "zoo.cfg")
        self.proc = None
        # free_port() only finds a port free now: a test running beside this one may bind it
        # before the JVM does (the JVM then exits). A standalone server that did not start
        # starts again on another port (an ensemble member's port is in its peers' configs:
        # no retry there).
        for attempt in range(3):
            with open(self.cfg, "w") as f:
                f.write("\n".join(lines) + "\n")
            try:
                self.start(wait)
                break
            except RuntimeError:
                # (The server logs nothing here: its logger is SLF4J's no-op one.)
                if ensemble or attempt == 2:
                    raise
                log("ZooKeeper %s did not start on port %d (%s); trying another port"
                    % (name, self.port, "it exited" if not self.proc.alive() else "no answer"))
                self.stop()
                old = "clientPort=%d" % self.port
                self.port = free_port()
                lines[lines.index(old)] = "clientPort=%d" % self.port

    def start(self, wait=True):
        cp = "%s/zookeeper.jar:%s/*" % (ZK_JAR_DIR, ZK_JAR_DIR)
        self.proc = Proc(["java", "-Xmx256m", "-Dzookeeper.log.dir=" + self.dir,
                          "-Dlog4j.configuration=file:/etc/zookeeper/conf/log4j.properties",
                          "-cp", cp, self.main_class, self.cfg],
                         os.path.join(self.dir, "zk.log"))
        # Ready, or the JVM gave up (a port taken): no need to wait the 30 s out then.
        if wait and not (wait_until(lambda: self.ruok() or not self.proc.alive(), 30) and
                         self.ruok()):
            raise RuntimeError("ZooKeeper %s did not start; see %s; its log's end:\n%s"
                               % (self.name, self.proc.logpath, self.proc.log_text()[-1500:]))

    def ruok(self):
        try:
            return raw(self.port, b"ruok", timeout=1) == b"imok"
        except OSError:
            return False

    def serving(self):
        """True once the server is in a quorum (or standalone) and serving clients."""
        try:
            out = raw(self.port, b"srvr", timeout=1)
            return b"Mode: " in out
        except OSError:
            return False

    def address(self):
        return "127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc:
            self.proc.stop(signal.SIGKILL)
            self.proc = None

    def cli(self, *cmd):
        """Runs one zkCli.sh command; returns its answer (see zkcli: zkCli's own noise left out)."""
        return zkcli(self.address(), [cmd])[0]

    def cli_as(self, auth, *cmd):
        """Runs one zkCli.sh command in a session authenticated with auth ("user:password",
        leafd.zk.auth without its digest: prefix; None: anonymous); returns its answer and its
        error lines (where zkCli reports a refusal), zkCli's own noise left out."""
        answer, errors = zkcli(self.address(), [cmd], auth=auth)
        return answer + errors


ZKCLI = "/usr/share/zookeeper/bin/zkCli.sh"
# What zkCli prints besides the commands' answers: its banner, the watcher's events, SLF4J's
# warnings about its logging, and log lines. None of it is ever an answer.
_ZKCLI_NOISE = re.compile(r"^(Connecting to |Welcome to ZooKeeper!|JLine support is |WATCHER::$|"
                          r"WatchedEvent state:|SLF4J: |\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|$)")


def zkcli_arg(word):
    """One word of a zkCli command line read from stdin, quoted when zkCli would split it."""
    return "'%s'" % word if any(ch in word for ch in " {}\"") else word


def zkcli(address, cmds, auth=None, attempts=3, connect_ms=10000):
    """Runs zkCli.sh commands (each a list of words, or a string as typed) in one session and
    returns (answer, errors): the commands' answer lines (stdout) and error lines (stderr: a
    missing node, a refusal), each without zkCli's own noise (banner, watcher events, SLF4J's
    warnings, log lines), so no caller can take noise for an answer. -waitforconnection makes
    zkCli connect before it reads a command (without it, a command read before the session is
    up fails with no answer); a session that did not connect is tried again, attempts times in
    all, then ("", the reason) is returned."""
    lines = [(" ".join(zkcli_arg(w) for w in c) if not isinstance(c, str) else c) for c in cmds]
    if auth:
        lines.insert(0, "addauth digest %s" % auth)
    script = "\n".join(lines + ["quit"]) + "\n"
    why = ""
    for attempt in range(attempts):
        try:
            r = subprocess.run([ZKCLI, "-server", address, "-timeout", str(connect_ms),
                                "-waitforconnection"], input=script, capture_output=True,
                               text=True, timeout=connect_ms / 1000 + 50)
        except subprocess.TimeoutExpired:
            why = "zkCli did not finish in %d s" % (connect_ms / 1000 + 50)
            continue
        if "WatchedEvent state:SyncConnected" in r.stdout:
            keep = lambda text: "".join(l + "\n" for l in text.splitlines() if not _ZKCLI_NOISE.match(l))
            return keep(r.stdout), keep(r.stderr)
        why = "zkCli did not connect to %s: %s" % (address, " | ".join(
            l for l in r.stderr.splitlines() if "Exception" in l)[:300])
        time.sleep(0.5)
    return "", why + "\n"


def rss_kb(pid):
    """A process's resident set (VmRSS) in KiB; 0 when /proc does not say."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pid_alive(pid):
    """Whether pid runs. A zombie (exited but not reaped) does not, once every thread of it has
    exited: after a kill -9 the main thread of a multi-threaded process turns zombie first, while
    its other threads still exit, and the process's files (its data dir's lock) close with the
    last of them."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                return True
        return len(os.listdir("/proc/%d/task" % pid)) > 1
    except OSError:
        return False


class MariaDB:
    """A throwaway MariaDB server with Leaf's leaf_alloc table in database `leaf`."""

    def __init__(self, env, name="db", args=None):
        self.env = env
        self.args = list(args or [])  # more mariadbd options, e.g. --ssl-cert=... for TLS
        self.dir = os.path.join(env.dir, name)
        self.datadir = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "mysql.sock")
        self.port = free_port()
        os.makedirs(self.dir, exist_ok=True)
        # The bootstrap server gets the instance's own --tmpdir too (passed through to it): its
        # temporary tables in a shared /tmp were removed under it by another test once.
        tmpdir = os.path.join(self.dir, "tmp")
        os.makedirs(tmpdir, exist_ok=True)
        r = subprocess.run(["mariadb-install-db", "--no-defaults", "--datadir=" + self.datadir,
                            "--auth-root-authentication-method=normal", "--user=root",
                            "--skip-test-db", "--tmpdir=" + tmpdir], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("mariadb-install-db failed: " + r.stderr[-2000:])
        self.proc = None
        self.start()
        self.sql("CREATE DATABASE leaf CHARACTER SET utf8mb4; CREATE USER 'leaf'@'127.0.0.1' IDENTIFIED BY 'leafpw';"
                 "GRANT ALL ON leaf.* TO 'leaf'@'127.0.0.1';", db="")
        sqlfile = os.path.join(os.path.dirname(__file__), "..", "..", "conf", "leaf_alloc.sql")
        if os.path.exists(sqlfile):
            with open(sqlfile) as f:
                self.sql(f.read())

    def start(self):
        # Each server gets its own --tmpdir: under parallel ctest, servers
        # sharing /tmp collided on temporary table files.
        tmpdir = os.path.join(self.dir, "tmp")
        os.makedirs(tmpdir, exist_ok=True)
        self.proc = Proc(["mariadbd", "--no-defaults", "--datadir=" + self.datadir,
                          "--tmpdir=" + tmpdir,
                          "--socket=" + self.sock, "--port=%d" % self.port,
                          "--bind-address=127.0.0.1", "--user=root",
                          "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=8M",
                          "--pid-file=" + os.path.join(self.dir, "mysqld.pid")] + self.args,
                         os.path.join(self.dir, "mariadb.log"))
        if not wait_until(lambda: self.sql("SELECT 1", db="", check_rc=False) == "1\n", 30):
            raise RuntimeError("MariaDB did not start; see " + self.proc.logpath)

    def sql(self, text, db="leaf", check_rc=True):
        """Runs SQL through the mariadb client as root; returns tab-separated rows."""
        argv = ["mariadb", "--no-defaults", "-uroot", "--socket=" + self.sock, "-N", "-B"]
        if db:
            argv.append(db)
        r = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=30)
        if check_rc and r.returncode != 0:
            raise RuntimeError("SQL failed: %s\n%s" % (text, r.stderr))
        return r.stdout

    def jdbc_url(self):
        return "jdbc:mysql://127.0.0.1:%d/leaf?useUnicode=true&characterEncoding=utf8" % self.port

    def stop(self, sig=signal.SIGTERM):
        if self.proc:
            self.proc.stop(sig)
            self.proc = None


class Leafd:
    """One leafd node with its own config file, data dir and port."""

    def __init__(self, env, name, props, extra_env=None, wait_ready=True, port=None, resp=False):
        self.env = env
        self.name = name
        self.dir = os.path.join(env.dir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.port = port or free_port()
        self.props = dict(props)
        # resp=True: also serve the Redis protocol on a free loopback port (self.resp_port).
        if resp:
            self.props.setdefault("leafd.resp.listen", "127.0.0.1:%d" % free_port())
        listen = self.props.get("leafd.resp.listen", "")
        self.resp_port = int(listen.rsplit(":", 1)[1]) if listen else None
        self.props.setdefault("leafd.listen", "127.0.0.1:%d" % self.port)
        # Another loopback address (127.0.0.x) and port where leafd.listen names them.
        self.host, listen_port = self.props["leafd.listen"].rsplit(":", 1)
        self.port = int(listen_port)
        self.props.setdefault("leafd.data.dir", os.path.join(self.dir, "data"))
        self.conf = os.path.join(self.dir, "leafd.properties")
        self.extra_env = extra_env or {}
        self.proc = None
        self.start(wait_ready=wait_ready)

    def write_conf(self):
        # Readable by its owner only, as a configuration holding secrets should be: leafd warns
        # about an inline secret in a file others may read (docs/SECURITY.md).
        with open(os.open(self.conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            for k, v in self.props.items():
                f.write("%s = %s\n" % (k, v))
        os.chmod(self.conf, 0o600)

    def start(self, wait_ready=True, extra_env=None, timeout=30):
        self.write_conf()
        e = dict(os.environ)
        e.update(self.extra_env)
        e.update(extra_env or {})
        self.proc = Proc([LEAFD_BIN, "-c", self.conf], os.path.join(self.dir, "leafd.log"), env=e)
        if wait_ready and not self.wait_ready(timeout):
            raise RuntimeError("leafd %s not ready; log:\n%s" % (self.name, self.proc.log_text()[-3000:]))
        return self

    def wait_ready(self, timeout=30):
        return wait_until(lambda: self.proc.alive() and
                          http(self.port, "/ready", host=self.host)[0] == 200, timeout)

    def wait_sequence(self, name, timeout=30, headers=None):
        """Polls GET /api/sequence/get/<name> (autocreate on) until it answers 200; returns the
        last status. /ready's sequence member promises a node connected to ZooKeeper and in
        line, not an elected primary (docs/OPERATIONS.md, Readiness): the first sequence
        request right after /ready 200 may answer 503 no_primary while the election runs."""
        last = [None]

        def ok():
            last[0] = http(self.port, "/api/sequence/get/%s" % name, headers=headers)[0]
            return last[0] == 200
        wait_until(ok, timeout, 0.1)
        return last[0]

    def wait_exit(self, timeout=30):
        try:
            return self.proc.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def get(self, path, **kw):
        kw.setdefault("host", self.host)
        return http(self.port, path, **kw)

    def get_ids(self, path):
        st, body, _ = self.get(path)
        if st != 200:
            raise RuntimeError("GET %s -> %d %s" % (path, st, body))
        return [int(x) for x in body.split("\n")]

    def stop(self, sig=signal.SIGTERM):
        if self.proc:
            rc = self.proc.stop(sig)
            return rc
        return None

    def log_text(self):
        return self.proc.log_text() if self.proc else ""


class Env:
    """Owns the temp dir and every server started in it."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="leafd-it-")
        self.servers = []
        atexit.register(self.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def check_config(self, props):
        """`leafd --check-config` of props (a dict) written as a file in this Env's dir:
        (exit code, stderr)."""
        path = os.path.join(self.dir, "check.properties")
        with open(path, "w") as f:
            for k, v in props.items():
                f.write("%s = %s\n" % (k, v))
        r = subprocess.run([LEAFD_BIN, "--check-config", "-c", path], capture_output=True,
                           text=True, timeout=30)
        return r.returncode, r.stderr

    def zookeeper(self, **kw):
        z = ZooKeeper(self, **kw)
        self.servers.append(z)
        return z

    def zookeeper_ensemble(self, n=3):
        """n ZooKeeper servers in one ensemble on loopback; returns the list."""
        ports = [(free_port(), free_port()) for _ in range(n)]
        zks = [ZooKeeper(self, name="zk%d" % (i + 1), ensemble=ports, myid=i + 1, wait=False)
               for i in range(n)]
        self.servers.extend(zks)
        for z in zks:
            if not wait_until(z.serving, 60):
                raise RuntimeError("ensemble member %s not serving; see %s" % (z.name, z.proc.logpath))
            out = raw(z.port, b"srvr", timeout=1)
            if b"Mode: leader" not in out and b"Mode: follower" not in out:
                raise RuntimeError("%s is not a quorum member: %r" % (z.name, out[-80:]))
        return zks

    def mariadb(self, **kw):
        d = MariaDB(self, **kw)
        self.servers.append(d)
        return d

    def leafd(self, name="leafd", props=None, **kw):
        n = Leafd(self, name, props or {}, **kw)
        self.servers.append(n)
        return n

    def close(self):
        for s in reversed(self.servers):
            try:
                s.stop()
            except Exception:
                pass
        self.servers = []
        # A failed check keeps the servers' logs for whoever reads the failure next.
        if os.environ.get("LEAFD_KEEP_TMP") or _checks["failed"]:
            print("kept " + self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def finish(self):
        self.close()
        print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
        if _checks["failed"]:
            # One line that tools/test repeats as the test's reason (tools/checks/test-report.py).
            print("FAILED: %s%s (logs kept in %s)" % (
                " ".join(_checks["first"].split())[:300],
                "; %d more failed check(s)" % (_checks["failed"] - 1) if _checks["failed"] > 1
                else "", self.dir), flush=True)
        sys.exit(1 if _checks["failed"] else 0)


def seg_props(db, **extra):
    """Config of a segment node on the MariaDB db (the harness's user leaf)."""
    p = {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
         "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw"}
    p.update(extra)
    return p


def static_props(worker=1, **extra):
    """Config of a static-worker snowflake node."""
    p = {"leaf.name": "it", "leaf.snowflake.enable": "true",
         "leafd.snowflake.worker.id": str(worker),
         "leafd.snowflake.advertise.ip": "127.0.0.1"}
    p.update(extra)
    return p


# ---- raw HTTP/1.x streams (pipelining, limits, back-pressure) ----------------

class HttpStream:
    """A raw client connection that parses the server's responses by
    Content-Length, so pipelined answers can be matched to requests in order.

        s = HttpStream(port)
        s.send(b"GET /health HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" * 3)
        for status, headers, body in s.read_responses(3): ...
    """

    def __init__(self, port, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""
        self.eof = False

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        """Reads more bytes; returns False at EOF (or reset by the peer)."""
        if self.eof:
            return False
        try:
            chunk = self.sock.recv(1 << 20)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def read_response(self):
        """Returns (status, headers with lower-case names, body bytes), or None
        if the server closed before a complete response. Raises socket.timeout."""
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                return None
        head, rest = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        status = int(parts[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        while len(rest) < n:
            if not self._fill():
                return None
            rest = self.buf.split(b"\r\n\r\n", 1)[1]
        self.buf = rest[n:]
        return status, headers, rest[:n]

    def read_responses(self, n):
        """Up to n responses; fewer if the server closed first."""
        out = []
        for _ in range(n):
            r = self.read_response()
            if r is None:
                break
            out.append(r)
        return out

    def closed_by_server(self, timeout=3.0):
        """True if the server closes (EOF or reset) within timeout with no
        further bytes; False if it stays open or sends more."""
        self.sock.settimeout(timeout)
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
        if chunk:
            self.buf += chunk
            return False
        self.eof = True
        return True

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def get_request(path, version="1.1", headers=None):
    """The bytes of one GET request."""
    h = "GET %s HTTP/%s\r\nHost: 127.0.0.1\r\n" % (path, version)
    for k, v in (headers or {}).items():
        h += "%s: %s\r\n" % (k, v)
    return (h + "\r\n").encode("latin-1")


def decode_opaque(node, ids, tag, batch=2000):
    """The segment IDs behind opaque IDs of tag, decoded by node (pipelined GET
    /decodeOpaqueId, batch requests per write); None where the node refused or answered for
    another ID."""
    s = HttpStream(node.port, timeout=30)
    out = []
    for i in range(0, len(ids), batch):
        chunk = ids[i:i + batch]
        s.send(b"".join(get_request("/decodeOpaqueId?id=%d&biz_tag=%s" % (x, tag)) for x in chunk))
        for x, (st, _, body) in zip(chunk, s.read_responses(len(chunk))):
            j = json.loads(body) if st == 200 else {}
            out.append(int(j["segment_id"]) if j.get("id") == str(x) else None)
    s.close()
    return out


def port_open(port):
    """True if something accepts TCP connections on 127.0.0.1:port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


# ---- raw RESP streams (the Redis-protocol port) --------------------------------

class RespError(str):
    """An error reply, kept as a value (not raised) so that pipelined replies
    can be compared in order: RespError("ERR unknown command ...")."""


def resp_command(*args):
    """The bytes of one multibulk command; arguments may be str, bytes or int."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RespStream(HttpStream):
    """A raw client connection to the RESP port, sharing HttpStream's socket
    plumbing (send, closed_by_server, close). Parses RESP2 and RESP3 replies:

        s = RespStream(node.resp_port)
        s.send(resp_command("PING") + resp_command("INCR", "snowflake:a"))
        s.read_reply(), s.read_reply()   # "PONG", 2124...
    """

    def call(self, *args):
        self.send(resp_command(*args))
        return self.read_reply()

    def _line(self):
        while b"\r\n" not in self.buf:
            if not self._fill():
                raise EOFError("connection closed by the server")
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _payload(self, n):
        while len(self.buf) < n + 2:
            if not self._fill():
                raise EOFError("connection closed inside a bulk string")
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data.decode("utf-8", "replace")

    def read_reply(self):
        """One reply: str, int, None, list, dict (RESP3 map), RespError, bool
        or float. Raises EOFError if the server closes first, socket.timeout."""
        line = self._line()
        kind, rest = line[:1], line[1:].decode("utf-8", "replace")
        if kind == b"+":
            return rest
        if kind in (b"-", b"!"):
            return RespError(self._payload(int(rest)) if kind == b"!" else rest)
        if kind == b":":
            return int(rest)
        if kind in (b"$", b"="):
            return None if int(rest) < 0 else self._payload(int(rest))
        if kind in (b"*", b"~", b">"):
            return None if int(rest) < 0 else [self.read_reply() for _ in range(int(rest))]
        if kind == b"%":
            return dict((self.read_reply(), self.read_reply()) for _ in range(int(rest)))
        if kind == b"_":
            return None
        if kind == b"#":
            return rest == "t"
        if kind == b",":
            return float(rest)
        raise ValueError("not a RESP reply: %r" % line[:80])


def unread_socket(port, payload, rcvbuf=8192):
    """A connection that sends what the socket takes of payload at once and never reads. Its
    receive buffer is small (rcvbuf bytes; None: the kernel's default), so the node's replies
    fill the kernel's buffers soon even on a slow machine (ThreadSanitizer), and the writes
    stall."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    sent = 0
    try:
        while sent < len(payload):
            sent += s.send(payload[sent:sent + 65536])
    except (BlockingIOError, OSError):
        pass
    return s
