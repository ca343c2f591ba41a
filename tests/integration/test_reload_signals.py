"""Signals during an in-place upgrade's hand-over (docs/UPGRADING.md, "Signals during a
hand-over"), and clients that never read during one (docs/OPERATIONS.md, "Clients that do not
read").

A forever-mode node on ZooKeeper, its pid file as tools/programs/leafctl writes it. Each round holds the old
process's drain for about a second with a request that never completes (its 408 comes after the
drain's grace), and acts once the new process has adopted the listeners (the old one says so):
1. SIGTERM to the old process: it ends its drain, hands its ZooKeeper session over and exits 0;
   the new process serves and the pid file names it.
2. SIGHUP to both processes: both ignore it; the hand-over completes, the new one serves, and no
   connection is refused meanwhile.
3. 8 HTTP clients pipelining GET /metrics and 8 RESP clients pipelining COMMAND DOCS, none reading
   a byte (once the kernel's buffers are full and nothing moves): the drain does not wait for
   them, so the new process accepts again within 5 s of the old one's stop (tens of ms when the
   machine is not loaded, ThreadSanitizer included; 15 s before, the drain's bound) and resumes
   the old session.
4. `leafctl stop`: it stops the process that serves (the pid file names it from ADOPTED on), waits
   for it, says "leafd stopped"; nothing is left running or listening, the pid file is gone, and
   `leafctl start` starts the node again.
5. SIGTERM to the new process while it takes over (what `systemctl stop` does under the shipped
   unit's KillMode=mixed): it takes the session over, then stops before accepting; the old one
   hands over and exits; nothing is left running or listening.
"""
import os
import re
import signal
import socket
import subprocess
import time

import reloadload
from leafdtest import (unread_socket, Env, check, get_request, log, pid_alive, port_open, resp_command,
                       wait_until)
from zkhelpers import zk_props

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LEAFCTL = os.path.join(ROOT, "tools", "programs", "leafctl")


def partial(port):
    """A request whose head never ends: it holds the drain until the drain's grace is over."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return s



def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def quiet(pid, timeout=15):
    """Waits until pid uses (almost) no CPU: the replies to the clients that never read fill the
    kernel's socket buffers first, and only then does nothing move."""
    end = time.monotonic() + timeout
    prev = cpu_ticks(pid)
    while time.monotonic() < end:
        time.sleep(0.3)
        cur = cpu_ticks(pid)
        if cur - prev <= 3:
            return True
        prev = cur
    return False


