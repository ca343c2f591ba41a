"""libleafd-client killed with -9 mid-run and started again: no ID it handed out, before or
after, repeats one handed out by it or by anyone else (other clients over HTTP, beside it). The
killed client's unused buffer is a gap, never reissued (docs/reference/guarantees.md).

The driver (tests/tools/client_load.c) writes the IDs it took as it goes (--out), so what the
killed process took is on disk."""
import glob
import json
import os
import signal
import struct
import subprocess
import threading

from leafdtest import Env, check, log, seg_props

LOAD = os.environ["CLIENT_LOAD_BIN"]
TAG = "restart"


class Puller(threading.Thread):
    """Another client: segment IDs over HTTP from one node, until stopped."""

    def __init__(self, node):
        super().__init__(daemon=True)
        self.node, self.ids, self.stop = node, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            st, body, _ = self.node.get("/api/segment/get/%s?count=500" % TAG)
            if st == 200:
                self.ids += [int(x) for x in body.split()]


def read_ids(prefix):
    ids = []
    for path in sorted(glob.glob(prefix + ".*")):
        with open(path, "rb") as f:
            data = f.read()
        data = data[:len(data) // 8 * 8]
        ids += struct.unpack("<%dq" % (len(data) // 8), data)
    return ids


def main():
    with Env() as env:
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('%s', 1, 20000)" % TAG)
        nodes = [env.leafd("a", seg_props(db)), env.leafd("b", seg_props(db))]
        endpoints = ",".join("http://127.0.0.1:%d" % n.port for n in nodes)
        # Patient callers (wait.ms, timeout.ms): on a loaded machine a refill may take seconds, and
        # what is checked here is that no call fails while a node serves.
        options = ("prefetch.min=5000;prefetch.max=100000;batch.max=20000;log=0;wait.ms=30000;"
                   "timeout.ms=10000")
        pullers = [Puller(nodes[0]), Puller(nodes[1])]
        for p in pullers:
            p.start()
        first = os.path.join(env.dir, "first")
        p = subprocess.Popen([LOAD, endpoints, options, "segment:" + TAG, "2", "2000000",
                              "--out", first, "--progress", "--pace", "10000", "2000"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in p.stdout:
            if line.startswith("progress") and int(line.split()[1]) >= 1200000:
                p.send_signal(signal.SIGKILL)
                break
        p.wait(30)
        check(p.returncode == -signal.SIGKILL, "the client was killed with -9 mid-run")
        before = read_ids(first)
        log("the killed client had taken %d IDs" % len(before))
        second = os.path.join(env.dir, "second")
        out = subprocess.run([LOAD, endpoints, options, "segment:" + TAG, "2", "500000",
                              "--out", second], capture_output=True, text=True, timeout=120)
        s = json.loads(out.stdout.splitlines()[-1])
        for p in pullers:
            p.stop.set()
            p.join(30)
        after = read_ids(second)
        others = [i for p in pullers for i in p.ids]
        log("started again: %r; %d IDs over HTTP beside it" % (s, len(others)))
        check(s["failed"] == 0 and len(after) == 1000000, "the second run took its 1,000,000 IDs")
        every = before + after + others
        check(len(before) >= 1000000, "the first run took IDs before the kill")
        check(len(set(every)) == len(every),
              "no ID repeated among %d (killed client, restarted client, HTTP clients)"
              % len(every))
        check(min(after) > max(before) or len(set(before) & set(after)) == 0,
              "the restarted client reissued nothing of the killed one's")
    env.finish()


if __name__ == "__main__":
    main()
