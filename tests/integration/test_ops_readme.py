"""The shell examples of README.md and the guide, run against a node, so they stay honest.

A node with static snowflake, segments (MariaDB), the Redis protocol and
the opaque key of the guide's example. From every sh (or plain) block of each
page in PAGES (README.md and the guide pages that hold examples; a page that
gains examples joins the list):

- each `curl` or `redis-cli` line is run with the node's ports put in for
  8080 and 6380; it must exit 0, reach an endpoint (no 404 not_found) and a
  command leafd knows (no "unknown command");
- a transcript (lines starting `$ ` followed by what they print) is run in
  order and what each command prints must be what the page shows (the opaque
  worked example: fixed key, fresh tag, so its IDs are exact). The `mariadb`
  line of a transcript is run as SQL on the test's database.

Blocks that log in as a user (curl -u, redis-cli --user) need users in
ZooKeeper: test_auth covers them; they are skipped here, and so are the TLS
examples (test_tls).
"""
import os
import re
import subprocess

from leafdtest import Env, check, log, static_props

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def blocks(text):
    """(first line number, lines) of each sh / bash / console / plain fenced block."""
    out, cur, lang, start = [], None, None, 0
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if cur is None:
                lang, cur, start = line[3:].strip() or "plain", [], i + 1
            else:
                if lang in ("sh", "bash", "console", "plain"):
                    out.append((start, cur))
                cur = None
            continue
        if cur is not None:
            cur.append(line)
    return out


def is_example(cmd):
    # TLS examples name a certificate and a host of the reader's: test_tls runs them.
    tls = "https://" in cmd or "--tls" in cmd
    return cmd.startswith(("curl ", "redis-cli ")) and not tls


PAGES = ["README.md", "docs/getting-started.md", "docs/cluster.md", "docs/id-shapes.md",
         "docs/SECURITY.md", "docs/reference/http.md", "docs/reference/resp.md"]
texts = {page: open(os.path.join(ROOT, page)).read() for page in PAGES}
key = re.search(r"leafd\.opaque\.key = ([0-9a-f]{32})", "\n".join(texts.values()))
check(key is not None, "a page names the opaque example's key")

env = Env()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('leaf-segment-test', 1, 2000)")
props = static_props(worker=7, **{"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
                                  "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw",
                                  "leafd.opaque.key": key.group(1) if key else "0" * 32})
node = env.leafd("n1", props, resp=True)


def localize(cmd):
    cmd = re.sub(r"(localhost|127\.0\.0\.1):8080", "127.0.0.1:%d" % node.port, cmd)
    return cmd.replace("-p 6380", "-p %d" % node.resp_port)


def run(cmd):
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout + r.stderr


def plain_check(where, cmd):
    rc, out = run(localize(cmd))
    check(rc == 0 and '"code":"not_found"' not in out and "unknown command" not in out.lower(),
          "%s line %d runs: %s -> %d %s" % (page, where, cmd, rc, out[:200]))


ran = transcripts = 0
for page, start, lines in [(p, s, ls) for p in PAGES for s, ls in blocks(texts[p])]:
    text = "\n".join(lines)
    if " -u " in text or "--user " in text:
        continue  # users: test_auth
    if any(l.startswith("$ ") for l in lines):
        # A transcript: each "$ command" (continued by a trailing backslash) and its output.
        i, steps = 0, []
        while i < len(lines):
            if not lines[i].startswith("$ "):
                i += 1
                continue
            at, cmd = start + i, lines[i][2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + lines[i].strip()
            i += 1
            shown = []
            while i < len(lines) and not lines[i].startswith("$ "):
                shown.append(lines[i])
                i += 1
            steps.append((at, cmd.split("  #")[0].strip(), [s for s in shown if s.strip()]))
        if not any(is_example(c) for _, c, _ in steps):
            continue
        transcripts += 1
        for at, cmd, shown in steps:
            if cmd.startswith(("mariadb ", "mysql ")):
                sql = re.search(r"-e \"(.*)\"", cmd)
                check(sql is not None, "%s line %d: SQL found" % (page, at))
                if sql:
                    db.sql(sql.group(1))
                continue
            if not is_example(cmd):
                continue
            if cmd.startswith("redis-cli "):
                cmd = cmd.replace("redis-cli ", "redis-cli --no-raw ", 1)
            rc, out = run(localize(cmd))
            ran += 1
            got = [l for l in out.splitlines() if l.strip()]
            check(rc == 0 and got == shown,
                  "%s line %d prints what the page shows: %s\n  page: %r\n  got:  %r"
                  % (page, at, cmd, shown, got))
        continue
    for j, line in enumerate(lines):
        cmd = line.split("  #")[0].strip()
        if is_example(cmd):
            ran += 1
            plain_check(start + j, cmd)
log("%d commands run, %d transcripts compared, from %s" % (ran, transcripts, ", ".join(PAGES)))
check(ran >= 5 and transcripts >= 1, "the pages' examples were found")
env.finish()