def refused(port):
    """1 when nothing accepts a connection on port (connections queued for an accept: 0)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return 0
    except ConnectionRefusedError:
        return 1
    except OSError:
        return 0


def read_pid(data_dir):
    try:
        with open(os.path.join(data_dir, "leafd.pid")) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def usr2_until_adopted(node, pid, text=None):
    """SIGUSR2 to pid; returns the new process's pid once the old one says it adopted the
    listeners (the old one drains from then on)."""
    pat = r"in-place upgrade: the new process \(pid (\d+)\) adopted the listeners"
    text = text or node.log_text
    before = len(re.findall(pat, text()))
    os.kill(pid, signal.SIGUSR2)
    ok = wait_until(lambda: len(re.findall(pat, text())) > before, 30, 0.002)
    check(ok, "the new process of pid %d adopted the listeners" % pid)
    return int(re.findall(pat, text())[-1]) if ok else None


def handed_over(node, new):
    return "handed over to pid %d " % new in node.log_text()


def round_sigterm(node, data_dir):
    old = node.proc.p.pid
    hold = partial(node.port)
    new = usr2_until_adopted(node, old)
    time.sleep(0.05)
    os.kill(old, signal.SIGTERM)
    try:
        rc = node.proc.p.wait(20)
    except subprocess.TimeoutExpired:
        rc = None
    hold.close()
    log("SIGTERM to the draining old process %d: exit %r; new process %s" % (old, rc, new))
    check(rc == 0, "SIGTERM during the drain: the old process exits 0 (got %r)" % rc)
    check(new is not None and handed_over(node, new), "it handed its session over to pid %s" % new)
    check(new is not None and pid_alive(new) and wait_until(lambda: reloadload.ready(node.port), 20),
          "the new process %s serves" % new)
    check(read_pid(data_dir) == new, "the pid file names the new process (%d)" % read_pid(data_dir))
    return new


def round_sighup(node, serving):
    hold = partial(node.port)
    new = usr2_until_adopted(node, serving)
    time.sleep(0.05)
    for p in (serving, new):
        if p:
            os.kill(p, signal.SIGHUP)
    nrefused = 0
    end = time.monotonic() + 3
    while time.monotonic() < end:
        nrefused += refused(node.port) + refused(node.resp_port)
        time.sleep(0.05)
    hold.close()
    check(wait_until(lambda: new and handed_over(node, new), 20), "SIGHUP to both: the hand-over completes")
    check(wait_until(lambda: not pid_alive(serving), 20), "the old process %d is gone" % serving)
    check(new and pid_alive(new) and reloadload.ready(node.port), "the new process %s serves" % new)
    log("SIGHUP to both processes during the drain: %d connections refused" % nrefused)
    check(nrefused == 0, "no connection refused throughout (%d)" % nrefused)
    return new


def round_unread(node, serving):
    held = [unread_socket(node.port, get_request("/metrics") * 4000) for _ in range(8)]
    held += [unread_socket(node.resp_port, resp_command("COMMAND", "DOCS") * 8000) for _ in range(8)]
    check(quiet(serving), "the replies to the clients that never read stop moving")
    pat = r"accepting again (\d+) ms after the previous process stopped"
    before = len(re.findall(pat, node.log_text()))
    new = reloadload.upgrade_in_place(node, serving, "clients that never read")
    wait_until(lambda: len(re.findall(pat, node.log_text())) > before, 20)
    gaps = re.findall(pat, node.log_text())[before:]
    gap = int(gaps[-1]) if gaps else None
    log("an upgrade with 16 clients that never read: accepting again after %s ms" % gap)
    check(new is not None and gap is not None and gap < 5000,
          "the accept gap stays under 5 s (%s ms)" % gap)
    text = node.log_text()
    check("the previous process handed over (ZooKeeper session" in text.split(
        "starting (pid %s," % new)[-1], "the new process resumed the old session")
    for s in held:
        s.close()
    return new


def round_leafctl_stop(node, serving, data_dir):
    env = dict(os.environ)
    env.pop("LEAFD_ADMIN_TOKEN", None)
    hold = partial(node.port)
    new = usr2_until_adopted(node, serving)
    r = subprocess.run([LEAFCTL, "stop", "-c", node.conf], capture_output=True, text=True,
                       timeout=90, env=env)
    hold.close()
    out = r.stdout + r.stderr
    log("leafctl stop during the drain: rc %d: %s" % (r.returncode, out.strip()))
    check(r.returncode == 0 and "leafd stopped" in out, "leafctl stop: rc 0, says stopped")
    check(wait_until(lambda: not pid_alive(serving) and not (new and pid_alive(new)), 20),
          "both processes are gone (%d, %s)" % (serving, new))
    check(not port_open(node.port), "nothing listens on the node's port")
    check(not os.path.exists(os.path.join(data_dir, "leafd.pid")), "the pid file is gone")
    r = subprocess.run([LEAFCTL, "start", "-c", node.conf], capture_output=True, text=True,
                       timeout=90, env=env)
    check(r.returncode == 0, "leafctl start after it: rc %d %s" % (r.returncode, r.stdout + r.stderr))
    return read_pid(data_dir)


def round_stop_new(node, serving):
    """SIGTERM to the new process while it takes over (systemctl stop under KillMode=mixed)."""
    hold = partial(node.port)
    new = usr2_until_adopted(node, serving, lambda: leafctl_log(node))
    if new:
        os.kill(new, signal.SIGTERM)
    gone = wait_until(lambda: not pid_alive(serving) and not (new and pid_alive(new)), 30)
    hold.close()
    log("SIGTERM to the new process %s while it takes over: both gone: %s" % (new, bool(gone)))
    check(gone, "SIGTERM to the adopting new process: both processes end")
    text = leafctl_log(node)
    check("stopping before accepting" in text,
          "the new process took over, then stopped before accepting")
    check("stopped cleanly" in text.split("stopping before accepting")[-1],
          "and it stopped cleanly (its last line)")
    check(not port_open(node.port), "nothing listens on the node's port")


def leafctl_log(node):
    """The log tools/programs/leafctl start writes ({leafd.data.dir}/leafd.log)."""
    try:
        with open(os.path.join(os.path.dirname(node.conf), "data", "leafd.log"),
                  errors="replace") as f:
            return f.read()
    except OSError:
        return ""


env = Env()
zk = env.zookeeper()
node = env.leafd("n0", zk_props(zk.address(), name="rsig", **{
    "leafd.zk.session.timeout.ms": "6000", "leafd.threads": "2"}), resp=True)
data_dir = os.path.join(os.path.dirname(node.conf), "data")
with open(os.path.join(data_dir, "leafd.pid"), "w") as f:
    f.write("%d\n" % node.proc.p.pid)
serving = node.proc.p.pid
t0 = time.monotonic()
try:
    serving = round_sigterm(node, data_dir) or serving
    serving = round_sighup(node, serving) or serving
    serving = round_unread(node, serving) or serving
    serving = round_leafctl_stop(node, serving, data_dir) or serving
    round_stop_new(node, serving)
finally:
    for p in {serving, read_pid(data_dir)}:
        if p and pid_alive(p) and p != node.proc.p.pid:
            os.kill(p, signal.SIGKILL)
log("done in %.1f s" % (time.monotonic() - t0))
env.finish()
