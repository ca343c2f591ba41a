#!/usr/bin/env python3
"""The end of tools/test's output: one line per failed test with its reason, the slowest ten
tests and the phases' times, read from ctest logs (`ctest --output-on-failure`).

usage: tools/checks/test-report.py [--phase NAME=SECONDS[@BUSY] ...] LOG[=PREFIX] ...
(BUSY: the share of the machine's CPU time in use during the phase, in %, from /proc/stat)

A failed test's reason is the line its own output gives for it: the last line starting with
"FAILED" (leafdtest's Env.finish and tests/chaos print one: the check, and for chaos the seed,
the replay command and the checks that failed), else its first "FAIL: " line, else the last line
ctest printed for it (a timeout, a crash). PREFIX names the build in front of a test's name
(tsan: for tools/checks/tsan's log), so the two suites' tests can be told apart.
"""
import re
import sys

RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(\S.*?)\s+([\d.]+) sec\s*$")
START = re.compile(r"^\s*Start\s+\d+: ")


def one_line(text, cap=400):
    text = " ".join(text.split())
    return text if len(text) <= cap else text[:cap - 3] + "..."


def read_log(path, prefix):
    """[(name, status, seconds, reason or None)] in the order ctest finished them."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    i = 0
    while i < len(lines):
        m = RESULT.match(lines[i])
        if not m:
            i += 1
            continue
        name, status, secs = m.group(1), m.group(2), float(m.group(3))
        block = []
        j = i + 1
        while j < len(lines) and not RESULT.match(lines[j]) and not START.match(lines[j]):
            block.append(lines[j])
            j += 1
        reason = None
        if status != "Passed":
            tagged = [l for l in block if l.startswith("FAILED")]
            fails = [l for l in block if l.startswith("FAIL: ")]
            rest = [l for l in block if l.strip()]
            reason = one_line(tagged[-1] if tagged else fails[0] if fails else
                              (rest[-1] if rest else status))
            reason = "%s: %s" % (status.strip("* "), reason)
        out.append((prefix + name, status, secs, reason))
        i = j
    return out


def main(argv):
    phases = []
    logs = []
    args = iter(argv)
    for a in args:
        if a == "--phase":
            name, _, val = next(args).partition("=")
            secs, _, busy = val.partition("@")
            phases.append((name, float(secs), busy))
        else:
            path, _, prefix = a.partition("=")
            logs.append((path, prefix + ":" if prefix else ""))
    tests = [t for path, prefix in logs for t in read_log(path, prefix)]
    slow = sorted(tests, key=lambda t: -t[2])[:10]
    if slow:
        print("slowest tests: " + ", ".join("%s %.0f s" % (t[0], t[2]) for t in slow))
    if phases:
        total = sum(s for _, s, _ in phases)
        print("phases: " + ", ".join("%s %.0f s (%.0f%%)" % (n, s, 100.0 * s / (total or 1))
                                     for n, s, _ in phases) + " (%.0f s in all)" % total)
        if any(b for _, _, b in phases):
            print("CPU busy (all cores, /proc/stat): " +
                  ", ".join("%s %s%%" % (n, b) for n, _, b in phases if b))
    for name, status, secs, reason in tests:
        if reason:
            print("failed: %s after %.0f s: %s" % (name, secs, reason))


if __name__ == "__main__":
    main(sys.argv[1:])
