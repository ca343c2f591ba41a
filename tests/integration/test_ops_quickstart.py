"""tools/quickstart's operator side, without starting anything (the full run
needs fixed ports and its own build; a newcomer's run is the check there):

- `stop` lists what it leaves in var/ and how to reset it; `reset` removes var/;
- the printed examples use the quickstart's own ports (ZooKeeper 12181, not
  2181), and every zk-inspect example is one of them;
- the README's ZooKeeper examples say where the quickstart's ZooKeeper is;
- a ZooKeeper or MariaDB port another process holds is named at once, with the
  variable that moves it, before anything is built or started;
- `examples` prints the ports of the last start (var/ports), and with users
  on carries the credentials in every ID and admin example.
"""
import os
import re
import socket
import subprocess
import tempfile
import time

from leafdtest import check, log, _checks  # noqa: F401

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
QS = os.path.join(ROOT, "tools", "quickstart")


def qs(*args, var, **extra):
    env = dict(os.environ, QUICKSTART_VAR=var, **extra)
    r = subprocess.run([QS] + list(args), capture_output=True, text=True, env=env, timeout=30)
    return r.returncode, r.stdout + r.stderr


def main():
    d = tempfile.mkdtemp(prefix="leafd-qs-")
    var = os.path.join(d, "var")
    for sub in ("leafd", "zk/data", "db/data"):
        os.makedirs(os.path.join(var, sub))
    with open(os.path.join(var, "leafd.log"), "w") as f:
        f.write("time=... level=info component=main msg=\"x\"\n")

    rc, out = qs("stop", var=var)
    log("stop:\n" + out)
    check(rc == 0, "stop exits 0 (got %d)" % rc)
    for item in ("var/leafd ", "var/zk ", "var/db ", "var/leafd.log"):
        check(item in out, "stop names %r as kept" % item.strip())
    check("quickstart reset" in out, "stop says how to reset")
    check(os.path.isdir(var), "stop keeps var/")

    rc, out = qs("reset", var=var)
    log("reset:\n" + out)
    check(rc == 0 and not os.path.exists(var), "reset removes var/ (rc %d)" % rc)
    check("start again" in out, "reset warns that segment IDs start again")

    rc, out = qs("examples", var=var)
    check(rc == 0, "examples exits 0")
    check("tools/programs/zk-inspect 127.0.0.1:12181 quickstart" in out,
          "the zk-inspect example uses the quickstart's ZooKeeper port")
    check(not re.search(r"127\.0\.0\.1:2181\b", out), "no example points at port 2181")
    check("-server 127.0.0.1:12181" in out, "the zkCli example uses 12181")
    check("-P13306" in out, "the mariadb example uses the quickstart's port")

    log("a taken ZooKeeper or MariaDB port is named at once")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    tport = str(taken.getsockname()[1])
    free = []
    for _ in range(3):
        with socket.socket() as f:
            f.bind(("127.0.0.1", 0))
            free.append(str(f.getsockname()[1]))
    ports = dict(LEAFD_PORT=free[0], LEAFD_RESP_PORT=free[1])
    for what, var_name, other in (("ZooKeeper", "QUICKSTART_ZK_PORT", "QUICKSTART_DB_PORT"),
                                  ("MariaDB", "QUICKSTART_DB_PORT", "QUICKSTART_ZK_PORT")):
        t0 = time.time()
        rc, out = qs("start", var=var, **ports, **{var_name: tport, other: free[2]})
        check(rc == 1 and tport in out and what in out and var_name + "=" in out,
              "%s's port taken: exit 1 naming the port and %s: %d %s" % (what, var_name, rc, out))
        check(time.time() - t0 < 5 and not os.path.exists(os.path.join(var, "zk", "zk.pid")),
              "refused at once, nothing started")
    taken.close()

    log("examples: the ports in use, and credentials with users on")
    os.makedirs(var, exist_ok=True)
    with open(os.path.join(var, "ports"), "w") as f:
        f.write("leafd=18080\nresp=16380\nzk=22181\ndb=23306\n")
    rc, out = qs("examples", var=var)
    check(rc == 0 and "127.0.0.1:18080/api/" in out and "-p 16380 " in out and
          "-server 127.0.0.1:22181" in out and "-P23306" in out and ":8080/" not in out,
          "examples name the ports of var/ports: %s" % out)
    rc, out = qs("examples", var=var, LEAFD_AUTH_ENABLE="true")
    ids = [l for l in out.splitlines() if l.startswith("  ") and
           ("/api/" in l or "redis-cli" in l or "/cache" in l)]
    check(rc == 0 and ids and all("$LEAFD_USER" in l or "LEAFD_USER%%" in l or "LEAFD_USER#" in l
                                  for l in ids),
          "with users on every ID and admin example carries the credentials: %s" % out)
    check("leafctl user add" in out, "and says how to make a user")
    qs("reset", var=var)

    with open(QS) as f:
        script = f.read()
    check('>>"$var/leafd.log"' in script and not re.search(r'[^>]>"\$var/leafd\.log"', script),
          "leafd's log is appended to across starts, never overwritten")

    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    check("12181" in readme and "./tools/quickstart reset" in readme,
          "README says where the quickstart's ZooKeeper is, and how to reset")
    os.rmdir(d)
    print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
    raise SystemExit(1 if _checks["failed"] else 0)


if __name__ == "__main__":
    main()
