"""tools/packaging/image: the OCI image of a node (docs/kubernetes.md, "The image").

- `tools/packaging/image --help` prints the usage; an unknown argument exits 2 (nothing built).
- `tools/packaging/image` builds localhost/leafd:<version> from the project's .deb on a Debian 12 root
  made by mmdebstrap (no registry), its last line the reference; the image runs as 10001:10001
  with entrypoint leafd and `-c /dev/null`, a volume /var/lib/leafd, ports 8080 and 6379; it is
  under 40 MB and holds no shell, no package manager, no python3.
- With the environment alone (no configuration file), a read-only root (and no writable /tmp, as
  Kubernetes' readOnlyRootFilesystem gives), every capability dropped, on the host's network, it
  serves snowflake (ZooKeeper) and segment (MariaDB) IDs from the harness's real servers with its
  secrets from mounted files (*.file keys): /health and /ready 200; it runs as 10001 with no
  capability; its log is on stderr (nothing on stdout); SIGTERM stops it, exit 0, within 10 s,
  a client's idle keep-alive connection open.
- With a mounted configuration file (-c /etc/leafd/leafd.properties) and the data dir on a host
  folder: ready; stopped with `podman stop` within 10 s; started again on the same folder it keeps
  its worker ID (the volume holds the cache).
- With neither a file nor a variable it refuses to start (exit 1), as leafd always does.

Skipped (77) when not root (podman import and mmdebstrap --mode=root). The setup of
tests/container.cmake's fixture: test_container_kube uses the image built here.
LEAFD_PACKAGE_BUILD, LEAFD_IMAGE_CACHE: tools/packaging/image's build and cache (kept in the build tree)."""
import json
import os
import signal
import subprocess
import sys
import time

from containers import IMAGE, ROOT, UID, VERSION, Podman, build_image, check_process, secret_dir
from leafdtest import Env, HttpStream, _checks, check, free_port, get_request, http, log, wait_until

MB = 1000 * 1000


