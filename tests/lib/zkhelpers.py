"""Helpers shared by the ZooKeeper integration tests (tests/integration/test_zk_*.py)."""
import http.client as httpclient
import os
import re
import subprocess
import threading
import time

from leafdtest import check, log, wait_until

EPOCH = 1288834974657
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


def zk_props(zk_address, name="it", **extra):
    p = {"leaf.name": name, "leaf.snowflake.enable": "true",
         "leaf.snowflake.zk.address": zk_address,
         "leafd.snowflake.advertise.ip": "127.0.0.1"}
    p.update(extra)
    return p


def worker_of(id_):
    return (id_ >> 12) & 1023


def ms_of(id_):
    return (id_ >> 22) + EPOCH


def faketime_env(spec=None, timestamp_file=None):
    """Environment that fakes only the wall clock of a leafd process."""
    e = {"LD_PRELOAD": FAKETIME_LIB, "DONT_FAKE_MONOTONIC": "1",
         "ASAN_OPTIONS": "verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", "")}
    if spec is not None:
        e["FAKETIME"] = spec
    if timestamp_file is not None:
        e["FAKETIME_TIMESTAMP_FILE"] = timestamp_file
        e["FAKETIME_NO_CACHE"] = "1"
    return e


def cli_list(zk, path):
    """Children of a znode via zkCli.sh ls (None when the node does not exist)."""
    out = zk.cli("ls", path)
    for line in reversed(out.splitlines()):
        if line.startswith("[") and line.endswith("]"):
            inner = line[1:-1].strip()
            return [x.strip() for x in inner.split(",")] if inner else []
    return None


def cli_get(zk, path):
    """Data of a znode via zkCli.sh get (the JSON line), or None."""
    out = zk.cli("get", path)
    for line in out.splitlines():
        if line.startswith("{"):
            return line
    return None


def session_id(node):
    """The latest ZooKeeper session id leafd logged (hex string)."""
    found = re.findall(r"ZooKeeper session (0x[0-9a-f]+) established", node.log_text())
    return found[-1] if found else None


def expire_session(zk_address, sid):
    r = subprocess.run([os.environ["ZK_EXPIRE_BIN"], zk_address, sid], capture_output=True,
                       text=True, timeout=30)
    log("zk_expire: " + (r.stdout + r.stderr).strip())
    return r.returncode == 0


def ready_json(node):
    import json
    st, body, _ = node.get("/ready")
    return st, json.loads(body)


def wait_ephemeral(nodes, timeout=10):
    """Waits until every node's /ready says its ephemeral node under leaf_temporary exists:
    /ready 200 promises a worker ID held, not that node yet. True when all did in time."""
    return bool(wait_until(lambda: all(ready_json(n)[1]["snowflake"]["zookeeper"]["ephemeral"]
                                       for n in nodes), timeout, 0.1))


def start_expect_exit(node, extra_env=None, timeout=40):
    """Starts leafd expecting it to refuse; returns (exit code, log)."""
    node.start(wait_ready=False, extra_env=extra_env)
    rc = node.wait_exit(timeout)
    if rc is None:
        node.stop()
    return rc, node.log_text()


class Load(threading.Thread):
    """Requests IDs from nodes in a loop until stopped (bounded by max_s); records
    every non-200 answer and checks each node's IDs strictly increase."""

    def __init__(self, nodes, count=50, max_s=120, pause=0.005):
        super().__init__(daemon=True)
        self.nodes = nodes
        self.count = count
        self.max_s = max_s
        self.pause = pause
        self.stop_flag = threading.Event()
        self.errors = []
        self.ids = {n.port: [] for n in nodes}
        self.requests = 0

    def run(self):
        conns = {}
        end = time.time() + self.max_s
        while not self.stop_flag.is_set() and time.time() < end:
            for n in self.nodes:
                try:
                    c = conns.get(n.port) or httpclient.HTTPConnection("127.0.0.1", n.port,
                                                                      timeout=5)
                    conns[n.port] = c
                    c.request("GET", "/api/snowflake/get/load?count=%d" % self.count)
                    r = c.getresponse()
                    body = r.read().decode()
                    self.requests += 1
                    if r.status != 200:
                        self.errors.append((n.port, r.status, body[:200]))
                    else:
                        self.ids[n.port].extend(int(x) for x in body.split("\n"))
                except Exception as e:  # a broken connection is an error too
                    self.errors.append((n.port, "exception", repr(e)))
                    conns.pop(n.port, None)
            time.sleep(self.pause)

    def finish(self):
        self.stop_flag.set()
        self.join(30)
        for port, ids in self.ids.items():
            check(all(a < b for a, b in zip(ids, ids[1:])),
                  "IDs of node %d strictly increase under load" % port)
        return self.errors
