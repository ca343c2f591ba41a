"""The order checker: strict real-time order and no repeats, per key, over histories of calls.

The promise it checks is docs/cluster.md's for sequences, keyed sequences and business numbers:
an ID returned after another ID of the same key was returned, to anyone by any node, is larger;
gaps are allowed, repeats never. A history is a list of calls; each call is

    process, key, start, end, and either a value (first ID, count) or a failure

with start and end on CLOCK_MONOTONIC in nanoseconds (time.monotonic_ns(); the clock is
system-wide, so the histories of several processes on one machine compare). start is taken
before the request is written, end after the answer is read, so "end(A) < start(B)" proves that
A returned before B began. A call of count n holds the IDs first .. first+n-1, all issued during
the call. A failed call (an error, a timeout) is kept and counted but holds no value: it may or
may not have taken an ID, and the checker assumes neither.

What check() reports, for every key, each with both calls, their processes, times and values:
- order:  call A ended before call B began, yet A holds an ID >= one of B's. For each B the
          call that ended before B began with the largest ID is named (a sweep over the calls
          sorted by start and by end: O(n log n) per key).
- repeat: one ID held by two calls (overlapping in time or not, of any processes): a sweep
          over the calls sorted by first ID.
- range:  one call's IDs do not strictly ascend (only a call given as a list of IDs that are
          not a range can: a business number's call may span two periods).

Recording: History(dir, process) gives each process its own file of JSON lines in dir (so
several processes, e.g. chaos clients, never share a file); calls are thread-safe:

    history = History(dir, "client-3")
    with history.call("sequence:orders") as c:
        c.value = int(get(...))          # or c.values = [...], or c.first, c.count = f, n
    # an exception inside the block records a failure (and goes on up); c.fail("503") too

Histories.load(dir) merges every file of a dir; python3 tests/lib/ordercheck.py DIR... prints
the report and exits 1 on a violation. Histories.add() takes calls without files. A few million
calls are checked in seconds (docs/testing.md, "The order checker").
"""
import json
import os
import sys
import threading
import time
from array import array

class _KeyLog:
    """The calls of one key, column by column (int64 arrays: a few million calls fit)."""

    __slots__ = ("who", "start", "end", "first", "last", "lists", "failed")

    def __init__(self):
        self.who = array("l")  # index into Histories.names
        self.start = array("q")
        self.end = array("q")
        self.first = array("q")
        self.last = array("q")
        self.lists = {}  # row -> the IDs of a call given as a list that is not a range
        self.failed = []  # (who, start, end, why) of the failed calls

    def row(self, i, names):
        ids = self.lists.get(i)
        return Call(names[self.who[i]], self.start[i], self.end[i], self.first[i],
                    self.last[i], ids)


class Call:
    """One successful call, as a violation names it."""

    __slots__ = ("who", "start", "end", "first", "last", "ids")

    def __init__(self, who, start, end, first, last, ids=None):
        self.who, self.start, self.end = who, start, end
        self.first, self.last, self.ids = first, last, ids

    def __str__(self):
        if self.ids is not None:
            held = "IDs %s" % (list(self.ids[:8]) + (["..."] if len(self.ids) > 8 else []),)
        elif self.first == self.last:
            held = "ID %d" % self.first
        else:
            held = "IDs %d..%d" % (self.first, self.last)
        return "%s [%d ns .. %d ns] %s" % (self.who, self.start, self.end, held)


class Violation:
    """kind (order, repeat, range), the key, call a and call b (None for range)."""

    __slots__ = ("kind", "key", "a", "b", "value")

    def __init__(self, kind, key, a, b=None, value=None):
        self.kind, self.key, self.a, self.b, self.value = kind, key, a, b, value

    def __str__(self):
        if self.kind == "order":
            return ("order: key %r: %s ended %d ns before %s began, yet holds %d >= %d"
                    % (self.key, self.a, self.b.start - self.a.end, self.b, self.a.last,
                       self.b.first))
        if self.kind == "repeat":
            return "repeat: key %r: ID %d held by %s and by %s" % (self.key, self.value,
                                                                    self.a, self.b)
        return "range: key %r: the IDs of one call do not strictly ascend: %s" % (
            self.key, self.a)

    __repr__ = __str__


