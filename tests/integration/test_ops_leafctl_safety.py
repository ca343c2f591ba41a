"""tools/programs/leafctl where secrets and root are involved (docs/SECURITY.md, "Files and permissions"):

- `leafctl acl status|open|close` reach `leafd --zk-acl VERB -c FILE` (they were refused as
  "unknown argument", while docs/UPGRADING.md's rollback runs `leafctl acl open`);
- installed under the prefix /usr (as the Debian package puts it), leafctl finds
  /etc/leafd/leafd.properties by itself, not /usr/etc/leafd/...;
- `demote` authenticates with leafd.admin.token.file (a relative path is the configuration's
  folder's), the token never on curl's command line;
- a symbolic link where the log goes in the data dir is refused: the file it points to is
  neither created nor appended to, and no leafd is started; a link at the pid file is
  replaced, never written through;
- a node whose configuration others may read and that holds an inline secret logs a warn line
  naming the key and the file (never the secret); with the secret in a 0600 file, no such line.
"""
import os
import shutil
import subprocess

from leafdtest import Env, check, free_port, log, static_props

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
LEAFCTL = os.path.abspath(os.path.join(ROOT, "tools", "programs", "leafctl"))
LEAFD_BIN = os.environ["LEAFD_BIN"]
TOKEN = "tok-9d2e7b-from-a-file-only"


def leafctl(*args, conf=None, leafctl_path=LEAFCTL, env_extra=None):
    e = dict(os.environ)
    for k in ("LEAFD_ADMIN_TOKEN", "LEAFD_CONF", "LEAFD_USER"):
        e.pop(k, None)
    e.update(env_extra or {})
    argv = [leafctl_path] + list(args) + (["-c", conf] if conf else [])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=90, env=e)
    return r.returncode, r.stdout + r.stderr


def write_props(path, props, mode):
    with open(path, "w") as f:
        f.writelines("%s = %s\n" % kv for kv in props.items())
    os.chmod(path, mode)


