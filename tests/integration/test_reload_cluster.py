"""In-place binary upgrade in a cluster (docs/UPGRADING.md, "In place, without a restart").

Two forever-mode nodes with sequences and RESP under one leaf.name; n0 (the
first) is the sequence primary and also has an HTTPS listener. Under load on
n0 (a sequence client over HTTP keep-alive that reconnects on
`Connection: close`, a snowflake client over HTTPS keep-alive, and ioredis
with default settings asking for sequence and snowflake IDs over RESP),
`kill -USR2` replaces n0's process:
- n0 stays the sequence primary: its election znode is the same node (name
  and ephemeralOwner) before and after, n1 still redirects to n0, the new
  process logs that it kept its place in line, and no client ever saw a
  redirect or an error (0 failed, 0 refused, 0 ioredis errors);
- every sequence ID is unique across the clients, and each client's IDs
  strictly increase across the hand-over;
- the HTTPS listener survives (the client goes on over it).
n1, upgraded with sequences turned off, deletes the election node it adopted
(else it would stay in line with nobody serving behind it).
Then a lease-mode node is upgraded: it keeps its slot (the same worker ID, the
slot's owner node the same ephemeral node of the same session, one owner
node for the identity). Last, a segment node (MariaDB, step 100) is upgraded
under two keep-alive clients: 0 failed, 0 duplicates, each client's IDs
increasing. The longest pause each client saw is logged.

ioredis comes from LEAFD_NODE_DIR (test_resp_clients installs it there);
without it that client is skipped with a message.
"""
import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import threading
import time

from leafdtest import (Env, check, free_port, http as http_get, log, pid_alive, seg_props,
                       wait_until, zkcli)
from seqcluster import probe
from zkhelpers import worker_of, zk_props

SEQ = "rs"


def upgrade(node, pid, label, timeout=40):
    """kill -USR2 pid; waits for the hand-over and the old pid's exit; returns the new pid."""
    pat = r"handed over to pid (\d+)"
    before = len(re.findall(pat, node.log_text()))
    os.kill(pid, signal.SIGUSR2)
    ok = wait_until(lambda: len(re.findall(pat, node.log_text())) > before, timeout, 0.05)
    check(ok, "%s: the old process handed over" % label)
    if not ok:
        log(node.log_text()[-3000:])
        return None
    new = int(re.findall(pat, node.log_text())[-1])
    check(wait_until(lambda: not pid_alive(pid), 20, 0.05), "%s: the old pid %d is gone" % (label, pid))
    check(wait_until(lambda: http_get(node.port, "/ready")[0] == 200, 30, 0.05),
          "%s: the new process (pid %d) is ready" % (label, new))
    return new


def stop_last(node, pid):
    if pid != node.proc.p.pid and pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        check(wait_until(lambda: not pid_alive(pid), 20, 0.1), "%s: the last process stops" % node.name)
        check("Sanitizer" not in node.log_text(), "%s: no sanitizer report" % node.name)


def znode_owners(paths):
    """{path: ephemeralOwner} of nodes that exist, with one zkCli run (stat blocks in order)."""
    if not paths:
        return {}
    text = zkcli(zk.address(), [("stat", p) for p in paths])[0]
    blocks = text.split("cZxid = ")[1:]
    res = {}
    for p, b in zip(paths, blocks):
        m = re.search(r"ephemeralOwner = (0x[0-9a-f]+)", b)
        res[p] = m.group(1) if m else None
    check(len(blocks) == len(paths), "zkCli stat answered for every node (%d of %d)"
          % (len(blocks), len(paths)))
    return res


def election(name):
    """{child: ephemeralOwner} under /leafd/<name>/primary."""
    kids = zkcli(zk.address(), [("ls", "/leafd/%s/primary" % name)])[0]
    names = sorted(set(re.findall(r"n_\d+", kids or "")))
    owners = znode_owners(["/leafd/%s/primary/%s" % (name, k) for k in names])
    return {k.rsplit("/", 1)[1]: v for k, v in owners.items()}


def make_cert(d):
    key, pem = os.path.join(d, "srv.key"), os.path.join(d, "srv.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", pem, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return pem, key


class Client(threading.Thread):
    """kind: seq (HTTP sequence, no redirect followed), tls (HTTPS snowflake), seg (segment)."""

    def __init__(self, kind, port, ca=None):
        super().__init__(daemon=True)
        self.kind, self.port, self.ca = kind, port, ca
        self.stop_flag = threading.Event()
        self.ids, self.errors, self.failed, self.bad_order = [], [], 0, 0
        self.max_pause, self.count, self.reconnects = 0.0, 0, 0

    def conn(self):
        if self.kind == "tls":
            ctx = ssl.create_default_context(cafile=self.ca)
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=20, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)

    def run(self):
        c, last = None, time.monotonic()
        path = {"seq": "/api/sequence/get/%s" % SEQ, "tls": "/api/snowflake/get/rc",
                "seg": "/api/segment/get/rt"}[self.kind]
        while not self.stop_flag.is_set():
            try:
                if c is None:
                    c = self.conn()
                c.request("GET", path)
                r = c.getresponse()
                body = r.read().decode()
                if r.status != 200:
                    raise RuntimeError("HTTP %d %s" % (r.status, body[:80]))
                got = int(body.strip().split("\n")[0])
                if (r.getheader("Connection") or "").lower() == "close":
                    c.close()
                    c = None
                    self.reconnects += 1
            except Exception as e:  # noqa: BLE001 - every failure counts
                self.failed += 1
                if len(self.errors) < 5:
                    self.errors.append(repr(e))
                if c is not None:
                    c.close()
                    c = None
                time.sleep(0.01)
                continue
            now = time.monotonic()
            if self.ids and got <= self.ids[-1]:
                self.bad_order += 1
            self.ids.append(got)
            self.max_pause = max(self.max_pause, now - last)
            self.count += 1
            last = now


