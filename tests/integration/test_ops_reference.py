"""The generated references are what the binary prints.

docs/reference/ (and any page under docs/) holds blocks between
`<!-- generated: leafd --print-reference KIND -->` and `<!-- end generated -->`. For every kind
`leafd --print-reference list` names, each block must be exactly what `leafd --print-reference
KIND` prints, and at least one block of that kind must exist; a difference fails naming the file
and the command that rewrites it (tools/gen-reference BUILD_DIR). The option itself: `list`
exits 0, an unknown kind exits 2 naming the kinds. And every relative link of README.md and
docs/ resolves, anchors included (tools/check-doc-links).
"""
import os
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
gen = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen-reference"), "--check", build_dir],
                     capture_output=True, text=True)
check(gen.returncode == 0, "the committed references are what the binary prints:\n%s" % gen.stderr)
links = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "check-doc-links")],
                       capture_output=True, text=True)
check(links.returncode == 0, "every relative link of README.md and docs/ resolves:\n%s" % links.stdout)
print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
raise SystemExit(1 if _checks["failed"] else 0)
