"""tools/programs/zk-inspect against a real ZooKeeper with live and dead workers; then keyed
spaces (docs/keyed-sequences.md, "Sections"), created with leafctl keyed create: the default
view's line per space, `keyed` (each space's step, sections written, highest max) and
`keyed <space>` (each section's slots, max and version), and their errors."""
import os
import re
import subprocess
import time

from leafdtest import Env, check, free_port, http, log
from zkhelpers import worker_of, zk_props

LOGFMT = re.compile(r'^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(debug|info|warn|error) '
                    r'component=[a-z_]+ msg="([^"\\]|\\.)*"$')
ZK_INSPECT = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "programs", "zk-inspect")
LEAFCTL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "programs", "leafctl")


def inspect(*args):
    r = subprocess.run([ZK_INSPECT] + list(args), capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


with Env() as env:
    zk = env.zookeeper()
    rc, out, err = inspect(zk.address(), "it")
    check(rc == 1 and "no /snowflake" in err, "empty ZooKeeper reported clearly: %r" % err)

    a = env.leafd("a", zk_props(zk.address()))
    b = env.leafd("b", zk_props(zk.address()))
    wa = worker_of(a.get_ids("/api/snowflake/get/x")[0])
    wb = worker_of(b.get_ids("/api/snowflake/get/x")[0])
    check(b.stop() == 0, "b stops gracefully (its ephemeral node goes at once)")
    rc, out, err = inspect(zk.address(), "it")
    log(out)
    check(rc == 0, "zk-inspect exits 0: %s" % err)
    check("cluster it: 2 worker(s), 1 live" in out, "summary line counts workers and live ones")
    workers = [l for l in out.splitlines() if not l.lstrip().startswith("member ")]
    line_a = [l for l in workers if "127.0.0.1:%d " % a.port in l]
    line_b = [l for l in workers if "127.0.0.1:%d " % b.port in l]
    check(len(line_a) == 1 and re.search(r"\s%d\s" % wa, line_a[0]) and line_a[0].rstrip().endswith(" live"),
          "a: its worker ID and live: %s" % line_a)
    check(len(line_b) == 1 and re.search(r"\s%d\s" % wb, line_b[0]) and line_b[0].rstrip().endswith("not live"),
          "b: its worker ID and not live: %s" % line_b)
    check(all(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}", l) for l in line_a + line_b),
          "last reported time shown")
    check(all(re.search(r"(ago|ahead)", l) for l in line_a + line_b), "age shown")
    check(line_a and re.search(r"\s\d+\.\d+\.\d+\s+live$", line_a[0].rstrip()),
          "a live node's version (from its /ready): %s" % line_a)
    check(line_b and re.search(r"\s\?\s+not live$", line_b[0].rstrip()),
          "a stopped node's version is unknown ('?'): %s" % line_b)

    rc, out2, err = inspect(zk.address())
    check(rc == 0 and "cluster it:" in out2, "all clusters listed without a name")

    # ZooKeeper away for a moment: its client library's lines come through leafd's logger.
    zk.stop()
    time.sleep(2)
    zk.start()
    check(a.stop() == 0, "a stops gracefully")
    lines = [l for l in a.log_text().splitlines() if l.strip()]
    bad = [l for l in lines if not LOGFMT.match(l)]
    check(not bad, "every log line of a ZooKeeper-mode node is logfmt: %r" % bad[:3])
    check(any("component=zookeeper" in l for l in lines), "ZooKeeper client lines are routed")

    # Keyed spaces: one node with the sequences on, two spaces made with leafctl.
    k = env.leafd("k", zk_props(zk.address(), name="kz", **{"leafd.sequence.enable": "true"}))
    for args in (["chat", "--step", "500"], ["empty"]):
        r = subprocess.run([LEAFCTL, "keyed", "create"] + args + ["-c", k.conf], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0 and '"name":"%s"' % args[0] in r.stdout,
              "leafctl keyed create %s: %s%s" % (" ".join(args), r.stdout, r.stderr))
    st, body, _ = http(k.port, "/api/keyed/get/chat/conv42?count=3")
    check(st == 200, "the key issues: %d %s" % (st, body))
    top = int(body.split()[-1])
    r = subprocess.run([LEAFCTL, "keyed", "create", "chat", "-c", k.conf], capture_output=True,
                       text=True, timeout=60)
    last = (r.stdout + r.stderr).strip().splitlines()[-1]
    check(r.returncode == 1 and '"code":"space_exists"' in r.stderr and "'chat' exists" in last,
          "leafctl keyed create of a space that exists: exit 1, says so last: %s%s" % (r.stdout, r.stderr))
    r = subprocess.run([LEAFCTL, "keyed", "list", "-c", k.conf], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0 and r.stdout.split("\n")[0].split() ==
          ["SPACE", "STEP", "ISSUED", "RESIDENT", "WRITES", "EVICTIONS"] and
          re.search(r"^chat\s+500\s+3\s+1\s+\d+\s+0$", r.stdout, re.M) and
          re.search(r"^empty\s+10000\s+0\s+0\s+0\s+0$", r.stdout, re.M),
          "leafctl keyed list: a table of the spaces and this node's counters: %s%s" % (r.stdout, r.stderr))
    rc, out, err = inspect(zk.address(), "kz", "keyed")
    log(out)
    check(rc == 0 and "keyed spaces of kz: 2" in out, "keyed view: %d %s %s" % (rc, out, err))
    chat = re.search(r"^  keyed chat\s+step 500\s+sections 1\s+highest max (\d+)$", out, re.M)
    check(chat and int(chat.group(1)) >= top, "chat: step 500, 1 section, max >= %d: %s" % (top, out))
    check(re.search(r"^  keyed empty\s+step 10000\s+sections 0\s+highest max -$", out, re.M),
          "empty: the default step, no section written: %s" % out)
    rc, all_out, err = inspect(zk.address(), "keyed")
    check(rc == 0 and "keyed spaces of kz: 2" in all_out and "keyed chat" in all_out,
          "keyed view with no cluster names every cluster under /leafd: %d %s" % (rc, all_out))
    rc, out, err = inspect(zk.address(), "kz", "keyed", "chat")
    log(out)
    check(rc == 0 and "keyed space chat of kz: step 500, 1 section(s) written of 256" in out,
          "keyed chat: %d %s %s" % (rc, out, err))
    sec = re.search(r"^  (\d+)\s+(\d+)-(\d+)\s+(\d+)\s+(\d+)$", out, re.M)
    check(sec and int(sec.group(2)) == 64 * int(sec.group(1)) and
          int(sec.group(3)) == 64 * int(sec.group(1)) + 63 and int(sec.group(4)) >= top and
          int(sec.group(4)) == int(chat.group(1)),
          "the section: its slots 64*s..64*s+63, its max the highest: %s" % out)
    rc, out, err = inspect(zk.address(), "kz", "keyed", "nosuch")
    check(rc == 1 and "no keyed space nosuch" in err and "leafctl keyed create" in err,
          "an unknown space: exit 1, says how to make it: %d %r" % (rc, err))
    rc, out, err = inspect(zk.address(), "it", "keyed")
    check(rc == 1 and "no keyed spaces for cluster it" in err,
          "a cluster without the sequences: exit 1: %d %r" % (rc, err))
    rc, out, err = inspect(zk.address(), "kz")
    check(re.search(r"^  keyed chat\s+step 500\s+sections 1", out, re.M),
          "the default view names the keyed spaces: %s" % out)
    check(k.stop() == 0, "k stops gracefully")
    errors = [l for l in k.log_text().splitlines() if "level=error component=keyed" in l]
    check(not errors, "no error logged for the keyed spaces' sections: %s" % errors[:3])

    dead = "127.0.0.1:%d" % free_port()
    rc, out, err = inspect(dead, "it")
    check(rc == 1 and "cannot reach ZooKeeper" in err, "unreachable ZooKeeper reported: %r" % err)
    env.finish()