IOREDIS_JS = r"""
const Redis = require("ioredis");
const fs = require("fs");
const [port, stop] = [parseInt(process.argv[1]), process.argv[2]];
const r = new Redis({host: "127.0.0.1", port: port});   // default settings
r.on("error", () => {});   // connection events; a failed command rejects its promise
(async () => {
  const seq = [], errors = [];
  let nerr = 0, n = 0, maxPause = 0, last = Date.now();
  const end = Date.now() + 45000;
  while (!fs.existsSync(stop) && Date.now() < end) {
    try {
      seq.push(await r.incr("sequence:%s"));
      await r.incr("snowflake:rc");
      n++;
      const now = Date.now();
      maxPause = Math.max(maxPause, now - last);
      last = now;
    } catch (e) {
      nerr++;
      if (errors.length < 5) errors.push(String(e));
    }
  }
  console.log(JSON.stringify({n, nerr, errors, maxPause, seq}));
  r.disconnect();
})();
""" % SEQ


def start_ioredis(port, stop):
    node_dir = os.environ.get("LEAFD_NODE_DIR", "")
    if not os.path.isdir(os.path.join(node_dir, "node_modules", "ioredis")):
        log("SKIP ioredis: no ioredis in LEAFD_NODE_DIR (test_resp_clients installs it)")
        return None
    return subprocess.Popen(["node", "-e", IOREDIS_JS, str(port), stop], cwd=node_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules")))


env = Env()
zk = env.zookeeper()
pem, key = make_cert(env.dir)
tls_port = free_port()
common = {"leafd.sequence.enable": "true", "leafd.sequence.batch": "100",
          "leafd.sequence.autocreate": "true", "leafd.zk.session.timeout.ms": "6000"}
n0 = env.leafd("n0", zk_props(zk.address(), name="rc", **dict(common, **{
    "leafd.tls.listen": "127.0.0.1:%d" % tls_port, "leafd.tls.cert.file": pem,
    "leafd.tls.key.file": key})), resp=True)
check(n0.wait_sequence(SEQ, 30) == 200, "n0 serves the sequence %s (primary)" % SEQ)
n1 = env.leafd("n1", zk_props(zk.address(), name="rc", **common), resp=True)
check(wait_until(lambda: probe(n1)[:3:2] == (307, "127.0.0.1:%d" % n0.port), 10, 0.05),
      "n1 is a standby that redirects to n0: %s" % (probe(n1),))
pids0 = [n0.proc.p.pid]
pids1 = [n1.proc.p.pid]
lease_pids = []
seg_pids = []
try:
    before = election("rc")
    log("election before: %s" % before)
    check(len(before) == 2, "two election nodes before")
    mine = [k for k, v in before.items() if k == min(before)]
    stopfile = os.path.join(env.dir, "ioredis.stop")
    io = start_ioredis(n0.resp_port, stopfile)
    cl = [Client("seq", n0.port), Client("tls", tls_port, ca=pem)]
    for c in cl:
        c.start()
    time.sleep(1.5)
    new = upgrade(n0, pids0[-1], "n0")
    time.sleep(1.5)
    for c in cl:
        c.stop_flag.set()
    open(stopfile, "w").close()
    for c in cl:
        c.join(30)
    res = None
    if io is not None:
        out, err = io.communicate(timeout=60)
        try:
            res = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            check(False, "ioredis printed its result: %s %s" % (out[-300:], err[-500:]))
    if new is not None:
        pids0.append(new)
        check(n0.proc.p.wait(10) == 0, "the old n0 process exited 0")
    for c in cl:
        log("%s client: %d requests, %d failed, %d reconnects, longest pause %.0f ms, errors %s"
            % (c.kind, c.count, c.failed, c.reconnects, c.max_pause * 1000, c.errors[:3]))
        check(c.failed == 0, "%s client: 0 failed requests (%s)" % (c.kind, c.errors[:3]))
        check(c.bad_order == 0, "%s client: its IDs strictly increase" % c.kind)
        check(c.count > 0 and c.ids, "%s client got IDs" % c.kind)
    check(cl[1].reconnects >= 1, "the HTTPS client was moved to the new process (%d reconnects)"
          % cl[1].reconnects)
    seq_all = list(cl[0].ids)
    if res is not None:
        log("ioredis: %d rounds, %d errors %s, longest pause %d ms"
            % (res["n"], res["nerr"], res["errors"][:3], res["maxPause"]))
        check(res["nerr"] == 0, "ioredis with default settings: 0 errors (%s)" % res["errors"][:3])
        check(res["n"] > 0, "ioredis got IDs")
        check(all(a < b for a, b in zip(res["seq"], res["seq"][1:])),
              "ioredis: its sequence IDs strictly increase")
        seq_all += res["seq"]
    check(len(seq_all) == len(set(seq_all)), "no sequence ID twice across the clients (%d, %d "
          "distinct)" % (len(seq_all), len(set(seq_all))))
    after = election("rc")
    log("election after: %s" % after)
    check(after == before, "the same election znodes with the same owners after the upgrade "
          "(%s -> %s)" % (before, after))
    check(probe(n0)[0] == 200, "n0 is still the sequence primary")
    check(probe(n1)[0] == 307 and probe(n1)[2] == "127.0.0.1:%d" % n0.port,
          "n1 still redirects to n0")
    check("kept my place in line for sequence primary as %s" % mine[0] in n0.log_text(),
          "the new process logged that it kept %s" % mine[0])
    check("no longer the sequence primary" not in n1.log_text() and
          "elected sequence primary" not in n1.log_text(), "n1 never became primary")
    check(http_get(n0.port, "/api/snowflake/get/rc")[0] == 200, "n0 serves snowflake after")
    gap = re.findall(r"accepting again (\d+) ms after", n0.log_text())
    log("gap logged by the new process: %s ms" % gap)

    log("n1 upgraded with sequences turned off leaves the line")
    conf = open(n1.conf).read()
    with open(n1.conf, "w") as f:
        f.write(conf.replace("leafd.sequence.enable = true", "leafd.sequence.enable = false"))
    new1 = upgrade(n1, n1.proc.p.pid, "n1")
    if new1 is not None:
        pids1.append(new1)
        left = election("rc")
        check(set(left) == {mine[0]}, "only n0's election node is left (%s)" % left)
        check("left the line: deleted" in n1.log_text(), "n1's new process logged that it left")
        check(probe(n0)[0] == 200, "n0 is still the sequence primary")

    log("lease mode keeps its slot")
    l0 = env.leafd("l0", zk_props(zk.address(), name="rl", **{
        "leafd.snowflake.worker.mode": "lease", "leafd.zk.session.timeout.ms": "6000"}))
    lease_pids.append(l0.proc.p.pid)
    w0 = worker_of(l0.get_ids("/api/snowflake/get/rl")[0])
    lease = "/snowflake/rl/leaf_lease"

    def owners():
        tree = zkcli(zk.address(), [("ls", "-R", lease)])[0] or ""
        paths = sorted(set(re.findall(r"%s/\d+/owner" % lease, tree)))
        return znode_owners(paths)

    o_before = owners()
    log("lease owners before: %s (worker %d)" % (o_before, w0))
    new = upgrade(l0, lease_pids[-1], "l0")
    if new is not None:
        lease_pids.append(new)
        ids = l0.get_ids("/api/snowflake/get/rl?count=5")
        w1 = worker_of(ids[0])
        o_after = owners()
        log("lease owners after: %s (worker %d)" % (o_after, w1))
        check(w1 == w0, "lease mode: the same worker ID after the upgrade (%d, %d)" % (w0, w1))
        check(o_after == o_before and len(o_after) == 1,
              "lease mode: the same one owner node, same session (%s -> %s)" % (o_before, o_after))
        check("is still held by the adopted ZooKeeper session" in l0.log_text(),
              "lease mode: the new process logged that it took its slot back")

    log("segment IDs under load across an upgrade")
    db = env.mariadb()
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('rt', 1, 100, '')")
    s0 = env.leafd("s0", seg_props(db))
    seg_pids.append(s0.proc.p.pid)
    cl = [Client("seg", s0.port) for _ in range(2)]
    for c in cl:
        c.start()
    time.sleep(1.0)
    new = upgrade(s0, seg_pids[-1], "s0")
    time.sleep(1.0)
    for c in cl:
        c.stop_flag.set()
    for c in cl:
        c.join(30)
    if new is not None:
        seg_pids.append(new)
    ids = [x for c in cl for x in c.ids]
    log("segment: %s requests, %s failed, longest pause %s ms, errors %s"
        % ([c.count for c in cl], [c.failed for c in cl],
           [round(c.max_pause * 1000) for c in cl], [c.errors[:2] for c in cl]))
    check(all(c.failed == 0 and c.bad_order == 0 and c.count > 0 for c in cl),
          "segment clients: 0 failed, each client's IDs increase")
    check(len(ids) == len(set(ids)), "segment: 0 duplicates across the upgrade (%d IDs, %d distinct)"
          % (len(ids), len(set(ids))))
finally:
    stop_last(n0, pids0[-1])
    stop_last(n1, pids1[-1])
    if lease_pids:
        stop_last(l0, lease_pids[-1])
    if seg_pids:
        stop_last(s0, seg_pids[-1])
env.finish()