class Histories:
    """The calls of many processes, by key. Not thread-safe: fill it, then check it."""

    def __init__(self):
        self.keys = {}
        self.names = []
        self._name_ix = {}

    def _who(self, name):
        ix = self._name_ix.get(name)
        if ix is None:
            ix = self._name_ix[name] = len(self.names)
            self.names.append(name)
        return ix

    def _log(self, key):
        kl = self.keys.get(key)
        if kl is None:
            kl = self.keys[key] = _KeyLog()
        return kl

    def add(self, who, key, start, end, first=None, count=1, ids=None, error=None):
        """One call: first and count (a range), or ids (a list), or error (a failure)."""
        kl = self._log(key)
        if error is not None or (first is None and not ids) or (ids is None and count < 1):
            kl.failed.append((who, start, end, error or "no value"))
            return
        if ids is not None:
            ids = list(ids)
            if all(b == a + 1 for a, b in zip(ids, ids[1:])):
                first, count, ids = ids[0], len(ids), None
        kl.who.append(self._who(who))
        kl.start.append(start)
        kl.end.append(end)
        if ids is None:
            kl.first.append(first)
            kl.last.append(first + count - 1)
        else:
            kl.lists[len(kl.first)] = ids
            kl.first.append(min(ids))
            kl.last.append(max(ids))

    def load(self, *paths):
        """Adds the calls of every history file in paths (files or dirs of *.jsonl)."""
        for path in paths:
            files = [path] if os.path.isfile(path) else sorted(
                os.path.join(path, f) for f in os.listdir(path) if f.endswith(".jsonl"))
            for f in files:
                self._load_file(f)
        return self

    def _load_file(self, path):
        with open(path, encoding="utf-8") as fh:
            head = json.loads(fh.readline() or "{}")
            process = head.get("process", os.path.basename(path))
            names = {}
            for line in fh:
                if not line.endswith("\n"):
                    break  # the last line of a process killed while writing it
                key, start, end, first, n, who = json.loads(line)
                name = names.get(who)
                if name is None:
                    name = names[who] = "%s/%s" % (process, who) if who else process
                if first is None:
                    self.add(name, key, start, end, error=n)
                elif isinstance(first, list):
                    self.add(name, key, start, end, ids=first)
                else:
                    self.add(name, key, start, end, first, n)

    def counts(self):
        """(calls that returned IDs, failed calls, IDs) over all keys."""
        ok = sum(len(k.first) for k in self.keys.values())
        failed = sum(len(k.failed) for k in self.keys.values())
        ids = sum(sum(k.last) - sum(k.first) + len(k.first) for k in self.keys.values())
        ids -= sum(max(x) - min(x) + 1 - len(x) for k in self.keys.values()
                   for x in k.lists.values())
        return ok, failed, ids

    def check(self, limit=None):
        """Every violation of every key (the first `limit` when given), as Violations."""
        out = []
        for key, kl in self.keys.items():
            _check_key(key, kl, self.names, out, limit)
            if limit is not None and len(out) >= limit:
                return out[:limit]
        return out

    def report(self, limit=20):
        """(violations, text): a summary line, then each violation (up to limit printed)."""
        bad = self.check()
        ok, failed, ids = self.counts()
        lines = ["order check: %d keys, %d calls with IDs (%d IDs), %d failed calls, "
                 "%d violations" % (len(self.keys), ok, ids, failed, len(bad))]
        lines += ["  " + str(v) for v in bad[:limit]]
        if len(bad) > limit:
            lines.append("  ... and %d more" % (len(bad) - limit))
        return bad, "\n".join(lines)


def _check_key(key, kl, names, out, limit):
    for i in kl.lists:
        ids = kl.lists[i]
        if any(b <= a for a, b in zip(ids, ids[1:])):
            out.append(Violation("range", key, kl.row(i, names)))
    _check_repeats(key, kl, names, out, limit)
    _check_order(key, kl, names, out, limit)


