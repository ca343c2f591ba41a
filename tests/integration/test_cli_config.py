"""Command line and configuration (leafd -c, --check-config, keys, environment overrides).

Refusals (docs/getting-started.md): no -c, nothing to serve (Leaf's own file has both modes
off), unknown LEAF_*/LEAFD_* variables, Spring's server.port.

--version; --check-config on good and bad files (exit 1, stderr names
file:line or file, and the key); environment overrides (also bad ones, named
by variable); Leaf's own leaf.properties; start-up with the port in use.
"""
import os
import re
import socket
import subprocess
import tempfile
import time

from leafdtest import (LEAFD_BIN, Env, check, free_port, http, log, port_open, static_props,
                       wait_until)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LEAF_PROPERTIES = """leaf.name=com.sankuai.leaf.opensource.test
leaf.segment.enable=false
#leaf.jdbc.url=
#leaf.jdbc.username=
#leaf.jdbc.password=

leaf.snowflake.enable=false
#leaf.snowflake.zk.address=
#leaf.snowflake.port=
"""

GOOD = """# a good static-worker configuration
leaf.name = it
leaf.snowflake.enable = true
leafd.snowflake.worker.id = 7
leafd.listen = 127.0.0.1:%d
leafd.data.dir = %s
"""


def run(argv, env_extra=None, timeout=20):
    env = dict(os.environ)
    # A stray override in the caller's environment must not change the results.
    for k in list(env):
        if k.startswith("LEAF_") or k.startswith("LEAFD_") and k != "LEAFD_BIN":
            del env[k]
    env.update(env_extra or {})
    r = subprocess.run([LEAFD_BIN] + argv, capture_output=True, text=True, env=env, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def write(d, name, text):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def bad_config(d, name, text, key, line, env_extra=None, also=(), names_file=True):
    """--check-config must exit 1 and name file:line (or the file) and the key."""
    path = write(d, name + ".properties", text)
    rc, out, err = run(["--check-config", "-c", path], env_extra)
    check(rc == 1, "%s: --check-config exits 1 (got %d; stderr %r)" % (name, rc, err[:300]))
    where = "%s:%d" % (path, line) if line else path
    check(not names_file or where in err or (line and "%s.properties:%d" % (name, line) in err) or
          (not line and name + ".properties" in err),
          "%s: stderr names %s (got %r)" % (name, where, err[:300]))
    if key:
        check(key in err, "%s: stderr names the key %s (got %r)" % (name, key, err[:300]))
    for word in also:
        check(word in err, "%s: stderr mentions %r (got %r)" % (name, word, err[:300]))
    check("configuration OK" not in out, "%s: no OK on stdout" % name)
    # Running (not just checking) refuses the same file with exit 1, quickly.
    rc2, _, err2 = run(["-c", path], env_extra, timeout=20)
    check(rc2 == 1, "%s: leafd -c exits 1 too (got %d; %r)" % (name, rc2, err2[:200]))


def conf_keys(d):
    """conf/leafd.properties names exactly the keys of CONFIG_KEYS (src/config/config.h),
    commented or not, each once, and leafd accepts it as shipped."""
    table = re.findall(r'X\("([a-z.]+)",', open(os.path.join(ROOT, "src/config/config.h")).read())
    check(len(table) > 40, "CONFIG_KEYS read from config.h (%d keys)" % len(table))
    path = os.path.join(ROOT, "conf/leafd.properties")
    named = re.findall(r"^#?\s*([a-z][a-z.]*[a-z])\s*=", open(path).read(), re.M)
    unknown = sorted(set(named) - set(table))
    check(not unknown, "conf/leafd.properties names only CONFIG_KEYS keys (unknown: %s)" % unknown)
    missing = sorted(set(table) - set(named))
    check(not missing, "conf/leafd.properties names every CONFIG_KEYS key (missing: %s)" % missing)
    twice = sorted(k for k in set(named) if named.count(k) > 1)
    check(not twice, "conf/leafd.properties names each key once (twice: %s)" % twice)
    rc, out, err = run(["--check-config", "-c", path])
    check(rc == 0 and "configuration OK" in out,
          "leafd --check-config accepts conf/leafd.properties (got %d, %r)" % (rc, err[:300]))
    rc, out, err = run(["--print-config", "-c", path])
    check(rc == 0 and all(k in out for k in table),
          "--print-config of conf/leafd.properties lists every key (got %d, %r)" % (rc, err[:300]))


def breaking_refusals(d, data):
    """Configurations 0.1.0 accepted and 0.2.0 refuses: the refusal names the version and the
    migration, with a pointer to CHANGELOG.md."""
    zk = "leaf.name = it\nleaf.snowflake.enable = true\nleaf.snowflake.zk.address = 127.0.0.1:1\n"
    bad_config(d, "short-token", zk + "leafd.admin.token = short-token\n", "leafd.admin.token", 4,
               also=("16 characters", "since 0.2.0", "CHANGELOG.md", "openssl rand"))
    bad_config(d, "auth-no-zk-auth", zk + "leafd.auth.enable = true\n", "leafd.auth.enable", 4,
               also=("leafd.zk.auth", "since 0.2.0", "CHANGELOG.md", "digest:USER:PASSWORD"))


def main():
    with Env() as env:
        d = tempfile.mkdtemp(dir=env.dir)
        data = os.path.join(d, "data")

        rc, out, err = run(["--version"])
        check(rc == 0, "--version exits 0 (got %d)" % rc)
        check(re.fullmatch(r"leafd \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\)\n", out),
              "--version prints 'leafd X.Y.Z (commit abcdef1)' (got %r)" % out)
        cmake = open(os.path.join(ROOT, "CMakeLists.txt")).read()
        version = re.search(r"project\(leafd VERSION (\d+\.\d+\.\d+)", cmake).group(1)
        check(out.split()[1] == version, "--version is CMakeLists.txt's project version %s (got %r)"
              % (version, out))

        conf_keys(d)
        breaking_refusals(d, data)

        port = free_port()
        good = write(d, "good.properties", GOOD % (port, data))
        rc, out, err = run(["--check-config", "-c", good])
        check(rc == 0, "--check-config good: exit 0 (got %d, %r)" % (rc, err[:300]))
        check(not port_open(port), "--check-config does not start the server")
        rc, out, err = run(["-c", good, "--check-config"])
        check(rc == 0, "-c FILE --check-config (other order): exit 0 (got %d)" % rc)

        # Leaf's own leaf.properties, unchanged.
        # It turns both modes off, so it loads but leafd refuses to run with nothing to serve.
        leafp = write(d, "leaf.properties", LEAF_PROPERTIES)
        nothing = "leaf.snowflake.enable: nothing to serve"
        rc, out, err = run(["--check-config", "-c", leafp])
        check(rc == 1 and "%s:7: %s" % (leafp, nothing) in err,
              "Leaf's leaf.properties (both modes off): exit 1, nothing to serve (got %d, %r)"
              % (rc, err[:300]))
        crlf = write(d, "leaf-crlf.properties", LEAF_PROPERTIES.replace("\n", "\r\n"))
        rc, out, err = run(["--check-config", "-c", crlf])
        check(rc == 1 and nothing in err and "unknown" not in err,
              "leaf.properties with CRLF line ends parses (got %d, %r)" % (rc, err[:300]))
        rc, out, err = run(["--check-config", "-c", leafp], {"LEAF_SEGMENT_ENABLE": "true",
                                                           "LEAF_JDBC_URL": "jdbc:mysql://127.0.0.1/leaf",
                                                           "LEAF_JDBC_USERNAME": "root"})
        check(rc == 0, "Leaf's leaf.properties with segment on passes (got %d, %r)" % (rc, err[:300]))
        rc, out, err = run(["-c", leafp], timeout=10)
        check(rc == 1 and nothing in err, "run with nothing to serve: exit 1 (got %d, %r)" % (rc, err[:300]))

        # No -c: refused, for running and for checking (never silent defaults on 0.0.0.0:8080).
        for argv in ([], ["--check-config"], ["--print-config"]):
            rc, out, err = run(argv, timeout=10)
            check(rc == 1 and "-c FILE" in err and "configuration OK" not in out,
                  "leafd %s without -c: exit 1 asking for -c FILE (got %d, %r)" % (argv, rc, err[:200]))
        rc, out, err = run(["--check-config", "-c", "/dev/null"], {"LEAF_NAME": "it",
                                                                  "LEAF_SNOWFLAKE_ENABLE": "true",
                                                                  "LEAFD_SNOWFLAKE_WORKER_ID": "3"})
        check(rc == 0 and "configuration OK: /dev/null" in out,
              "-c /dev/null with the environment alone: OK, naming the file (got %d, %r)" % (rc, out + err))

        # Unknown LEAF_*/LEAFD_* variables are fatal, named (tools' own names are not keys).
        rc, out, err = run(["--check-config", "-c", good], {"LEAFD_LISTN": "127.0.0.1:1"})
        check(rc == 1 and "LEAFD_LISTN" in err and "LEAFD_LISTEN" in err,
              "env LEAFD_LISTN: exit 1 naming it and LEAFD_LISTEN (got %d, %r)" % (rc, err[:300]))
        rc, out, err = run(["-c", good], {"LEAF_SNOWFLAKE_ENABLED": "true"}, timeout=10)
        check(rc == 1 and "LEAF_SNOWFLAKE_ENABLED" in err,
              "env LEAF_SNOWFLAKE_ENABLED (run): exit 1 naming it (got %d, %r)" % (rc, err[:300]))
        rc, out, err = run(["--check-config", "-c", good], {"LEAFD_TEST_ANYTHING": "1",
                                                          "LEAFD_CONF": good, "LEAFD_PORT": "1"})
        check(rc == 0, "the tools' own LEAFD_TEST_*, LEAFD_CONF, LEAFD_PORT pass (got %d, %r)"
              % (rc, err[:300]))

        # Spring Boot's server.port: refused, naming leafd.listen.
        bad_config(d, "server-port", GOOD % (port, data) + "server.port = 8081\n", "server.port", 7,
                   also=("leafd.listen",))

        base = "leaf.name = it\nleaf.snowflake.enable = true\nleafd.snowflake.worker.id = 7\n"
        bad_config(d, "unknown-key", base + "leaf.snowflake.enabled = true\n", "leaf.snowflake.enabled", 4)
        bad_config(d, "bad-bool", "leaf.name = it\nleaf.snowflake.enable = yes\n", "leaf.snowflake.enable", 2)
        bad_config(d, "bad-bool-1", "leaf.name = it\nleaf.segment.enable = 1\n", "leaf.segment.enable", 2)
        bad_config(d, "missing-name", "leaf.snowflake.enable = true\nleafd.snowflake.worker.id = 7\n",
                   "leaf.name", 0)
        bad_config(d, "worker-1024", "leaf.name = it\nleaf.snowflake.enable = true\n"
                   "leafd.snowflake.worker.id = 1024\n", "leafd.snowflake.worker.id", 3)
        bad_config(d, "worker-neg", "leaf.name = it\nleaf.snowflake.enable = true\n"
                   "leafd.snowflake.worker.id = -2\n", "leafd.snowflake.worker.id", 3)
        bad_config(d, "worker-abc", base.replace("= 7", "= seven"), "leafd.snowflake.worker.id", 3)
        bad_config(d, "worker-missing", "leaf.name = it\nleaf.snowflake.enable = true\n",
                   "leafd.snowflake.worker.id", 0)
        for k, addr in enumerate(["localhost:8080", "1.2.3:80", "127.0.0.1:0", "127.0.0.1:65536",
                                  "127.0.0.1", "256.0.0.1:80", "127.0.0.1:80x", ""]):
            bad_config(d, "listen-%d" % k, base + "leafd.listen = %s\n" % addr, "leafd.listen", 4)
        bad_config(d, "bad-epoch", base + "leafd.snowflake.epoch = yesterday\n", "leafd.snowflake.epoch", 4)
        bad_config(d, "no-equals", base + "leaf.snowflake.zk.address\n", "leaf.snowflake.zk.address", 4)
        bad_config(d, "bad-idle", base + "leafd.http.idle.timeout.ms = 10\n", "leafd.http.idle.timeout.ms", 4)

        missing = os.path.join(d, "does-not-exist.properties")
        rc, out, err = run(["--check-config", "-c", missing])
        check(rc == 1 and missing in err, "missing file: exit 1 naming it (got %d, %r)" % (rc, err[:300]))
        rc, out, err = run(["-c", missing])
        check(rc == 1 and missing in err, "missing file (run): exit 1 naming it (got %d, %r)" % (rc, err[:300]))
        rc, out, err = run(["--no-such-flag"])
        check(rc != 0, "unknown argument: non-zero exit (got %d)" % rc)

        # Environment overrides: applied, and bad ones named by their variable.
        bad_config(d, "env-bad-bool", "leaf.name = it\n", "LEAF_SNOWFLAKE_ENABLE", 0,
                   env_extra={"LEAF_SNOWFLAKE_ENABLE": "yes"}, also=("leaf.snowflake.enable",),
                   names_file=False)
        bad_config(d, "env-bad-worker", base, "LEAFD_SNOWFLAKE_WORKER_ID", 0,
                   env_extra={"LEAFD_SNOWFLAKE_WORKER_ID": "5000"}, also=("leafd.snowflake.worker.id",),
                   names_file=False)
        rc, out, err = run(["--check-config", "-c", leafp], {"LEAF_SNOWFLAKE_ENABLE": "true"})
        check(rc == 1 and "leafd.snowflake.worker.id" in err,
              "env LEAF_SNOWFLAKE_ENABLE=true turns snowflake on (needs a worker id): exit 1 (got %d %r)"
              % (rc, err[:300]))
        rc, out, err = run(["--check-config", "-c", leafp],
                           {"LEAF_SNOWFLAKE_ENABLE": "true", "LEAFD_SNOWFLAKE_WORKER_ID": "3"})
        check(rc == 0, "env overrides make a valid snowflake config (got %d %r)" % (rc, err[:300]))

        # An override really takes effect at run time: listen and worker id from the environment.
        port2 = free_port()
        logpath = os.path.join(d, "env-run.log")
        e = dict(os.environ, LEAFD_LISTEN="127.0.0.1:%d" % port2, LEAFD_SNOWFLAKE_WORKER_ID="513",
                 LEAFD_DATA_DIR=data)
        with open(logpath, "w") as logf:
            p = subprocess.Popen([LEAFD_BIN, "-c", good], env=e, stdout=logf, stderr=subprocess.STDOUT)
        try:
            end = time.time() + 10
            st = 0
            while time.time() < end:
                try:
                    st, body, _ = http(port2, "/api/snowflake/get/env", timeout=1)
                    if st == 200:
                        break
                except OSError:
                    time.sleep(0.05)
            check(st == 200, "env LEAFD_LISTEN moves the listener (got %d)" % st)
            if st == 200:
                check((int(body) >> 12) & 0x3FF == 513, "env LEAFD_SNOWFLAKE_WORKER_ID=513 is used (id %s)" % body)
            check(not port_open(port), "the file's listen address is not used when overridden")
        finally:
            p.terminate()
            p.wait(10)

        # Port in use by another program.
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        busy = holder.getsockname()[1]
        busyconf = write(d, "busy.properties", GOOD % (busy, data))
        t = time.monotonic()
        rc, out, err = run(["-c", busyconf], timeout=20)
        log("port in use: exit %d after %.2f s; %s" % (rc, time.monotonic() - t, err.strip().splitlines()[:3]))
        check(rc != 0, "port in use by another program: exit non-zero (got %d)" % rc)
        check("127.0.0.1:%d" % busy in err, "port in use: message names the address (got %r)" % err[:400])
        check("leafd.listen" in err, "port in use: message names the key leafd.listen (got %r)" % err[:400])
        check("Sanitizer" not in err,
              "port in use: a clean exit, no sanitizer report (got %r)" % err[err.find("Sanitizer") - 200:][:600])
        holder.close()

        # Port in use by another leafd: a second node on the same address must
        # not start (SO_REUSEPORT would let it share the port and, in static
        # mode, issue the same IDs as the first).
        node = env.leafd("first", static_props(7))
        conf2 = write(d, "second.properties", GOOD % (node.port, data + "2"))
        try:
            r = subprocess.run([LEAFD_BIN, "-c", conf2], capture_output=True, text=True, timeout=3,
                               env=dict(os.environ))
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired as ex:
            rc, err = None, (ex.stderr or b"").decode("utf-8", "replace") if isinstance(ex.stderr, bytes) \
                else (ex.stderr or "")
        check(rc is not None and rc != 0,
              "port in use by another leafd: second leafd exits non-zero (got %s: still running after 3 s)"
              % rc if rc is None else "port in use by another leafd: exit non-zero (got %s)" % rc)
        check("127.0.0.1:%d" % node.port in (err or ""),
              "port in use by another leafd: message names the address (got %r)" % (err or "")[:300])
        node.stop()

        # Two leafd started together on one address (docs/OPERATIONS.md, "One process per
        # listen address"): a bare probe bind would let both pass before either listened, and
        # their SO_REUSEPORT sockets would then share the port. Exactly one must serve and the
        # other exit naming the address, every round.
        shared = 0
        for rnd in range(8):
            port = free_port()
            confs = [write(d, "together%d%s.properties" % (rnd, c), GOOD % (port, data + "t%d%s" % (rnd, c)))
                     for c in "ab"]
            procs = [subprocess.Popen([LEAFD_BIN, "-c", c], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True) for c in confs]
            try:
                # The loser exits at once; the winner serves on (3 s: a start of a static node).
                wait_until(lambda: any(p.poll() is not None for p in procs), 3)
                wait_until(lambda: http(port, "/health")[0] == 200, 3)
                alive = [p for p in procs if p.poll() is None]
                exited = [p for p in procs if p.poll() is not None]
                if len(alive) == 1 and len(exited) == 1:
                    err = exited[0].stderr.read()
                    check(exited[0].returncode != 0 and "127.0.0.1:%d" % port in err
                          and "another leafd" in err,
                          "round %d: the second of two started together exits naming the address "
                          "(exit %s: %r)" % (rnd, exited[0].returncode, err.strip()[-300:]))
                else:
                    shared += len(alive) == 2
                    check(False, "round %d: exactly one of two leafd started together on one port "
                          "serves (%d running: %s)" % (rnd, len(alive), "they share the port"
                                                       if len(alive) == 2 else "none"))
            finally:
                for p in procs:
                    if p.poll() is None:
                        p.terminate()
                        p.wait(10)
                    p.stderr.close()
        log("8 rounds of two leafd started together on one port: %d shared it" % shared)
        env.finish()


if __name__ == "__main__":
    main()
