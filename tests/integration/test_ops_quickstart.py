"""tools/quickstart's operator side, without starting anything (the full run
needs fixed ports and its own build; a newcomer's run is the check there):

- `stop` lists what it leaves in var/ and how to reset it; `reset` removes var/;
- the printed examples use the quickstart's own ports (ZooKeeper 12181, not
  2181), and every zk-inspect example is one of them;
- the README's ZooKeeper examples say where the quickstart's ZooKeeper is.
"""
import os
import re
import subprocess
import tempfile

from leafdtest import check, log, _checks  # noqa: F401

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
QS = os.path.join(ROOT, "tools", "quickstart")


def qs(*args, var):
    env = dict(os.environ, QUICKSTART_VAR=var)
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
    check("tools/zk-inspect 127.0.0.1:12181 quickstart" in out,
          "the zk-inspect example uses the quickstart's ZooKeeper port")
    check(not re.search(r"127\.0\.0\.1:2181\b", out), "no example points at port 2181")
    check("-server 127.0.0.1:12181" in out, "the zkCli example uses 12181")
    check("-P13306" in out, "the mariadb example uses the quickstart's port")

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