def _full(out, limit):
    return limit is not None and len(out) >= limit


def _check_repeats(key, kl, names, out, limit):
    """Sorted by first ID, a call whose first ID is at most the highest ID seen so far shares
    that ID with the call holding it. A run of calls whose spans overlap (none, in a correct
    history) and that holds a call given as a list is compared ID by ID instead."""
    first, last = kl.first, kl.last
    top, holder = None, -1
    run, found, has_list = [], [], False
    for b in sorted(range(len(first)), key=first.__getitem__):
        if top is None or first[b] > top:
            _end_run(key, kl, names, out, run, found, has_list)
            run, found, has_list = [], [], False
        elif not has_list and b not in kl.lists:
            found.append((holder, b, first[b]))
        run.append(b)
        has_list = has_list or b in kl.lists
        if top is None or last[b] > top:
            top, holder = last[b], b
        if _full(out, limit):
            return
    _end_run(key, kl, names, out, run, found, has_list)


def _end_run(key, kl, names, out, run, found, has_list):
    if has_list:
        found, seen = [], {}
        for b in run:
            ids = kl.lists.get(b) or range(kl.first[b], kl.last[b] + 1)
            hit = next((x for x in ids if x in seen), None)
            if hit is not None:
                found.append((seen[hit], b, hit))
            for x in ids:
                seen.setdefault(x, b)
    for a, b, value in found:
        out.append(Violation("repeat", key, kl.row(a, names), kl.row(b, names), value))


def _check_order(key, kl, names, out, limit):
    """For each call b, by start: the call with the largest ID among those that ended before b
    began must hold less than b's smallest ID."""
    start, end, first, last = kl.start, kl.end, kl.first, kl.last
    n = len(first)
    by_end = sorted(range(n), key=end.__getitem__)
    j, best, top = 0, -1, None
    for b in sorted(range(n), key=start.__getitem__):
        s = start[b]
        while j < n and end[by_end[j]] < s:
            a = by_end[j]
            if top is None or last[a] > top:
                top, best = last[a], a
            j += 1
        if top is not None and top >= first[b]:
            out.append(Violation("order", key, kl.row(best, names), kl.row(b, names)))
            if _full(out, limit):
                return


# ---- recording ----------------------------------------------------------------

class _Pending:
    """One call being made: set value, values, or first and count; or call fail(why)."""

    __slots__ = ("key", "start", "who", "first", "count", "ids", "error")

    def __init__(self, key, who):
        self.key, self.who = key, who
        self.first, self.count, self.ids, self.error = None, 1, None, None
        self.start = time.monotonic_ns()

    @property
    def value(self):
        return self.first

    @value.setter
    def value(self, v):
        self.first, self.count = int(v), 1

    @property
    def values(self):
        return self.ids

    @values.setter
    def values(self, vs):
        vs = [int(v) for v in vs]
        if vs and all(b == a + 1 for a, b in zip(vs, vs[1:])):
            self.first, self.count = vs[0], len(vs)
        else:
            self.ids = vs

    def fail(self, why):
        self.error = str(why)[:200]


