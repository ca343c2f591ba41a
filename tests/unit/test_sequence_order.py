"""The order checker (tests/lib/ordercheck.py) on its own, without leafd: planted violations
of every kind are found and printed with both calls (a repeat between overlapping calls, one
across processes, a call that returned after another began yet holds a smaller ID, a value
out of order across processes, overlapping ranges, a range that does not ascend, one stale ID
among 1,000,000 good calls, in seconds); good histories pass (concurrent calls in any order
among themselves, failed calls that may or may not have taken an ID); histories recorded by
threads of forked processes through History merge. A few seconds (docs/testing.md, "The
order checker")."""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from leafdtest import _checks, check, log
from ordercheck import Histories, History

MS = 1000000  # ns
LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")


def hist(*calls):
    """Histories from (who, key, start ms, end ms, first, count) or (.., None, "why") tuples."""
    h = Histories()
    for who, key, s, e, first, n in calls:
        if first is None:
            h.add(who, key, s * MS, e * MS, error=n)
        elif isinstance(first, list):
            h.add(who, key, s * MS, e * MS, ids=first)
        else:
            h.add(who, key, s * MS, e * MS, first, n)
    return h


def kinds(h):
    return sorted(v.kind for v in h.check())


def printed(h, *words):
    """True when the report names every word (the calls' processes, times, values)."""
    bad, text = h.report()
    log(text)
    return all(w in text for w in words)


# ---- good histories -------------------------------------------------------------
good = hist(("a", "k", 0, 10, 1, 2), ("b", "k", 5, 15, 3, 1), ("a", "k", 11, 12, 4, 1),
            ("c", "k", 2, 30, 5, 1),  # concurrent with everything: any order among them
            ("b", "k", 16, 17, 10, 2),  # a gap is allowed
            ("d", "k", 20, 21, 13, 1), ("d", "k", 21, 22, 12, 1))  # ended the ns the next began
check(kinds(good) == [], "concurrent calls in any order among themselves pass: %s" % good.check())
keys = hist(("a", "x", 0, 1, 5, 1), ("a", "y", 2, 3, 1, 1), ("b", "y", 4, 5, 5, 1))
check(kinds(keys) == [], "each key is its own sequence: a smaller ID of another key is fine")
failed = hist(("a", "k", 0, 10, 5, 1), ("b", "k", 11, 12, None, "timeout"),
              ("b", "k", 13, 14, 6, 1), ("c", "k", 1, 2, None, "503 no_primary"))
check(kinds(failed) == [] and failed.counts() == (2, 2, 2),
      "failed calls are kept and counted, never values: %s %s" % (failed.check(), failed.counts()))

# ---- planted violations ---------------------------------------------------------
h = hist(("a", "k", 0, 10, 7, 1), ("b", "k", 5, 15, 7, 1))
check(kinds(h) == ["repeat"], "a repeat between overlapping calls: %s" % kinds(h))
check(printed(h, "repeat", "ID 7", "a [0 ns .. 10000000 ns]", "b [5000000 ns .. 15000000 ns]"),
      "the repeat is printed with both calls, their times and the value")

h = hist(("p1/t0", "k", 0, 1, 3, 1), ("p1/t0", "k", 2, 3, 4, 1), ("p2/t0", "k", 2, 3, 3, 1))
check("repeat" in kinds(h), "a repeat across processes: %s" % kinds(h))

h = hist(("a", "k", 0, 10, 9, 1), ("b", "k", 11, 12, 8, 1))
check(kinds(h) == ["order"], "A ended before B began, A's ID > B's: %s" % kinds(h))
check(printed(h, "order", "a [0 ns .. 10000000 ns] ID 9", "b [11000000 ns .. 12000000 ns] ID 8",
              "ended 1000000 ns before"), "the order violation is printed with both calls")

h = hist(("a", "k", 0, 10, 9, 1), ("b", "k", 10, 12, 8, 1))
check(kinds(h) == [], "B began the same ns A ended: concurrent, no order between them")

h = hist(("a", "k", 0, 10, 9, 1), ("b", "k", 10, 20, 20, 1), ("a", "k", 11, 12, 10, 1),
         ("b", "k", 21, 22, 15, 1))
v = h.check()
check([x.kind for x in v] == ["order"] and v[0].a.who == "b" and v[0].b.last == 15,
      "the pair names the call with the largest ID that ended before: %s" % [str(x) for x in v])

