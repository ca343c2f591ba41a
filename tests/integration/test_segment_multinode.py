"""Two, then three leafd nodes pulling one tag concurrently from one MariaDB
(single IDs and batches), with a Leaf-style writer bumping max_id by hand in
between: no ID is issued twice, and each node's IDs ascend.

Covers the segment guarantee: any number of nodes on one database
never issue the same ID for a tag; each node's IDs for a tag ascend."""
import http.client as httpclient
import threading
import time

from leafdtest import Env, check, log


def seg_props(db):
    return {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
            "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw"}


class Puller(threading.Thread):
    """Pulls IDs over one keep-alive connection until stopped; keeps them in order."""

    def __init__(self, node, tag, count):
        super().__init__(daemon=True)
        self.node, self.tag, self.count = node, tag, count
        self.batches, self.errors = [], []
        self.stop_at = 0

    def run(self):
        conn = httpclient.HTTPConnection("127.0.0.1", self.node.port, timeout=10)
        path = "/api/segment/get/%s?count=%d" % (self.tag, self.count)
        while time.time() < self.stop_at:
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read().decode()
            except Exception as e:  # noqa: BLE001 - recorded and reported
                self.errors.append(repr(e))
                conn.close()
                conn = httpclient.HTTPConnection("127.0.0.1", self.node.port, timeout=10)
                continue
            if r.status != 200:
                self.errors.append("%d %s" % (r.status, body))
                continue
            self.batches.append([int(x) for x in body.split("\n")])
        conn.close()


class LeafWriter(threading.Thread):
    """Does what a Leaf server does: UPDATE max_id = max_id + step, now and then."""

    def __init__(self, db, tag):
        super().__init__(daemon=True)
        self.db, self.tag, self.stop_at, self.bumps = db, tag, 0, 0

    def run(self):
        while time.time() < self.stop_at:
            self.db.sql("UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = '%s'"
                        % self.tag)
            self.bumps += 1
            time.sleep(0.05)


def run_round(db, nodes, tag, seconds, writer):
    pullers = []
    for n in nodes:
        pullers += [Puller(n, tag, 1), Puller(n, tag, 1), Puller(n, tag, 37), Puller(n, tag, 500)]
    threads = pullers + ([LeafWriter(db, tag)] if writer else [])
    end = time.time() + seconds
    for t in threads:
        t.stop_at = end
        t.start()
    for t in threads:
        t.join(seconds + 30)
    all_ids = []
    for p in pullers:
        check(not p.errors, "no errors from %s count=%d: %r" % (p.node.name, p.count, p.errors[:3]))
        flat = [i for b in p.batches for i in b]
        check(all(a < b for a, b in zip(flat, flat[1:])),
              "%s count=%d: IDs ascend across %d responses" % (p.node.name, p.count, len(p.batches)))
        check(all(len(b) == p.count for b in p.batches), "every batch has count IDs")
        all_ids += flat
    dupes = len(all_ids) - len(set(all_ids))
    check(dupes == 0, "no duplicate among %d IDs (%d duplicates)" % (len(all_ids), dupes))
    check(all(i > 0 for i in all_ids), "every ID positive")
    per_node = {n.name: sum(len(b) for p in pullers if p.node is n for b in p.batches) for n in nodes}
    log("%s: %d IDs %r%s" % (tag, len(all_ids), per_node,
                             ", writer bumped %d times" % threads[-1].bumps if writer else ""))
    check(all(v > 0 for v in per_node.values()), "every node issued IDs")
    return all_ids


env = Env()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('two', 1, 100), ('three', 1, 100),"
       " ('mixed', 1, 100)")
nodes = [env.leafd("n%d" % i, seg_props(db)) for i in (1, 2, 3)]

log("two nodes, one tag, single IDs and batches")
run_round(db, nodes[:2], "two", 4, writer=False)
log("three nodes, one tag")
run_round(db, nodes, "three", 4, writer=False)
log("three nodes and a Leaf-style writer bumping max_id by hand")
ids = run_round(db, nodes, "mixed", 4, writer=True)
top = int(db.sql("SELECT max_id FROM leaf_alloc WHERE biz_tag='mixed'").strip())
check(max(ids) < top, "every ID is below the table's max_id (%d < %d)" % (max(ids), top))
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
