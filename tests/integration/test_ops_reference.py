"""The generated references are what the binary prints.

docs/reference/ (and any page under docs/) holds blocks between
`<!-- generated: leafd --print-reference KIND -->` and `<!-- end generated -->`. For every kind
`leafd --print-reference list` names, each block must be exactly what `leafd --print-reference
KIND` prints, and at least one block of that kind must exist; a difference fails naming the file
and the command that rewrites it (tools/checks/gen-reference BUILD_DIR). The option itself: `list`
exits 0, an unknown kind exits 2 naming the kinds. And every relative link of README.md and
docs/ resolves, anchors included, and every repository path they and the man pages cite exists
(tools/checks/check-doc-links).

The man pages are behind no binary: every option of `leafd --help` heads an entry of leafd(8)'s
OPTIONS, and every kind of `--print-reference list` is named in its entry; every command of
`leafctl help` is in leafctl(8)'s SYNOPSIS and heads an entry of its COMMANDS, with each stage
of a `status|open|close` argument.
"""
import os
import re
import shlex
import subprocess
import sys

from leafdtest import LEAFD_BIN, _checks, check

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

kinds = subprocess.run([LEAFD_BIN, "--print-reference", "list"], capture_output=True, text=True)
check(kinds.returncode == 0 and {"config", "metrics"} <= set(kinds.stdout.split()),
      "--print-reference list names config and metrics: %r" % kinds.stdout)
bad = subprocess.run([LEAFD_BIN, "--print-reference", "no-such-kind"], capture_output=True, text=True)
check(bad.returncode == 2 and all(k in bad.stderr for k in kinds.stdout.split()),
      "an unknown kind exits 2 listing the kinds: %d %r" % (bad.returncode, bad.stderr))
for kind in kinds.stdout.split():
    out = subprocess.run([LEAFD_BIN, "--print-reference", kind], capture_output=True, text=True)
    check(out.returncode == 0 and out.stdout.startswith("| "),
          "--print-reference %s prints a Markdown table" % kind)

build_dir = os.path.dirname(os.path.abspath(LEAFD_BIN))
gen = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "checks", "gen-reference"), "--check", build_dir],
                     capture_output=True, text=True)
check(gen.returncode == 0, "the committed references are what the binary prints:\n%s" % gen.stderr)
links = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "checks", "check-doc-links")],
                       capture_output=True, text=True)
check(links.returncode == 0, "every relative link of README.md and docs/ resolves:\n%s" % links.stdout)


def roff_line(line):
    """One roff line as man shows it: font macros' arguments joined, font escapes gone."""
    line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-")
    m = re.match(r"\.(BR|RB|BI|IB|IR|RI|B|I)(?: (.*)|$)", line)
    if not m:
        return line
    if m.group(1) in ("B", "I"):
        return (m.group(2) or "").replace('"', "")
    return "".join(shlex.split(m.group(2) or ""))


def man(name):
    """(synopsis text, {section: [the header line of each .TP/.TQ entry]}) of docs/man/<name>."""
    with open(os.path.join(ROOT, "docs", "man", name)) as f:
        lines = f.read().splitlines()
    section, synopsis, heads = "", [], {}
    for i, line in enumerate(lines):
        if line.startswith(".SH "):
            section = line[4:].strip()
        elif section == "SYNOPSIS" and not line.startswith(".br"):
            synopsis.append(roff_line(line))
        elif line in (".TP", ".TQ") and i + 1 < len(lines):
            heads.setdefault(section, []).append(roff_line(lines[i + 1]))
    return " ".join(synopsis), heads


usage = subprocess.run([LEAFD_BIN, "--help"], capture_output=True, text=True).stdout
_, leafd_heads = man("leafd.8")
options = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-c)\b", usage)) | {"-h", "--help"})
for opt in options:
    check(any(re.search(r"(^|[ ,])%s\b" % re.escape(opt), h) for h in leafd_heads.get("OPTIONS", [])),
          "leafd(8) OPTIONS has an entry for %s (leafd --help names it)" % opt)
with open(os.path.join(ROOT, "docs", "man", "leafd.8")) as f:
    entry = f.read().split(".BI \\-\\-print\\-reference", 1)[-1].split(".TP", 1)[0]
for kind in kinds.stdout.split() + ["list"]:
    check(".B %s\n" % kind in entry, "leafd(8) --print-reference names the kind %s" % kind)

helptext = subprocess.run([os.path.join(ROOT, "tools", "programs", "leafctl"), "help"], capture_output=True,
                          text=True).stdout
commands = helptext.split("commands:\n", 1)[1].split("options:", 1)[0]
synopsis, leafctl_heads = man("leafctl.8")
for line in commands.splitlines():
    if not re.match(r"  [a-z]", line):
        continue  # a continuation
    words = line.split()
    name = " ".join(words[:2]) if words[0] == "user" else words[0]
    check(re.search(r"(^|[ {|])%s\b" % words[0], synopsis) is not None,
          "leafctl(8) SYNOPSIS names %s (leafctl help does)" % words[0])
    heads = [h for h in leafctl_heads.get("COMMANDS", []) if h.startswith(name)]
    check(heads or name == "help", "leafctl(8) COMMANDS has an entry for %s" % name)
    if name != "user" and len(words) > 1 and "|" in words[1]:
        for stage in words[1].split("|"):
            check(any(stage in h for h in heads), "leafctl(8) %s names %s" % (name, stage))
print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
raise SystemExit(1 if _checks["failed"] else 0)