# one value out of order across processes, through History files of two forked processes
tmp = tempfile.mkdtemp(prefix="ordercheck-")
try:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # process one: an ID, then tells the parent it has returned
        with History(tmp, "one") as hs:
            with hs.call("sequence:s") as c:
                c.value = 100
        os.write(w, b"x")
        os._exit(0)
    os.read(r, 1)
    os.waitpid(pid, 0)
    with History(tmp, "two") as hs:  # began after process one's call returned
        with hs.call("sequence:s") as c:
            c.value = 50
    h = Histories().load(tmp)
    v = h.check()
    check([x.kind for x in v] == ["order"] and v[0].a.who.startswith("one/") and
          v[0].b.who.startswith("two/") and v[0].a.first == 100 and v[0].b.first == 50,
          "a value out of order across processes: %s" % [str(x) for x in v])
    check(printed(h, "one/MainThread", "two/MainThread", "ID 100", "ID 50"),
          "printed with both processes")
    cli = subprocess.run([sys.executable, os.path.join(LIB, "ordercheck.py"), tmp],
                         capture_output=True, text=True, timeout=60)
    check(cli.returncode == 1 and "1 violations" in cli.stdout and "order: key" in cli.stdout,
          "python3 tests/lib/ordercheck.py DIR prints it and exits 1: %d %s"
          % (cli.returncode, cli.stdout))
finally:
    shutil.rmtree(tmp)

h = hist(("a", "k", 0, 10, 1, 10), ("b", "k", 5, 15, 5, 1))
check(kinds(h) == ["repeat"] and h.check()[0].value == 5,
      "a range 1..10 and a concurrent 5: the repeat of 5 is found: %s" % [str(x) for x in h.check()])
h = hist(("a", "k", 0, 10, 1, 10), ("b", "k", 11, 15, 8, 5))
check(kinds(h) == ["order", "repeat"], "a range 8..12 after a range 1..10: %s" % kinds(h))
check(printed(h, "IDs 1..10", "IDs 8..12", "holds 10 >= 8"), "ranges are printed as ranges")
h = hist(("a", "k", 0, 10, 1, 10), ("b", "k", 11, 15, 11, 5), ("c", "k", 3, 20, 20, 3))
check(kinds(h) == [], "ranges 1..10, then 11..15, and a concurrent 20..22 pass")
h = hist(("a", "k", 0, 10, [1, 3, 5], None), ("b", "k", 2, 9, [2, 4], None))
check(kinds(h) == [], "interleaved lists of IDs that share none pass: %s" % kinds(h))
h = hist(("a", "k", 0, 10, [1, 3, 5], None), ("b", "k", 2, 9, [2, 5], None))
check(kinds(h) == ["repeat"] and h.check()[0].value == 5, "lists sharing an ID: %s" % kinds(h))
h = hist(("a", "k", 0, 1, [1, 5], None), ("b", "k", 0, 1, 3, 1), ("c", "k", 0, 3, 2, 3))
v = h.check()
check([(x.kind, x.value) for x in v] == [("repeat", 3)] and {v[0].a.who, v[0].b.who} == {"b", "c"},
      "a repeat between two ranges inside a list's span: %s" % v)
h = hist(("a", "k", 0, 10, [5, 3], None))
check(kinds(h) == ["range"], "a call whose IDs do not ascend: %s" % kinds(h))

# a History made before fork(): the child writes a file of its own, the parent's is whole
tmp = tempfile.mkdtemp(prefix="ordercheck-")
try:
    hs = History(tmp, "forked")
    with hs.call("sequence:f") as c:
        c.value = 1
    pid = os.fork()
    if pid == 0:
        with hs.call("sequence:f") as c:
            c.value = 2
        os._exit(0)
    os.waitpid(pid, 0)
    with hs.call("sequence:f") as c:
        c.value = 3
    hs.close()
    files = sorted(os.listdir(tmp))
    lines = {f: len(open(os.path.join(tmp, f)).readlines()) for f in files}
    h = Histories().load(tmp)
    check(files == sorted(["forked-%d.jsonl" % os.getpid(), "forked-%d.jsonl" % pid]) and
          lines["forked-%d.jsonl" % pid] == 2 and h.counts() == (3, 0, 3) and h.check() == [],
          "a child of fork() writes its own file, nothing of its parent's twice: %s %s"
          % (lines, h.counts()))
finally:
    shutil.rmtree(tmp)

