"""A three-node MariaDB Galera cluster on loopback, for the segment tests of
docs/cluster.md (tests/integration/test_segment_galera.py, the chaos run).

Debian's galera-4 and mariadb-server (tools/deps test). Each node has its own
dir, SQL port, group-communication port, IST port and rsync SST port; the
first node starts with --wsrep-new-cluster. The servers run as `mysql` with
their dirs owned by it: rsync SST writes as the server's user.

Failure detection is shortened (suspect 2 s, inactive 3 s) so that a kill -9
stalls the survivors' commits for about 2-3 s instead of Galera's 5-15 s
defaults; the figure the test reports depends on it.
"""
import os
import pwd
import shutil
import signal
import subprocess

from leafdtest import Proc, free_port, wait_until

PROVIDER = "/usr/lib/galera/libgalera_smm.so"


def available():
    """Why a Galera cluster cannot run here, or None."""
    if not os.path.exists(PROVIDER):
        return "galera-4 is not installed (%s); tools/deps test installs it" % PROVIDER
    if shutil.which("rsync") is None:
        return "rsync is not installed; tools/deps test installs it"
    try:
        pwd.getpwnam("mysql")
    except KeyError:
        return "no user mysql (mariadb-server creates it)"
    if os.geteuid() != 0:
        return "the servers run as mysql: the test must start as root"
    return None


def _chown_tree(path, uid, gid):
    os.chown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.chown(os.path.join(root, n), uid, gid)


