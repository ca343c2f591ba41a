"""Builds a previous leafd release from the repository's git history, for the upgrade tests.

    from releasebuild import release_binary, SKIP
    old = release_binary("6ac706c")      # path to that commit's leafd (Release, no sanitizers)

The tree of the commit is exported with `git archive` into a cache folder next to the test
build (LEAFD_BIN's folder: {build}/release-cache/{full commit}/), built there once with a plain
Release configuration, and reused by every later run (the folder is keyed by the commit; a
finished build leaves a `built` marker). A flock on the folder's lock file keeps two tests from
building it at once. UPGRADE_RELEASE_CACHE names another cache folder.

A repository without that history (a shallow clone, or no git at all) cannot build it: the
function prints why and exits with SKIP (77, the tests' SKIP_RETURN_CODE). CI clones fully.
"""
import fcntl
import os
import shutil
import subprocess
import sys
import time

from leafdtest import LEAFD_BIN, log

SKIP = 77
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _git(*args):
    return subprocess.run(["git", "-C", REPO] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def _skip(why):
    print("SKIP: %s" % why)
    sys.stdout.flush()
    sys.exit(SKIP)


def release_commit(commit):
    """The full hash of commit, or a skip naming why the history lacks it."""
    if _git("rev-parse", "--git-dir").returncode != 0:
        _skip("%s is not a git repository: the previous release cannot be built from history" % REPO)
    full = _git("rev-parse", "--verify", "--quiet", commit + "^{commit}")
    if full.returncode != 0:
        shallow = _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        _skip("commit %s is not in this repository%s; the upgrade test builds the previous "
              "release from git history (clone without --depth)" %
              (commit, " (a shallow clone)" if shallow else ""))
    return full.stdout.strip()


def release_binary(commit, timeout=900):
    """Path to the leafd binary of commit, built (once) from git history."""
    full = release_commit(commit)
    cache = os.environ.get("UPGRADE_RELEASE_CACHE") or os.path.join(
        os.path.dirname(os.path.abspath(LEAFD_BIN)), "release-cache")
    top = os.path.join(cache, full)
    binary = os.path.join(top, "build", "leafd")
    marker = os.path.join(top, "built")
    os.makedirs(top, exist_ok=True)
    with open(os.path.join(top, "lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if os.path.exists(marker) and os.access(binary, os.X_OK):
            log("release %s: reusing %s" % (commit, binary))
            return binary
        src = os.path.join(top, "src")
        build = os.path.join(top, "build")
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(build, ignore_errors=True)
        os.makedirs(src)
        t0 = time.time()
        arch = subprocess.Popen(["git", "-C", REPO, "archive", "--format=tar", full],
                                stdout=subprocess.PIPE)
        untar = subprocess.run(["tar", "-x", "-C", src], stdin=arch.stdout)
        arch.stdout.close()
        if arch.wait() != 0 or untar.returncode != 0:
            raise RuntimeError("git archive %s into %s failed" % (full, src))
        args = ["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                "-DLEAFD_SANITIZE=OFF", "-DLEAFD_TSAN=OFF", "-DLEAFD_TESTS=OFF"]
        if shutil.which("ccache"):
            args.append("-DCMAKE_C_COMPILER_LAUNCHER=ccache")
        out = os.path.join(top, "build.log")
        with open(out, "w") as f:
            rc = subprocess.run(args, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
            if rc == 0:
                rc = subprocess.run(["cmake", "--build", build, "-j2", "--target", "leafd"],
                                    stdout=f, stderr=subprocess.STDOUT,
                                    timeout=timeout).returncode
        if rc != 0 or not os.access(binary, os.X_OK):
            with open(out) as f:
                tail = f.read()[-3000:]
            raise RuntimeError("building release %s failed (see %s):\n%s" % (commit, out, tail))
        with open(marker, "w") as f:
            f.write("%s\n" % full)
        log("release %s: built %s in %.0f s" % (commit, binary, time.time() - t0))
        return binary
