"""A named identity (docs/IDENTITY.md, "Named identity"): leafd.snowflake.identity names the
node, as a StatefulSet pod's name would, and the worker ID follows the name.

1. leafd-0 on 127.0.0.2 with a data dir, stopped, then started on 127.0.0.3 with an empty data
   dir: the same worker ID; leafd-1 gets another.
2. A second live leafd-0 (127.0.0.5, its own dir) started under load on the first: it issues
   no ID, exits 1 naming leafd-0; no ID is issued twice.
3. A partition: the holder of leafd-0 reaches ZooKeeper through a proxy that is blackholed,
   and a replacement (127.0.0.6, empty dir) starts at once. The holder stops issuing within
   its fence (what ZooKeeper acknowledged, at most reserve.ms ahead, and a session timeout
   after its last answered call); the replacement takes the name once the session expired.
   No ID is issued twice, and the replacement's first ID comes after the holder's last, both
   in value and in time. The figures go to the log (the closing note quotes them).
"""
import time

from identityhelpers import Hammer, Puller, named, worker_of
from leafdtest import Env, check, log, wait_until
from tcpproxy import Proxy

SESSION_MS = 6000
TWIN_EXIT_S = SESSION_MS / 1000 + 2 + 10


env = Env()
zk = env.zookeeper()
base = env.dir

# 1. The name keeps its worker ID on another address with an empty data dir.
a = env.leafd("a", named(zk.address(), "leafd-0", "127.0.0.2"))
w0 = worker_of(a)
check(a.stop() == 0, "leafd-0 stops gracefully")
a2 = env.leafd("a2", named(zk.address(), "leafd-0", "127.0.0.3", base + "/empty-a2"))
check(worker_of(a2) == w0, "leafd-0 on 127.0.0.3 with an empty data dir keeps worker ID %d (%d)"
      % (w0, worker_of(a2)))
b = env.leafd("b", named(zk.address(), "leafd-1", "127.0.0.4"))
w1 = worker_of(b)
check(w1 != w0, "leafd-1 gets another worker ID (%d, leafd-0 has %d)" % (w1, w0))
b.stop()

# 2. A second live leafd-0 under load on the first: issues nothing, exits 1 naming it.
twin = env.leafd("twin", named(zk.address(), "leafd-0", "127.0.0.5"), wait_ready=False)
h = Hammer([a2, twin]).start()
rc = twin.wait_exit(TWIN_EXIT_S)
h.stop()
log("twin: %s; duplicates %d" % (h.summary(), h.duplicates()))
check(h.duplicates() == 0, "no ID issued twice (%d)" % h.duplicates())
check(len(h.ids[twin.port]) == 0, "the twin issued no ID (%d)" % len(h.ids[twin.port]))
check(rc == 1, "the twin exited 1 (rc %s)" % rc)
if rc is None:
    twin.stop()
check("leafd-0" in twin.log_text().strip().splitlines()[-1] if twin.log_text().strip() else False,
      "the twin's last log line names leafd-0:\n" + twin.log_text()[-1200:])
check(a2.get("/ready")[0] == 200, "leafd-0 serves throughout")
a2.stop()

# 3. A partition: the holder cut off from ZooKeeper while a replacement starts.
proxy = Proxy(target=("127.0.0.1", zk.port))
hp = named("127.0.0.1:%d" % proxy.port, "leafd-0", "127.0.0.2", base + "/holder")
holder = env.leafd("holder", hp)
check(worker_of(holder) == w0, "the holder is leafd-0 (worker ID %d)" % w0)
ph = Puller(holder)
time.sleep(1.0)
cut = time.time()
proxy.blackhole()
repl = env.leafd("repl", named(zk.address(), "leafd-0", "127.0.0.6", base + "/repl"),
                 wait_ready=False)
pr = Puller(repl)
ok = wait_until(lambda: len(pr.got) > 0, SESSION_MS / 1000 * 3 + 10, 0.05)
time.sleep(3.0)  # both pulled side by side: the holder must stay silent
ph.stop()
pr.stop()
check(ok, "the replacement serves once the holder's session expired:\n" + repl.log_text()[-1500:])
hold_ids, repl_ids = ph.ids(), pr.ids()
last_hold_t = max((t for t, _ in ph.got), default=cut)
first_repl_t = min((t for t, _ in pr.got), default=float("inf"))
log("partition: holder issued %d IDs, the last %.0f ms after the cut; the replacement's first "
    "ID %.0f ms after the cut, %.0f ms after the holder's last"
    % (len(hold_ids), (last_hold_t - cut) * 1000, (first_repl_t - cut) * 1000,
       (first_repl_t - last_hold_t) * 1000))
dups = len(hold_ids) + len(repl_ids) - len(set(hold_ids) | set(repl_ids))
check(dups == 0, "no ID issued twice across the partition (%d)" % dups)
check(not repl_ids or not hold_ids or min(repl_ids) > max(hold_ids),
      "the replacement's IDs are all above the holder's")
check(first_repl_t > last_hold_t, "the replacement's first ID came after the holder's last")
check(last_hold_t - cut <= 5.0 + 1.0, "the holder stopped within reserve.ms (5 s) of the cut "
      "(%.2f s)" % (last_hold_t - cut))
check(worker_of(repl) == w0, "the replacement is leafd-0's worker ID")
check("leafd-0" in holder.log_text(), "the holder's log names its identity")
proxy.heal()
# Healed, the holder finds the name taken by another session: it stops, naming it.
holder_rc = holder.wait_exit(SESSION_MS / 1000 * 2 + 10)
log("holder after the heal: exit %s" % holder_rc)
check(holder_rc is not None and holder_rc != 0 or holder.get("/ready")[0] == 503,
      "the healed holder does not serve the name again:\n" + holder.log_text()[-1500:])
if holder_rc is None:
    holder.stop()
proxy.close()
check(repl.stop() == 0, "the replacement stops gracefully")
env.finish()
