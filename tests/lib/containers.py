"""Containers for the tests of tools/packaging/image and deploy/kubernetes (tests/container.cmake).

Podman runs as root with runc, on the host's network, and only on loopback addresses. Every
call goes through Podman.run, which points podman at a containers.conf of the test's own
(CONTAINERS_CONF): runc with cgroupfs (no systemd here), and no default ulimits (podman raises
the open-files limit of a root container above what a sandbox may allow, and runc's setrlimit
fails). Names carry the test's pid, so tests running at once never share a container, a pod or
a volume; Podman.close removes all of them.
"""
import os
import re
import subprocess
import time

from leafdtest import check, log

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERSION = re.search(r"project\(leafd VERSION (\d+\.\d+\.\d+)",
                    open(os.path.join(ROOT, "CMakeLists.txt")).read()).group(1)
IMAGE = "localhost/leafd:%s" % VERSION
UID = 10001

CONTAINERS_CONF = """[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


def build_image():
    """Runs tools/packaging/image; returns (rc, stdout, stderr, seconds)."""
    t0 = time.time()
    r = subprocess.run([os.path.join(ROOT, "tools", "packaging", "image")], capture_output=True, text=True,
                       timeout=1500)
    return r.returncode, r.stdout, r.stderr, time.time() - t0


class Podman:
    """podman with the test's containers.conf; remembers what it made, to remove it at close."""

    def __init__(self, env):
        self.env = env
        self.conf = os.path.join(env.dir, "containers.conf")
        with open(self.conf, "w") as f:
            f.write(CONTAINERS_CONF)
        self.prefix = "leafd-it-%d" % os.getpid()
        self.containers, self.pods, self.volumes = [], [], []
        env.servers.append(self)  # Env.close stops it with the servers

    def name(self, what):
        return "%s-%s" % (self.prefix, what)

    def environ(self):
        e = dict(os.environ)
        e["CONTAINERS_CONF"] = self.conf
        return e

    def run(self, *args, timeout=120, check_rc=False):
        r = subprocess.run(["podman"] + list(args), capture_output=True, text=True,
                           timeout=timeout, env=self.environ())
        if check_rc and r.returncode != 0:
            raise RuntimeError("podman %s: %s" % (" ".join(args), r.stderr[-1500:]))
        return r

    def popen(self, args, stdout, stderr):
        return subprocess.Popen(["podman"] + list(args), stdout=stdout, stderr=stderr,
                                env=self.environ(), start_new_session=True)

    def inspect(self, name, fmt):
        return self.run("inspect", "--format", fmt, name).stdout.strip()

    def pid(self, name):
        """The container's main process as the host sees it (0 when it is not running)."""
        try:
            return int(self.inspect(name, "{{.State.Pid}}") or 0)
        except ValueError:
            return 0

    def stop(self):
        for p in self.pods:
            self.run("pod", "rm", "-f", "-t", "5", p, timeout=120)
        for c in self.containers:
            self.run("rm", "-f", "-v", "-t", "5", c, timeout=120)
        for v in self.volumes:
            self.run("volume", "rm", "-f", v, timeout=60)
        self.containers, self.pods, self.volumes = [], [], []


def proc_status(pid):
    """/proc/PID/status as a dict (Uid, Gid, CapEff, ...)."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def root_mount_options(pid):
    """The mount options of the process's / (from its mountinfo)."""
    with open("/proc/%d/mountinfo" % pid) as f:
        for line in f:
            fields = line.split()
            if fields[4] == "/":
                return fields[5].split(",")
    return []


def check_process(pid, what):
    """The node runs as 10001:10001 with no capability, on a read-only root."""
    st = proc_status(pid)
    check(st["Uid"].split() == [str(UID)] * 4 and st["Gid"].split() == [str(UID)] * 4,
          "%s runs as %d:%d, not root (Uid %s, Gid %s)" % (what, UID, UID, st["Uid"], st["Gid"]))
    check(int(st["CapEff"], 16) == 0, "%s has no effective capability: %s" % (what, st["CapEff"]))
    check("ro" in root_mount_options(pid), "%s's root filesystem is read-only: %s"
          % (what, root_mount_options(pid)))


def secret_dir(env, name, secrets):
    """A folder of secret files, each owned by the node's user and readable by it alone."""
    d = os.path.join(env.dir, name)
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    for k, v in secrets.items():
        p = os.path.join(d, k)
        with open(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(v + "\n")
        os.chown(p, UID, UID)
    return d


def log_tail(text, n=2000):
    return text[-n:] if text else ""


__all__ = ["IMAGE", "VERSION", "UID", "ROOT", "Podman", "build_image", "check_process",
           "proc_status", "secret_dir", "log_tail", "log"]
