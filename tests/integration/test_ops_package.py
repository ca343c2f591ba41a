"""tools/packaging/package: the Debian package builds without installing anything, holds every file
docs/OPERATIONS.md ("Installing") lists, marks the configuration as a conffile, passes lintian
without errors, and its extracted leafd runs (--version, --check-config of the packaged
configuration). The configuration, where the secrets go, is 0640 and the postinst gives it to
root:leafd (readable by root and the service only). `tools/packaging/package --help` (and -h) prints the
usage, and an unknown option is refused, before anything is built. The package's leafctl finds
/etc/leafd/leafd.properties by itself (the prefix /usr keeps its configuration in /etc).
The client library's packages (libleafd-client1, libleafd-client-dev, python3-leafd) are built
beside it, lintian-clean; extracted, a program compiles against the -dev files and runs on the
runtime package, and the Python package imports and calls it.
Skipped (77) without dpkg-dev (tools/deps package) after the usage checks.

LEAFD_PACKAGE_BUILD: the release build directory tools/packaging/package uses (kept between runs)."""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

from leafdtest import _checks, check, log

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FILES = [
    "./usr/bin/leafd", "./usr/bin/leafctl", "./usr/bin/zk-inspect",
    "./etc/leafd/leafd.properties",
    "./lib/systemd/system/leafd.service", "./usr/lib/sysusers.d/leafd.conf",
    "./usr/share/leafd/leafd-alerts.yml", "./usr/share/leafd/leaf_alloc.sql",
    "./usr/share/leafd/grafana/leafd.json",
    "./usr/share/man/man8/leafd.8.gz", "./usr/share/man/man8/leafctl.8.gz",
    "./usr/share/man/man8/zk-inspect.8.gz",
    "./usr/share/bash-completion/completions/leafctl",
    "./usr/share/doc/leafd/README.md", "./usr/share/doc/leafd/OPERATIONS.md",
    "./usr/share/doc/leafd/CHANGELOG.md.gz", "./usr/share/doc/leafd/changelog.gz",
    "./usr/share/doc/leafd/copyright",
]


def run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    return r.returncode, r.stdout, r.stderr