with Env() as env:
    port = free_port()
    d = os.path.join(env.dir, "node")
    data = os.path.join(d, "data")
    os.makedirs(data)
    conf = os.path.join(d, "leafd.properties")
    with open(os.path.join(d, "admin.token"), "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(os.path.join(d, "admin.token"), 0o600)
    write_props(conf, static_props(4, **{"leafd.listen": "127.0.0.1:%d" % port,
                                         "leafd.data.dir": "data",
                                         "leafd.admin.token.file": "admin.token"}), 0o600)

    # acl: the verb reaches leafd. A stand-in binary records its arguments and hands
    # --print-config to the real leafd.
    shim_dir = os.path.join(env.dir, "shim")
    os.makedirs(shim_dir)
    argv_log = os.path.join(env.dir, "leafd-argv")
    shim = os.path.join(shim_dir, "leafd")
    with open(shim, "w") as f:
        f.write('#!/bin/sh\ncase "$1" in --print-config) exec %s "$@" ;; esac\n'
                'printf "%%s\\n" "$*" >>%s\n' % (LEAFD_BIN, argv_log))
    os.chmod(shim, 0o755)
    for verb in ("status", "open", "close"):
        rc, out = leafctl("acl", verb, conf=conf, env_extra={"LEAFD_BIN": shim})
        check(rc == 0 and "unknown argument" not in out,
              "leafctl acl %s runs: %d %s" % (verb, rc, out))
    calls = open(argv_log).read().splitlines() if os.path.exists(argv_log) else []
    check(calls == ["--zk-acl %s -c %s" % (v, conf) for v in ("status", "open", "close")],
          "each verb reached leafd --zk-acl VERB -c FILE: %s" % calls)
    rc, out = leafctl("acl", conf=conf, env_extra={"LEAFD_BIN": shim})
    check(rc == 1 and "usage: leafctl acl status|open|close" in out,
          "acl without a verb: its usage, exit 1: %d %s" % (rc, out))

    # Installed under /usr (here: a copy under T/usr/bin): the configuration is T/etc/leafd/.
    t = os.path.join(env.dir, "installed")
    os.makedirs(os.path.join(t, "usr", "bin"))
    os.makedirs(os.path.join(t, "etc", "leafd"))
    shutil.copy(LEAFCTL, os.path.join(t, "usr", "bin", "leafctl"))
    tconf = os.path.join(t, "etc", "leafd", "leafd.properties")
    write_props(tconf, static_props(5, **{"leafd.listen": "127.0.0.1:%d" % free_port(),
                                          "leafd.data.dir": os.path.join(t, "data")}), 0o600)
    rc, out = leafctl("status", leafctl_path=os.path.join(t, "usr", "bin", "leafctl"),
                      env_extra={"LEAFD_BIN": LEAFD_BIN})
    check(rc == 3 and out.startswith("NOT RUNNING: leafd of %s\n" % tconf),
          "installed under /usr, leafctl reads /etc/leafd/leafd.properties: %d %s" % (rc, out))

    # A link where the log goes: refused before anything starts, its target untouched.
    victim = os.path.join(env.dir, "victim")
    with open(victim, "w") as f:
        f.write("victim\n")
    logfile = os.path.join(data, "leafd.log")
    os.symlink(victim, logfile)
    rc, out = leafctl("start", conf=conf)
    check(rc == 1 and "symbolic link" in out and "leafd started" not in out,
          "start refuses a symbolic link at the log: %d %s" % (rc, out))
    check(open(victim).read() == "victim\n", "the link's target is not appended to")
    check(not os.path.exists(os.path.join(data, "leafd.pid")), "no pid file: nothing started")
    os.unlink(logfile)
    missing = os.path.join(env.dir, "created-through-a-link")
    os.symlink(missing, logfile)
    rc, out = leafctl("start", conf=conf)
    check(rc == 1 and not os.path.exists(missing),
          "a dangling link at the log: refused, its target not created: %d %s" % (rc, out))
    os.unlink(logfile)

    # A link at the pid file (a stale one): replaced by the new pid file, its target untouched.
    victim2 = os.path.join(env.dir, "victim2")
    with open(victim2, "w") as f:
        f.write("victim2\n")
    pidfile = os.path.join(data, "leafd.pid")
    os.symlink(victim2, pidfile)
    rc, out = leafctl("start", conf=conf)
    check(rc == 0 and "ready" in out, "start with a stale link at the pid file: %d %s" % (rc, out))
    check(open(victim2).read() == "victim2\n", "the pid file's link target is not written")
    check(not os.path.islink(pidfile) and open(pidfile).read().strip().isdigit(),
          "the pid file is a regular file with the pid")
    check(not os.path.islink(logfile) and os.path.isfile(logfile), "the log is a regular file")

    # demote with the token from leafd.admin.token.file; curl's arguments recorded.
    curl_dir = os.path.join(env.dir, "curlshim")
    os.makedirs(curl_dir)
    curl_log = os.path.join(env.dir, "curl-argv")
    with open(os.path.join(curl_dir, "curl"), "w") as f:
        f.write("#!/bin/sh\nprintf '%%s\\n' \"$*\" >>%s\nexec /usr/bin/curl \"$@\"\n" % curl_log)
    os.chmod(os.path.join(curl_dir, "curl"), 0o755)
    rc, out = leafctl("demote", conf=conf,
                      env_extra={"PATH": curl_dir + ":" + os.environ.get("PATH", "")})
    check(rc == 1 and "sequence" in out and "unauthorized" not in out,
          "demote authenticated with leafd.admin.token.file (sequences are off): %d %s" % (rc, out))
    check(os.path.exists(curl_log) and TOKEN not in open(curl_log).read(),
          "the token is not on curl's command line")
    logtext = open(logfile).read()
    check("inline" not in logtext and TOKEN not in logtext,
          "a 0600 configuration with the token in a file: no warn line, no token in the log")
    rc, out = leafctl("stop", conf=conf)
    check(rc == 0 and "stopped" in out, "stop: %d %s" % (rc, out))

    # The token inline in a configuration others may read: a warn line at start, naming the key
    # and the file, not the token.
    inline = "tok-4c1a0e-inline-in-a-0644-file"
    write_props(conf, static_props(4, **{"leafd.listen": "127.0.0.1:%d" % port,
                                         "leafd.data.dir": "data",
                                         "leafd.admin.token": inline}), 0o644)
    size = os.path.getsize(logfile)
    rc, out = leafctl("start", conf=conf)
    check(rc == 0, "start with the token inline: %d %s" % (rc, out))
    with open(logfile) as f:
        f.seek(size)
        started = f.read()
    warn = [l for l in started.splitlines() if "level=warn" in l and "leafd.admin.token" in l]
    check(len(warn) == 1 and "inline in leafd.properties:" in warn[0] and
          "readable by group or others" in warn[0] and inline not in started,
          "one warn line names the key and the file, never the token: %s" % warn)
    rc, out = leafctl("stop", conf=conf)
    check(rc == 0, "stop: %d %s" % (rc, out))
    log("leafctl safety checks done")
    env.finish()