class History:
    """One process's history file in dir (created): <process>-<pid>.jsonl, JSON lines.

    The first line is {"process": .., "pid": ..}; then one line per call:
    [key, start_ns, end_ns, first, count, who] for IDs first..first+count-1,
    [key, start_ns, end_ns, [ids..], null, who] for IDs that are not a range, and
    [key, start_ns, end_ns, null, why, who] for a failure. who is the thread's name unless
    call() names it. Each line is one write(2) to a file opened O_APPEND, under a lock: nothing
    waits in a buffer, so a process killed with -9 loses no call it finished, and a child of
    fork() (which buffers nothing of its parent's) opens a file of its own at its first call."""

    def __init__(self, dir, process=None):
        os.makedirs(dir, exist_ok=True)
        self.dir = dir
        self.process = process or "p%d" % os.getpid()
        self._texts = {}
        self._fd = None
        self._open()

    def _open(self):
        """This process's file: <process>-<pid>.jsonl, with its header line."""
        self._pid = os.getpid()
        self._lock = threading.Lock()  # a child of fork() may inherit a held one
        self.path = os.path.join(self.dir, "%s-%d.jsonl" % (self.process, self._pid))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(self._fd, (json.dumps({"process": self.process, "pid": self._pid}) + "\n")
                 .encode())

    def _text(self, s):
        """s as a JSON string, from a cache (a dict's get and set are atomic)."""
        t = self._texts.get(s)
        if t is None:
            t = json.dumps(s)
            if len(self._texts) < 100000:
                self._texts[s] = t
        return t

    def call(self, key, who=None):
        return _CallContext(self, key, who)

    def record(self, key, start, end, first=None, count=1, ids=None, error=None, who=None):
        """One call already made (times from time.monotonic_ns())."""
        who = who if who is not None else threading.current_thread().name
        ids = list(ids) if ids is not None else None
        if ids and all(b == a + 1 for a, b in zip(ids, ids[1:])):
            first, count, ids = ids[0], len(ids), None
        if error is not None or (first is None and not ids):
            line = json.dumps([key, start, end, None, error or "no value", who]) + "\n"
        elif ids is not None:
            line = json.dumps([key, start, end, list(ids), None, who]) + "\n"
        else:  # the common case, a few microseconds: keys and names repeat, numbers are ints
            line = "[%s,%d,%d,%d,%d,%s]\n" % (self._text(key), start, end, first, count,
                                               self._text(who))
        if self._pid != os.getpid():  # a child of fork(): its own file
            os.close(self._fd)
            self._open()
        with self._lock:
            if self._fd is None:
                raise ValueError("history %s is closed" % self.path)
            os.write(self._fd, line.encode())

    def record_numbers(self, numbering, prefix, width, start, end, numbers=None, error=None,
                       who=None):
        """One call for business numbers (docs/id-shapes.md, "Business numbers"): text made
        of the prefix, the period's date and a counter of `width` digits that restarts at 1
        each period. Order is promised within a period, so each period is a key of its own,
        numbering:<name>:<date>, whose values are the counters; a call whose numbers span two
        periods is one call of each key. A failure is kept under numbering:<name>."""
        if error is not None or not numbers:
            self.record("numbering:%s" % numbering, start, end, error=error or "no value",
                        who=who)
            return
        by_period = {}
        for n in numbers:
            if not n.startswith(prefix) or not n[-width:].isdigit():
                raise ValueError("%r is not a number of %s (prefix %r, width %d)"
                                 % (n, numbering, prefix, width))
            by_period.setdefault(n[len(prefix):-width], []).append(int(n[-width:]))
        for period, counters in by_period.items():
            self.record("numbering:%s:%s" % (numbering, period), start, end, ids=counters,
                        who=who)

    def close(self):
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _CallContext:
    def __init__(self, history, key, who):
        self.history, self.pending = history, _Pending(key, who)

    def __enter__(self):
        self.pending.start = time.monotonic_ns()
        return self.pending

    def __exit__(self, etype, exc, tb):
        end = time.monotonic_ns()
        p = self.pending
        error = p.error
        if etype is not None:
            error = "%s: %s" % (etype.__name__, exc)
        self.history.record(p.key, p.start, end, p.first, p.count, p.ids, error, p.who)
        return False


def verify(*paths, limit=20):
    """(True when no violation, the report): the histories of every process in paths."""
    bad, text = Histories().load(*paths).report(limit)
    return not bad, text


def check_dirs(*paths, limit=20, out=sys.stdout):
    """Loads, checks and prints; returns the violations."""
    t0 = time.monotonic()
    h = Histories().load(*paths)
    bad, text = h.report(limit)
    print("%s (%.1f s)" % (text, time.monotonic() - t0), file=out)
    return bad


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: ordercheck.py DIR_OR_FILE...  (history files: tests/lib/ordercheck.py)",
              file=sys.stderr)
        sys.exit(2)
    sys.exit(1 if check_dirs(*sys.argv[1:]) else 0)