def usage_checks():
    """--help and -h print the usage and exit 0 (they once made a folder named -h); an unknown
    option exits 2. Run in an empty folder: nothing may be created there."""
    tmp = tempfile.mkdtemp(prefix="leafd-test-package-usage.")
    try:
        for arg in ("--help", "-h"):
            rc, out, err = run([os.path.join(ROOT, "tools", "packaging", "package"), arg], cwd=tmp, timeout=30)
            check(rc == 0 and "usage: tools/packaging/package [OUTDIR]" in out,
                  "tools/packaging/package %s prints the usage, exit 0 (got %d %r %r)" % (arg, rc, out, err))
        rc, out, err = run([os.path.join(ROOT, "tools", "packaging", "package"), "--nosuch"], cwd=tmp, timeout=30)
        check(rc == 2 and "unknown option" in err, "an unknown option exits 2: %d %r" % (rc, err))
        check(os.listdir(tmp) == [], "no folder made by an option: %s" % os.listdir(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    usage_checks()
    for tool in ("dpkg-deb", "dpkg-shlibdeps", "dpkg-buildflags"):
        if shutil.which(tool) is None:
            print("SKIP: %s missing (tools/deps package)" % tool)
            sys.exit(77)
    version = re.search(r"project\(leafd VERSION (\d+\.\d+\.\d+)",
                        open(os.path.join(ROOT, "CMakeLists.txt")).read()).group(1)
    arch = run(["dpkg", "--print-architecture"])[1].strip()
    tmp = tempfile.mkdtemp(prefix="leafd-test-package.")
    try:
        rc, out, err = run([os.path.join(ROOT, "tools", "packaging", "package"), tmp], timeout=900)
        log(out + err)
        check(rc == 0, "tools/packaging/package exits 0 (got %d: %s)" % (rc, err[-2000:]))
        deb = os.path.join(tmp, "leafd_%s_%s.deb" % (version, arch))
        if not check(os.path.exists(deb), "%s built (dir: %s)" % (deb, os.listdir(tmp))):
            return
        if shutil.which("lintian"):
            check(re.search(r"lintian: 0 errors", out) and not re.search(r"^E: ", out, re.M),
                  "lintian reports no errors: %s" % out)
        else:
            log("lintian not installed: not checked (tools/deps package)")

        # The file list: everything where it belongs, owned by root, nothing from the build tree.
        rc, listing, _ = run(["dpkg-deb", "-c", deb])
        paths = {line.split()[-1] for line in listing.splitlines() if line.strip()}
        for f in FILES:
            check(f in paths, "the package holds %s" % f)
        check(not any("/usr/local" in p or "build" in p for p in paths),
              "no /usr/local or build paths: %s" % sorted(paths))
        check(all(" root/root " in line for line in listing.splitlines() if line.strip()),
              "every file owned by root/root")
        for line in listing.splitlines():
            if line.endswith("./usr/bin/leafd") or line.endswith("./usr/bin/leafctl"):
                check(line.startswith("-rwxr-xr-x"), "executable: %s" % line)
            if line.endswith("./etc/leafd/leafd.properties"):
                check(line.startswith("-rw-r----- "),
                      "the configuration is not readable by others: %s" % line)

        # The control file and the conffile.
        rc, control, _ = run(["dpkg-deb", "-f", deb])
        check("Package: leafd" in control and "Version: %s" % version in control,
              "control names leafd %s: %s" % (version, control))
        check(re.search(r"^Depends:.*libc6.*libuv1.*", control, re.M) is not None,
              "Depends lists the shared libraries (dpkg-shlibdeps): %s" % control)
        ctl = os.path.join(tmp, "control")
        check(run(["dpkg-deb", "-e", deb, ctl])[0] == 0, "dpkg-deb -e extracts the control area")
        conffiles = open(os.path.join(ctl, "conffiles")).read().split()
        check(conffiles == ["/etc/leafd/leafd.properties"],
              "conffiles is /etc/leafd/leafd.properties alone: %s" % conffiles)
        check(os.access(os.path.join(ctl, "postinst"), os.X_OK), "a postinst creates the user")
        postinst = open(os.path.join(ctl, "postinst")).read()
        check("chown root:leafd \"$conf\"" in postinst and "chmod 0640 \"$conf\"" in postinst
              and "conf=/etc/leafd/leafd.properties" in postinst
              and "dpkg-statoverride --list" in postinst,
              "the postinst gives the configuration to root:leafd 0640 (no statoverride): %s"
              % postinst)

        # Extracted, without installing: the binary runs and accepts the packaged configuration.
        x = os.path.join(tmp, "x")
        check(run(["dpkg-deb", "-x", deb, x])[0] == 0, "dpkg-deb -x extracts the package")
        rc, out, err = run([os.path.join(x, "usr/bin/leafd"), "--version"])
        check(rc == 0 and re.fullmatch(r"leafd %s \(commit ([0-9a-f]+(-dirty)?|unknown)\)\n"
                                       % re.escape(version), out),
              "the packaged leafd --version: 'leafd %s (commit ...)' exit 0 (got %d %r %r)"
              % (version, rc, out, err))
        conf = os.path.join(x, "etc/leafd/leafd.properties")
        check("\nleafd.data.dir = /var/lib/leafd\n" in open(conf).read(),
              "the conffile keeps its state in /var/lib/leafd (the unit's writable path)")
        rc, out, err = run([os.path.join(x, "usr/bin/leafd"), "--check-config", "-c", conf])
        check(rc == 0, "the packaged leafd accepts the packaged configuration (%d %r)" % (rc, err))
        # The package's leafctl, run from its /usr/bin, finds its /etc/leafd configuration
        # (3: not running); it once looked for /usr/etc/leafd/leafd.properties.
        env = dict(os.environ, LEAFD_BIN=os.path.join(x, "usr/bin/leafd"))
        env.pop("LEAFD_CONF", None)
        rc, out, err = run([os.path.join(x, "usr/bin/leafctl"), "status"], env=env, timeout=60)
        check(rc == 3 and out.startswith("NOT RUNNING: leafd of %s\n" % conf),
              "the packaged leafctl reads %s (got %d %r %r)" % (conf, rc, out, err))
        unit = open(os.path.join(x, "lib/systemd/system/leafd.service")).read()
        check("\nExecStart=/usr/bin/leafd -c /etc/leafd/leafd.properties\n" in unit,
              "the unit starts /usr/bin/leafd with /etc/leafd/leafd.properties")
        check("/usr/local" not in unit and "cmake --install" not in unit and
              unit.startswith("# systemd unit of the Debian package leafd"),
              "the packaged unit's comments are the package's (no /usr/local, no cmake --install)")
        check("install -d -m 0750 -o leafd -g leafd /var/lib/leafd" in postinst,
              "the postinst creates the data dir /var/lib/leafd for a node run without systemd")
        with gzip.open(os.path.join(x, "usr/share/doc/leafd/CHANGELOG.md.gz"), "rt") as f:
            changelog = f.read()
        check("## [%s]" % version in changelog or "## [Unreleased]" in changelog,
              "CHANGELOG.md.gz is the changelog")
        with gzip.open(os.path.join(x, "usr/share/man/man8/leafd.8.gz"), "rt") as f:
            th = f.readline()
            check(th.startswith(".TH") and '"leafd %s"' % version in th,
                  "the man pages are gzipped roff naming the version: %r" % th)
        client_packages(tmp, version, arch)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


CLIENT_PROGRAM = """#include <leafd/client.h>
#include <stdio.h>
int main(void) {
    char err[128];
    int64_t id;
    leafd_client *c = leafd_client_open("http://127.0.0.1:1", "wait.ms=50;log=0", err, sizeof(err));
    if (c == NULL)
        return 2;
    int rc = leafd_client_next(c, "segment:t", &id);
    leafd_client_close(c);
    printf("%d", rc);
    return 0;
}
"""


def client_packages(tmp, version, arch):
    """libleafd-client's three packages: files, dependencies, and the extracted copies work."""
    ma = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"])[1].strip()
    debs = {"libleafd-client1": "libleafd-client1_%s_%s.deb" % (version, arch),
            "libleafd-client-dev": "libleafd-client-dev_%s_%s.deb" % (version, arch),
            "python3-leafd": "python3-leafd_%s_all.deb" % version}
    want = {"libleafd-client1": ["./usr/lib/%s/libleafd-client.so.%s" % (ma, version),
                                 "./usr/lib/%s/libleafd-client.so.1" % ma,
                                 "./usr/share/doc/libleafd-client1/copyright"],
            "libleafd-client-dev": ["./usr/include/leafd/client.h",
                                    "./usr/lib/%s/libleafd-client.so" % ma,
                                    "./usr/lib/%s/libleafd-client.a" % ma,
                                    "./usr/lib/%s/pkgconfig/leafd-client.pc" % ma,
                                    "./usr/share/man/man3/leafd_client.3.gz"],
            "python3-leafd": ["./usr/lib/python3/dist-packages/leafd/__init__.py"]}
    x = os.path.join(tmp, "client")
    for name, f in debs.items():
        deb = os.path.join(tmp, f)
        if not check(os.path.exists(deb), "%s built" % f):
            return
        listing = run(["dpkg-deb", "-c", deb])[1]
        paths = {line.split()[5] for line in listing.splitlines() if line.strip()}
        for p in want[name]:
            check(p in paths, "%s holds %s" % (name, p))
        check(run(["dpkg-deb", "-x", deb, x])[0] == 0, "%s extracts" % name)
    control = run(["dpkg-deb", "-f", os.path.join(tmp, debs["libleafd-client-dev"])])[1]
    check("libleafd-client1 (= %s)" % version in control, "-dev depends on its runtime: %s" % control)
    control = run(["dpkg-deb", "-f", os.path.join(tmp, debs["libleafd-client1"])])[1]
    check(re.search(r"^Depends:.*libssl3", control, re.M) is not None,
          "the runtime depends on libssl (dpkg-shlibdeps): %s" % control)
    libdir = os.path.join(x, "usr/lib", ma)
    with open(os.path.join(x, "app.c"), "w") as f:
        f.write(CLIENT_PROGRAM)
    rc, out, err = run(["cc", "-I" + os.path.join(x, "usr/include"), "-o", os.path.join(x, "app"),
                        os.path.join(x, "app.c"), "-L" + libdir, "-lleafd-client"])
    check(rc == 0, "a program builds against libleafd-client-dev: %s" % err)
    rc, out, err = run([os.path.join(x, "app")], env=dict(os.environ, LD_LIBRARY_PATH=libdir))
    check(rc == 0 and out == "-2", "and runs on libleafd-client1: no node, -2 (%d %r)" % (rc, out))
    code = ("import leafd\nc = leafd.Client('http://127.0.0.1:1', options='wait.ms=50;log=0')\n"
            "try:\n    c.next('segment:t')\nexcept leafd.Error as e:\n    print(e.code)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(x, "usr/lib/python3/dist-packages"),
               LIBLEAFD_CLIENT=os.path.join(libdir, "libleafd-client.so.1"))
    env.pop("LD_PRELOAD", None)
    rc, out, err = run(["/usr/bin/python3", "-c", code], env=env)
    check(rc == 0 and out.strip() == "-2", "python3-leafd imports and calls it: %r %r" % (out, err))


if __name__ == "__main__":
    main()
    print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
    sys.exit(1 if _checks["failed"] else 0)