def usage_checks():
    tool = os.path.join(ROOT, "tools", "packaging", "image")
    for arg in ("--help", "-h"):
        r = subprocess.run([tool, arg], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and "usage: tools/packaging/image" in r.stdout,
              "tools/packaging/image %s prints the usage, exit 0 (%d %r)" % (arg, r.returncode, r.stderr))
    r = subprocess.run([tool, "--nosuch"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "unknown argument" in r.stderr,
          "an unknown argument exits 2: %d %r" % (r.returncode, r.stderr))


def image_checks(pm):
    info = json.loads(pm.run("image", "inspect", IMAGE, check_rc=True).stdout)[0]
    cfg = info["Config"]
    check(cfg.get("User") == "%d:%d" % (UID, UID), "the image's user is %d:%d: %s" % (UID, UID, cfg.get("User")))
    check(cfg.get("Entrypoint") == ["/usr/bin/leafd"] and cfg.get("Cmd") == ["-c", "/dev/null"],
          "entrypoint leafd, arguments -c /dev/null: %s %s" % (cfg.get("Entrypoint"), cfg.get("Cmd")))
    check("/var/lib/leafd" in (cfg.get("Volumes") or {}), "a volume /var/lib/leafd: %s" % cfg.get("Volumes"))
    check({"8080/tcp", "6379/tcp"} <= set(cfg.get("ExposedPorts") or {}), "ports 8080 and 6379 exposed")
    check("LEAFD_DATA_DIR=/var/lib/leafd" in cfg.get("Env", []), "LEAFD_DATA_DIR=/var/lib/leafd: %s" % cfg.get("Env"))
    size = info["Size"]
    log("image %s: %.1f MB uncompressed" % (IMAGE, size / MB))
    check(size < 40 * MB, "the image is under 40 MB: %.1f MB" % (size / MB))
    # What is in it: leafd and its libraries, no shell, no package manager, no interpreter.
    c = pm.name("list")
    pm.containers.append(c)
    pm.run("create", "--name", c, IMAGE, check_rc=True)
    listing = subprocess.run("podman export %s | tar -t" % c, shell=True, capture_output=True,
                             text=True, env=pm.environ(), timeout=120).stdout.split()
    files = {p.lstrip("./") for p in listing}
    check("usr/bin/leafd" in files, "the image holds /usr/bin/leafd")
    for absent in ("bin/sh", "usr/bin/sh", "bin/bash", "usr/bin/dpkg", "usr/bin/apt", "usr/bin/python3",
                   "usr/bin/leafctl", "var/lib/dpkg/status", "etc/leafd/leafd.properties"):
        check(absent not in files, "the image holds no %s" % absent)
    check(not any(p.startswith("usr/share/doc/") and not p.endswith(("copyright", "/")) for p in files),
          "no docs but the copyright files")
    pm.run("rm", c)
    pm.containers.remove(c)


def start(pm, name, args, out, err):
    """podman run in the foreground (its stdout and stderr are the node's), in a process of its own."""
    pm.containers.append(name)
    return pm.popen(["run", "--rm", "--name", name, "--network=host", "--read-only",
                     "--read-only-tmpfs=false", "--cap-drop=ALL", "--security-opt=no-new-privileges"]
                    + args, open(out, "w"), open(err, "w"))


def ready(port):
    return wait_until(lambda: http(port, "/ready", timeout=2)[0] == 200, 60, 0.2)


def term_stop(pm, proc, name, what):
    """SIGTERM to the node; returns (exit code, seconds)."""
    t0 = time.time()
    pm.run("kill", "--signal", "TERM", name)
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.time() - t0
    log("%s: SIGTERM to exit in %.2f s (exit %s)" % (what, took, rc))
    check(rc == 0 and took < 10, "%s stops on SIGTERM with exit 0 within 10 s (exit %s, %.1f s)" % (what, rc, took))
    return rc, took


def env_only(env, pm, zk, db):
    """No configuration file: the environment says everything; secrets from mounted files."""
    port = free_port()
    secrets = secret_dir(env, "secrets", {"jdbc-password": "leafpw", "admin-token": "a" * 24})
    name = pm.name("env")
    out, err = os.path.join(env.dir, "env.out"), os.path.join(env.dir, "env.err")
    variables = {
        "LEAF_NAME": "it-image", "LEAF_SNOWFLAKE_ENABLE": "true",
        "LEAF_SNOWFLAKE_ZK_ADDRESS": zk.address(), "LEAFD_SNOWFLAKE_ADVERTISE_IP": "127.0.0.1",
        "LEAFD_LISTEN": "127.0.0.1:%d" % port, "LEAF_SEGMENT_ENABLE": "true",
        "LEAF_JDBC_URL": db.jdbc_url(), "LEAF_JDBC_USERNAME": "leaf",
        "LEAF_JDBC_PASSWORD_FILE": "/run/secrets/leafd/jdbc-password",
        "LEAFD_ADMIN_TOKEN_FILE": "/run/secrets/leafd/admin-token",
    }
    args = ["-v", "%s:/run/secrets/leafd:ro" % secrets]
    for k, v in variables.items():
        args += ["-e", "%s=%s" % (k, v)]
    t0 = time.time()
    proc = start(pm, name, args + [IMAGE], out, err)
    ok = ready(port)
    log("environment only: /ready 200 after %.2f s" % (time.time() - t0))
    if not check(ok, "the image configured by the environment alone answers /ready 200: %s"
                 % open(err).read()[-2000:]):
        proc.kill()
        return
    check(http(port, "/health")[0] == 200, "/health 200")
    st, body, _ = http(port, "/api/snowflake/get/a")
    check(st == 200 and int(body) > 0, "a snowflake ID from the container: %d %s" % (st, body))
    st, body, _ = http(port, "/api/segment/get/img")
    check(st == 200 and int(body) > 0, "a segment ID (the password from its file): %d %s" % (st, body))
    pid = pm.pid(name)
    if check(pid > 0, "the container's process is visible"):
        check_process(pid, "the node (environment only)")
        data = "/proc/%d/root/var/lib/leafd" % pid
        check(os.listdir(data) != [], "the node writes its data dir, the volume: %s" % os.listdir(data))
    # A client's idle keep-alive connection (as a load balancer keeps) does not hold the stop.
    conn = HttpStream(port)
    conn.send(get_request("/api/snowflake/get/a"))
    check(conn.read_response()[0] == 200, "a keep-alive client got an ID before the stop")
    term_stop(pm, proc, name, "the node (environment only, a keep-alive client connected)")
    conn.close()
    pm.containers.remove(name)
    stdout, stderr = open(out).read(), open(err).read()
    check(stdout == "", "nothing on stdout: %r" % stdout[:300])
    check("level=info" in stderr and "component=" in stderr, "the log is on stderr: %r" % stderr[:300])
    check("readable by group or others" not in stderr,
          "no warning about the mounted secrets' modes: %s" % stderr[-1000:])


def config_file(env, pm, zk):
    """A mounted configuration file, the data dir on a host folder kept across two runs."""
    port = free_port()
    conf = os.path.join(env.dir, "conf")
    data = os.path.join(env.dir, "data")
    os.makedirs(conf)
    os.makedirs(data)
    os.chown(data, UID, UID)
    props = os.path.join(conf, "leafd.properties")
    with open(props, "w") as f:
        f.write("leaf.name = it-image-file\nleaf.snowflake.enable = true\n"
                "leaf.snowflake.zk.address = %s\nleafd.snowflake.advertise.ip = 127.0.0.1\n"
                "leafd.listen = 127.0.0.1:%d\nleafd.data.dir = /var/lib/leafd\n" % (zk.address(), port))
    os.chmod(props, 0o644)  # no secret in it
    workers = []
    for run in (1, 2):
        name = pm.name("file%d" % run)
        out, err = os.path.join(env.dir, "file%d.out" % run), os.path.join(env.dir, "file%d.err" % run)
        proc = start(pm, name, ["-v", "%s:/etc/leafd:ro" % conf, "-v", "%s:/var/lib/leafd" % data,
                                IMAGE, "-c", "/etc/leafd/leafd.properties"], out, err)
        if not check(ready(port), "run %d with a mounted configuration file: /ready 200: %s"
                     % (run, open(err).read()[-2000:])):
            proc.kill()
            return
        st, body, _ = http(port, "/ready")
        workers.append(json.loads(body)["snowflake"].get("worker_id"))
        if run == 1:
            check_process(pm.pid(name), "the node (configuration file)")
            t0 = time.time()
            r = pm.run("stop", "-t", "30", name, timeout=60)
            took = time.time() - t0
            rc = proc.wait(timeout=30)
            log("configuration file: podman stop took %.2f s (exit %s)" % (took, rc))
            check(r.returncode == 0 and rc == 0 and took < 10,
                  "podman stop (SIGTERM) stops it, exit 0, within 10 s (%s, %.1f s)" % (rc, took))
        else:
            term_stop(pm, proc, name, "the node (configuration file, second run)")
        pm.containers.remove(name)
    check(os.listdir(data) != [], "the data dir on the host holds the node's cache: %s" % os.listdir(data))
    check(len(workers) == 2 and workers[0] == workers[1] and workers[0] is not None,
          "started again on the same volume, the node keeps its worker ID: %s" % workers)


def nothing_configured(env, pm):
    r = pm.run("run", "--rm", "--network=host", "--read-only", IMAGE, timeout=60)
    check(r.returncode == 1 and "configuration error" in r.stderr,
          "with no variable and no file the node refuses to start, exit 1: %d %r" % (r.returncode, r.stderr[-500:]))


def main():
    usage_checks()
    if os.geteuid() != 0:
        print("SKIP: not root (tools/packaging/image runs podman import and mmdebstrap as root)")
        sys.exit(77)
    rc, out, err, took = build_image()
    lines = out.strip().splitlines()
    log("tools/packaging/image: %.1f s; %s" % (took, err.strip().splitlines()[-1] if err.strip() else ""))
    if not check(rc == 0 and lines and lines[-1] == IMAGE,
                 "tools/packaging/image exits 0, its last line %s (got %d, %r): %s" % (IMAGE, rc, lines[-1:], err[-3000:])):
        return
    with Env() as env:
        pm = Podman(env)
        image_checks(pm)
        zk = env.zookeeper()
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc(biz_tag, max_id, step, description) VALUES ('img', 1, 100, 'it')")
        env_only(env, pm, zk, db)
        config_file(env, pm, zk)
        nothing_configured(env, pm)
        env.finish()


if __name__ == "__main__":
    main()
    print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
    sys.exit(1 if _checks["failed"] else 0)
