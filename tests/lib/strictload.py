"""Strict-mode load through libleafd-client for the strict tests (test_client_strict_*.py):
client processes of tools/benchmarks/bench-strict.c, each writing every call for the order
checker (tests/lib/ordercheck.py), and the checks after a failover: 0 violations, 0 repeats, and
no failed call outside the failover window."""
import json
import os
import subprocess

from leafdtest import check, log
from ordercheck import Histories

LOAD = os.environ.get("STRICT_LOAD_BIN", "")


def start(endpoints, options, threads, seconds, key, hdir, name, extra=()):
    """One client process of threads callers on key for seconds, its calls written to hdir."""
    os.makedirs(hdir, exist_ok=True)
    return subprocess.Popen([LOAD, endpoints, options, str(threads), str(seconds), key,
                             "--history", hdir, "--process", name] + list(extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(procs, seconds):
    """Waits for the processes; each ends cleanly and took IDs. Their summaries (JSON)."""
    out = []
    for i, p in enumerate(procs):
        text, err = p.communicate(timeout=seconds + 60)
        check(p.returncode == 0, "process p%d ended cleanly: rc %s %s" % (i, p.returncode,
                                                                         err[-500:]))
        log("p%d: %s" % (i, text.strip()))
        s = json.loads(text.splitlines()[-1]) if text.strip() else {}
        check(s.get("calls", 0) > s.get("failed", 0), "p%d took IDs" % i)
        out.append(s)
    return out


def check_history(hdir, t_kill, t_taken, min_keys=1):
    """The calls of hdir through the order checker, and each failed call inside the failover
    window [t_kill, t_taken] (CLOCK_MONOTONIC ns); calls served after the takeover."""
    h = Histories().load(hdir)
    bad, text = h.report(20)
    log(text)
    check(not bad, "0 violations and 0 repeats")
    check(len(h.keys) >= min_keys, "%d keys called" % len(h.keys))
    ok = sum(len(kl.start) for kl in h.keys.values())
    fails = [(start, end, who, why) for kl in h.keys.values() for who, start, end, why in kl.failed]
    outside = [f for f in fails if f[1] < t_kill or f[0] > t_taken]
    after = sum(1 for kl in h.keys.values() for s in kl.start if s > t_taken)
    log("calls: %d served, %d failed, %d of them outside the failover window; %d served after "
        "the takeover" % (ok, len(fails), len(outside), after))
    check(not outside, "no call failed outside the failover window: %s" % outside[:5])
    check(after > 0, "calls served after the takeover")
