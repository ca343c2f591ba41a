"""tools/lint refs fails on a planted dead path citation and a planted dead export.

The lint runs on a copy of the repository's files (tools/lint refs ROOT), which it finds clean;
then one finding at a time is planted in the copy and the lint must fail naming it:
- a repository path that does not exist, cited in a C comment, in a script's comment, in a
  Markdown page of docs/ and in a man page: FILE:LINE and the path (tools/checks/check-doc-links);
- a function a header exports that only a unit test calls (dead), and one that only its own .c
  file calls (file-local): the header, the name and which it is (tools/checks/check-exports);
- a function of the client library's header missing from src/client/exports.txt, and a name of
  that list the header does not declare (tools/checks/check-exports);
- while a function marked as a test seam in its header comment, and a header function with a
  caller in another file of the daemon, pass.
Each planted file is put back before the next, so every failure is that finding's. No binary,
no server: seconds.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from leafdtest import _checks, check  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LINT = os.path.join(ROOT, "tools", "lint")


def tracked():
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True)
    if out.returncode == 0 and out.stdout:
        return [f for f in out.stdout.decode().split("\0") if f]
    found = []  # a source tree without git (an unpacked tarball)
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build") and d != "var"]
        found += [os.path.relpath(os.path.join(top, f), ROOT) for f in files]
    return found


def lint(copy):
    r = subprocess.run([LINT, "refs", copy], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def planted(copy, rel, text, at_end=True):
    """A context: rel of the copy with text appended (or prepended), put back afterwards."""
    path = os.path.join(copy, rel)

    class Plant:
        def __enter__(self):
            with open(path) as f:
                self.before = f.read()
            with open(path, "w") as f:
                f.write(self.before + text if at_end else text + self.before)
            return self.before.count("\n") + 1 if at_end else 1

        def __exit__(self, *exc):
            with open(path, "w") as f:
                f.write(self.before)

    return Plant()


with tempfile.TemporaryDirectory(prefix="leafd-lint-") as copy:
    for rel in tracked():
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src) and not os.path.islink(src):
            os.makedirs(os.path.dirname(os.path.join(copy, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(copy, rel))
    rc, out = lint(copy)
    check(rc == 0 and "refs clean" in out, "the copy of the repository is clean: %d %s" % (rc, out))

    # ---- a dead path citation, wherever a reader meets one ----
    cases = [
        ("src/base/clock.h", "\n/* The clock is read as src/base/clock_gone.c says. */\n",
         "src/base/clock_gone.c"),
        ("tools/checks/gen-reference", "\n# Kinds are listed in docs/reference/no-such-page.md.\n",
         "docs/reference/no-such-page.md"),
        ("docs/OPERATIONS.md", "\nThe probe lives in `tests/integration/test_gone.py`.\n",
         "tests/integration/test_gone.py"),
        ("docs/man/leafd.8", "\n.SH SEE ALSO\nzk/zk_gone.c\n", "zk/zk_gone"),
    ]
    for rel, text, cited in cases:
        with planted(copy, rel, text) as first:
            rc, out = lint(copy)
        line = next((n for n, l in enumerate(text.split("\n")) if cited.split(".")[0] in l), 0)
        where = "%s:%d: %s" % (rel, first + line, cited)
        check(rc == 1 and where in out, "a dead citation in %s fails naming %s: %d %s" % (rel, where, rc, out))
    # A pattern and a path that exists are no findings.
    with planted(copy, "src/base/clock.h", "\n/* As src/base/clock.c and tests/unit/test_*.c. */\n"):
        rc, out = lint(copy)
    check(rc == 0, "an existing path and a pattern pass: %d %s" % (rc, out))

    # ---- a dead export and a file-local one ----
    header = ("\n/* Planted: nothing calls it but a test. */\n"
              "int clock_planted_dead(int x);\n"
              "/* Planted: only clock.c calls it. */\n"
              "int clock_planted_local(int x);\n"
              "/* Planted: only the tests need it, a test seam (they have no file to read). */\n"
              "int clock_planted_seam(int x);\n"
              "/* Planted: file.c calls it. */\n"
              "int clock_planted_used(int x);\n")
    source = ("\nint clock_planted_dead(int x) {\n    return x;\n}\n"
              "int clock_planted_local(int x) {\n    return x + 1;\n}\n"
              "int clock_planted_seam(int x) {\n    return clock_planted_local(x);\n}\n"
              "int clock_planted_used(int x) {\n    return x + 2;\n}\n")
    caller = "\nint file_planted_caller(void) {\n    return clock_planted_used(1);\n}\n"
    test = "\nint test_planted(void) {\n    return clock_planted_dead(1) + clock_planted_seam(2);\n}\n"
    with planted(copy, "src/base/clock.h", header), planted(copy, "src/base/clock.c", source), \
            planted(copy, "src/base/file.c", caller), planted(copy, "tests/unit/test_base.c", test):
        rc, out = lint(copy)
    check(rc == 1, "a planted dead export fails the lint: %d %s" % (rc, out))
    check("clock_planted_dead (dead" in out, "the dead export is named as dead: %s" % out)
    check("clock_planted_local (file-local: only src/base/clock.c" in out,
          "the file-local export is named as file-local: %s" % out)
    check("clock_planted_seam" not in out and "clock_planted_used" not in out,
          "a marked test seam and a function another file calls pass: %s" % out)
    check(any(l.startswith("src/base/clock.h:") and "clock_planted_dead" in l for l in out.splitlines()),
          "a finding names the header and line: %s" % out)
    # A comment or a string that names a function is no call.
    with planted(copy, "src/base/clock.h", header), planted(copy, "src/base/clock.c", source), \
            planted(copy, "src/base/file.c", caller + "/* clock_planted_dead() */\n"
                    "static const char *planted_name = \"clock_planted_dead\";\n"):
        rc, out = lint(copy)
    check(rc == 1 and "clock_planted_dead (dead" in out,
          "a mention in a comment or a string is no caller: %d %s" % (rc, out))

    # ---- the client library's ABI: <leafd/client.h> against src/client/exports.txt ----
    with planted(copy, "src/client/include/leafd/client.h",
                 "\nLEAFD_CLIENT_API int leafd_client_planted(void);\n"):
        rc, out = lint(copy)
    check(rc == 1 and "leafd_client_planted exported but not in src/client/exports.txt" in out,
          "a function added to the header only fails the lint: %d %s" % (rc, out))
    with planted(copy, "src/client/exports.txt", "leafd_client_listed_only\n"):
        rc, out = lint(copy)
    check(rc == 1 and "leafd_client_listed_only listed in src/client/exports.txt but not exported"
          in out, "a name in the list only fails the lint: %d %s" % (rc, out))

    rc, out = lint(copy)
    check(rc == 0, "the copy is clean again once the plants are gone: %d %s" % (rc, out))

print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
raise SystemExit(1 if _checks["failed"] else 0)
