"""The Python binding of libleafd-client (src/client/python/leafd) for the client tests.

    from clientbinding import import_leafd
    leafd = import_leafd()      # first thing in the script: it may start the script again

LIBLEAFD_CLIENT names the library under test. A library built with ASan (the test build) or
TSan (tools/checks/tsan) needs its runtime loaded first: the script is started again with it in
LD_PRELOAD, which is taken out of the environment again at once, so that the servers the test
starts do not inherit it.
"""
import importlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.environ["LIBLEAFD_CLIENT"]


def _preload_sanitizer():
    if os.environ.get("CLIENT_TEST_PRELOADED"):
        os.environ.pop("LD_PRELOAD", None)
        return
    out = subprocess.run(["ldd", LIB], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if ("libasan" in line or "libtsan" in line) and "=>" in line:
            env = dict(os.environ, LD_PRELOAD=line.split("=>")[1].split()[0],
                       ASAN_OPTIONS="detect_leaks=0", CLIENT_TEST_PRELOADED="1")
            os.execve(sys.executable, [sys.executable] + sys.argv, env)


def import_leafd():
    """The `leafd` module of this checkout, over the library LIBLEAFD_CLIENT names."""
    _preload_sanitizer()
    sys.path.insert(0, os.path.join(ROOT, "src", "client", "python"))
    return importlib.import_module("leafd")
