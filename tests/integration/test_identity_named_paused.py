"""A named identity's time bound (docs/IDENTITY.md, "Named identity"): a holder paused past its
session timeout issues nothing when it resumes, even with a reservation that would still allow it.

The holder of leafd-0 runs with leafd.snowflake.reserve.ms (8 s) above its session timeout (4 s),
so the reservation ZooKeeper acknowledged alone would let it issue for seconds after its session
could have expired. It is paused (SIGSTOP) while a replacement starts and takes the name once
the session expired. Resumed (SIGCONT) 6 s after the pause, the holder must answer 503 at once:
it stops issuing a session timeout after the last request ZooKeeper answered, measured on the
monotonic clock, which ran on while it was paused. No ID is issued twice, the replacement's are
all above the holder's, and the holder, finding the name taken, exits 1.
"""
import os
import signal
import time

from leafdtest import Env, check, log, wait_until
from identityhelpers import Puller, named, worker_of

SESSION_MS = 4000
PAUSE_S = 6.0

env = Env()
zk = env.zookeeper()


def props(name, ip, sub):
    p = named(zk.address(), name, ip, os.path.join(env.dir, sub), session_ms=SESSION_MS)
    p["leafd.snowflake.reserve.ms"] = "8000"
    return p


holder = env.leafd("holder", props("leafd-0", "127.0.0.2", "holder"))
w0 = worker_of(holder)
ph = Puller(holder)
time.sleep(1.0)
holder.proc.p.send_signal(signal.SIGSTOP)
paused = time.time()
repl = env.leafd("repl", props("leafd-0", "127.0.0.3", "repl"), wait_ready=False)
pr = Puller(repl)
served = wait_until(lambda: len(pr.got) > 0, PAUSE_S + 10, 0.05)
time.sleep(max(0.0, PAUSE_S - (time.time() - paused)))
holder.proc.p.send_signal(signal.SIGCONT)
resumed = time.time()
time.sleep(2.0)
ph.stop()
pr.stop()
after = [ids for t, ids in ph.got if t >= resumed]
log("paused holder: %d IDs before the pause, %d answers after the resume; replacement first ID "
    "%.0f ms after the pause"
    % (sum(len(ids) for t, ids in ph.got if t < paused), len(after),
       (min((t for t, _ in pr.got), default=float("inf")) - paused) * 1000))
check(served, "the replacement serves once the paused holder's session expired:\n"
      + repl.log_text()[-1500:])
check(not after, "the resumed holder issued nothing (%d answers with IDs)" % len(after))
hold_ids, repl_ids = ph.ids(), pr.ids()
check(len(set(hold_ids) | set(repl_ids)) == len(hold_ids) + len(repl_ids), "no ID issued twice")
check(not hold_ids or not repl_ids or min(repl_ids) > max(hold_ids),
      "the replacement's IDs are all above the holder's")
check(worker_of(repl) == w0, "the replacement has leafd-0's worker ID %d" % w0)
rc = holder.wait_exit(SESSION_MS / 1000 * 3 + 10)
check(rc == 1, "the resumed holder, finding leafd-0 taken, exits 1 (rc %s):\n%s"
      % (rc, holder.log_text()[-1500:]))
if rc is None:
    holder.stop()
check(repl.stop() == 0, "the replacement stops gracefully")
env.finish()