class GaleraNode:
    def __init__(self, cluster, i):
        self.cluster = cluster
        self.i = i
        self.name = "galera%d" % (i + 1)
        self.dir = os.path.join(cluster.dir, self.name)
        self.datadir = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "mysql.sock")
        self.port = free_port()
        self.gcomm = free_port()
        self.ist = free_port()
        self.sst = free_port()
        self.proc = None
        os.makedirs(os.path.join(self.dir, "tmp"), exist_ok=True)

    def write_cnf(self, addresses):
        cnf = os.path.join(self.dir, "my.cnf")
        opts = ("gmcast.listen_addr=tcp://127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d;"
                "evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT3S;"
                "evs.inactive_check_period=PT0.5S;gcache.size=32M" % (self.gcomm, self.ist))
        with open(cnf, "w") as f:
            f.write("""[mysqld]
datadir={d}
tmpdir={t}
socket={s}
port={p}
bind-address=127.0.0.1
pid-file={pid}
log-error={log}
user=mysql
innodb_buffer_pool_size=32M
innodb_log_file_size=8M
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
innodb_flush_log_at_trx_commit=0
wsrep_on=ON
wsrep_provider={prov}
wsrep_cluster_name=leafd_it
wsrep_cluster_address=gcomm://{addrs}
wsrep_node_address=127.0.0.1
wsrep_node_name={name}
wsrep_provider_options="{opts}"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:{sst}
""".format(d=self.datadir, t=os.path.join(self.dir, "tmp"), s=self.sock, p=self.port,
           pid=os.path.join(self.dir, "mysqld.pid"), log=os.path.join(self.dir, "error.log"),
           prov=PROVIDER, addrs=addresses, name=self.name, opts=opts, sst=self.sst))
        return cnf

    def install(self):
        r = subprocess.run(["mariadb-install-db", "--defaults-file=" + os.path.join(self.dir, "my.cnf"),
                            "--auth-root-authentication-method=normal", "--user=mysql",
                            "--skip-test-db"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("mariadb-install-db (%s) failed: %s" % (self.name, r.stderr[-2000:]))

    def log_tail(self, n=12):
        """The last lines of the server's error.log, one line (a failure's reason outlives the
        test's temp dir, which the harness removes)."""
        try:
            with open(os.path.join(self.dir, "error.log"), errors="replace") as f:
                lines = [x.strip() for x in f.read().splitlines() if x.strip()]
        except OSError as e:
            return "(no error.log: %s)" % e
        return " | ".join(lines[-n:])

    def start(self, new_cluster=False, wait=True):
        argv = ["mariadbd", "--defaults-file=" + os.path.join(self.dir, "my.cnf")]
        if new_cluster:
            argv.append("--wsrep-new-cluster")
        self.proc = Proc(argv, os.path.join(self.dir, "stdout.log"))
        if wait and not self.wait_synced(60):
            raise RuntimeError("%s did not reach Synced; its error.log ends: %s"
                               % (self.name, self.log_tail()))

    def status(self, var):
        out = self.sql("SHOW GLOBAL STATUS LIKE '%s'" % var, db="", check_rc=False, timeout=5)
        parts = out.strip().split("\t")
        return parts[1] if len(parts) == 2 else None

    def wait_synced(self, timeout):
        return wait_until(lambda: self.proc.alive() and self.status("wsrep_local_state_comment") == "Synced"
                          and self.status("wsrep_ready") == "ON", timeout, 0.2)

    def sql(self, text, db="leaf", check_rc=True, timeout=30):
        argv = ["mariadb", "--no-defaults", "-uroot", "--socket=" + self.sock, "-N", "-B"]
        if db:
            argv.append(db)
        try:
            r = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            if check_rc:
                raise
            return ""
        if check_rc and r.returncode != 0:
            raise RuntimeError("SQL on %s failed: %s\n%s" % (self.name, text, r.stderr))
        return r.stdout

    def primary(self):
        """This member is in Galera's primary component (wsrep_cluster_status)."""
        return self.status("wsrep_cluster_status") == "Primary"

    def bootstrap(self):
        """What an operator does with the last member left non-primary, once the others are
        surely down (docs/cluster.md, "Segments on a database cluster"): pc.bootstrap."""
        self.sql("SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'", db="")

    def alive(self):
        return self.proc is not None and self.proc.alive()

    def kill9(self):
        if self.proc:
            self.proc.stop(signal.SIGKILL)

    def stop(self, sig=signal.SIGTERM):
        if self.proc:
            self.proc.stop(sig, timeout=60)

    def hostport(self):
        return "127.0.0.1:%d" % self.port


class GaleraCluster:
    """n nodes; .nodes[i]; .jdbc_url(order) lists the hosts in the given order."""

    def __init__(self, env, n=3):
        self.env = env
        self.dir = os.path.join(env.dir, "galera")
        os.makedirs(self.dir, exist_ok=True)
        # mysql must reach its dirs through the test's private temp dir.
        os.chmod(env.dir, 0o755)
        self.nodes = [GaleraNode(self, i) for i in range(n)]
        addrs = ",".join("127.0.0.1:%d" % x.gcomm for x in self.nodes)
        for x in self.nodes:
            x.write_cnf(addrs)
        pw = pwd.getpwnam("mysql")
        _chown_tree(self.dir, pw.pw_uid, pw.pw_gid)
        self.nodes[0].install()
        self.nodes[0].start(new_cluster=True)
        self.nodes[0].sql("CREATE DATABASE leaf CHARACTER SET utf8mb4;"
                          "CREATE USER 'leaf'@'127.0.0.1' IDENTIFIED BY 'leafpw';"
                          "GRANT ALL ON leaf.* TO 'leaf'@'127.0.0.1';", db="")
        sqlfile = os.path.join(os.path.dirname(__file__), "..", "..", "conf", "leaf_alloc.sql")
        with open(sqlfile) as f:
            self.nodes[0].sql(f.read())
        # The joiners get their data by rsync SST from the first node: no install needed,
        # but mariadbd wants a datadir that exists.
        # One joiner at a time: two joining at once on a loaded 2-core machine churned the group
        # membership ("failed to commit for install message, declaring inactive") until the
        # second gave up on the primary view after 30 s.
        for x in self.nodes[1:]:
            os.makedirs(x.datadir, exist_ok=True)
            os.chown(x.datadir, pw.pw_uid, pw.pw_gid)
            x.start(wait=False)
            if not x.wait_synced(90):
                raise RuntimeError("%s did not join within 90 s; its error.log ends: %s"
                                   % (x.name, x.log_tail()))
        # The first node was the joiners' donor (rsync SST blocks it): it is Donor/Desynced,
        # then Joined, until it caught up; a statement on it before it is Synced again can be
        # refused. Every member Synced is what "the cluster is up" means to a test.
        for x in self.nodes:
            if not x.wait_synced(60):
                raise RuntimeError("%s not Synced after the joins; its error.log ends: %s"
                                   % (x.name, x.log_tail()))
        env.servers.append(self)

    def jdbc_url(self, order):
        return "jdbc:mysql://%s/leaf" % ",".join(self.nodes[i].hostport() for i in order)

    def size(self, via):
        v = via.status("wsrep_cluster_size")
        return int(v) if v else 0

    def stop(self):
        for x in reversed(self.nodes):
            try:
                x.stop()
            except Exception:
                pass