# ---- business numbers: each period a key of its counters ------------------------------
tmp = tempfile.mkdtemp(prefix="ordercheck-")
try:
    with History(tmp, "nums") as hs:
        t = time.monotonic_ns()
        hs.record_numbers("W", "W", 4, t, t + 1, ["W202612089998", "W202612089999",
                                                  "W202612090001"])  # spans midnight: fine
        hs.record_numbers("W", "W", 4, t + 2, t + 3, ["W202612090002"])
        hs.record_numbers("W", "W", 4, t + 4, t + 5, error="503 numbering_exhausted")
        hs.record_numbers("W", "W", 4, t + 6, t + 7, ["W202612090002"])  # again: planted
    h = Histories().load(tmp)
    v = h.check()
    check(sorted(h.keys) == ["numbering:W", "numbering:W:20261208", "numbering:W:20261209"] and
          sorted(x.kind for x in v) == ["order", "repeat"] and
          all(x.key == "numbering:W:20261209" and x.b.first == 2 for x in v),
          "numbers: a new period starts at 1, a number given twice is found: %s" % v)
finally:
    shutil.rmtree(tmp)

# ---- threads of forked processes, recorded through History, merged ------------------
tmp = tempfile.mkdtemp(prefix="ordercheck-")
try:
    lock, counter = threading.Lock(), [0]

    def worker(hs, n):
        for _ in range(n):
            with hs.call("keyed:s:a") as c:
                with lock:
                    counter[0] += 1
                    c.value = counter[0]

    pids = []
    for p in range(3):
        pid = os.fork()
        if pid == 0:
            counter[0] = p * 1000000  # each process its own range: no order among processes
            with History(tmp, "proc%d" % p) as hs:
                ts = [threading.Thread(target=worker, args=(hs, 500), name="t%d" % i)
                      for i in range(4)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                try:
                    with hs.call("keyed:s:a"):
                        raise TimeoutError("planted")
                except TimeoutError:
                    pass
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        check(os.waitpid(pid, 0)[1] == 0, "a recording process exits 0")
    h = Histories().load(tmp)
    check(h.counts() == (6000, 3, 6000), "3 processes x 4 threads x 500 calls and 3 failures "
          "merged from %d files: %s" % (len(os.listdir(tmp)), h.counts()))
    v = h.check(limit=5)
    # The processes overlap in time with values far apart: some process's early call ended
    # before another's late call began, holding more.
    check(v and all(x.kind == "order" for x in v), "three processes' own counters are out of "
          "order among themselves: %s" % [str(x) for x in v[:2]])
    one = Histories().load(os.path.join(tmp, [f for f in os.listdir(tmp) if f.startswith("proc1")][0]))
    check(one.check() == [] and one.counts() == (2000, 1, 2000),
          "one process's threads taking from one counter under a lock pass: %s" % one.check()[:2])
finally:
    shutil.rmtree(tmp)

# ---- one stale ID among 1,000,000 good calls ----------------------------------------
random.seed(7)
N = 1000000
h = Histories()
t, nxt = 10 ** 12, {}
key_names = ["keyed:chat:%d" % i for i in range(1000)]
rows = []
for i in range(N):
    t += 50000  # a call every 50 us, issued at t; it began up to 2 ms before, ended 0.1 ms after
    key = key_names[i % 997] if i % 3 else "sequence:big"
    v = nxt.get(key, 1)
    n = 1 if i % 11 else 5
    nxt[key] = v + n + (i % 7 == 0)
    rows.append(("c%d" % (i % 16), key, t - random.randrange(2000000), t + 100000, v, n))
late = next(i for i in range(600000, 600100) if rows[i][1] == "sequence:big")
early = next(i for i in range(500000, 500100) if rows[i][1] == "sequence:big")
w_, k_, s_, e_, _, _ = rows[late]
rows[late] = (w_, k_, s_, e_, rows[early][4], 1)  # hands out an ID issued 5 s earlier
for r in rows:
    h.add(*r)
t0 = time.monotonic()
v = h.check()
took = time.monotonic() - t0
log("1,000,000 calls over 998 keys checked in %.2f s: %s" % (took, [str(x) for x in v]))
check(sorted(x.kind for x in v) == ["order", "repeat"] and all(x.key == "sequence:big" for x in v)
      and any(x.b is not None and x.b.start == s_ for x in v),
      "the stale ID among 1,000,000 calls is found as an order violation and a repeat")
check(took < 20, "1,000,000 calls checked in seconds (%.2f s)" % took)

print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
if _checks["failed"]:
    print("FAILED: %s" % " ".join(_checks["first"].split())[:300], flush=True)
sys.exit(1 if _checks["failed"] else 0)
