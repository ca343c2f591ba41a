"""The monitor pages as people see them, with many tags and three nodes:

/cache and /db filter (?tag=), sort, page (usable at tens of thousands of
tags: one page of rows, rendered fast), show the node's identity, the render
time, a refresh control, both buffers of a tag, links between the pages and
left-aligned text; /cluster lists the three live nodes with worker IDs,
clock offsets, report ages, modes and versions, says the cluster is healthy,
names the sequence primary and the tags with the least runway. No page loads
anything from elsewhere (no CDN, no external script or style). GET / is an
index linking the pages; /cluster before its first survey says "surveying"
(never "Live nodes (0)"); a standby's /cluster counts the primary's sequences.
"""
import json
import re
import time

from leafdtest import Env, check, http, log, wait_until
from zkhelpers import zk_props

TAGS = 20000


def page(node, path):
    t = time.monotonic()
    st, body, hdr = http(node.port, path, timeout=30)
    return st, body, hdr, time.monotonic() - t


def rows(body):
    return len(re.findall(r"<tr><td>", body))


def common(name, body):
    check("<!DOCTYPE html>" in body and "</html>" in body, "%s: a whole HTML page" % name)
    for link in ('href="/cluster"', 'href="/cache"', 'href="/db"', 'href="/ready"', 'href="/metrics"'):
        check(link in body, "%s: links to %s" % (name, link))
    check(re.search(r"rendered in [0-9.]+ ms", body), "%s: says how long it took to render" % name)
    check("rendered 20" in body and "UTC" in body, "%s: says when it was rendered" % name)
    check('name="refresh"' in body and "refresh now" in body, "%s: has a refresh control" % name)
    check("worker ID" in body and "modes:" in body and "listens on" in body,
          "%s: names this node (address, worker ID, modes)" % name)
    check(not re.search(r"""(src|href)=["']?(https?:)?//""", body.replace('href="http://127.0.0.1', "")),
          "%s: loads nothing from elsewhere" % name)
    check("<link" not in body and "cdn" not in body.lower(), "%s: no external style or CDN" % name)
    check("text-align:left" in body and 'class="n"' in body,
          "%s: text left-aligned, numbers right-aligned" % name)


env = Env()
zk = env.zookeeper()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) SELECT "
       "CONCAT('tag-', LPAD(seq, 6, '0')), 1, 1000, CONCAT('load tag ', seq) FROM seq_1_to_%d" % TAGS)
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES "
       "('orders', 1, 100, '订单'), ('payments', 1, 50, 'payments')")
seg = {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(), "leaf.jdbc.username": "leaf",
       "leaf.jdbc.password": "leafpw", "leafd.sequence.enable": "true"}
nodes = [env.leafd("n%d" % i, zk_props(zk.address(), **seg), wait_ready=False) for i in range(3)]
for n in nodes:
    check(n.wait_ready(60), "node %s ready" % n.name)
a = nodes[0]
for i in range(200):
    a.get("/api/segment/get/orders?count=5")
for i in range(1, 300):
    a.get("/api/segment/get/tag-%06d" % i)
a.get("/api/segment/get/payments?count=45")

log("/cache")
st, body, _, took = page(a, "/cache")
check(st == 200, "/cache 200")
common("/cache", body)
log("/cache with %d tags in the table: %d bytes in %.3f s" % (TAGS + 2, len(body), took))
check(rows(body) == 100, "/cache shows one page of 100 rows (got %d)" % rows(body))
# Only the tags asked for have buffers (docs/design.md, "Segment IDs": memory follows the tags used): 301 here;
# the page also says how many the table holds.
check("of 301," in body, "/cache counts every tag in this node's memory: %r"
      % re.findall(r"rows [^<]*", body)[:1])
check("%d tags in leaf_alloc" % (TAGS + 2) in body, "/cache counts every tag in the table")
check(took < 3, "/cache renders in under 3 s with %d tags (%.2f s)" % (TAGS, took))
check("next range (second buffer)" in body and "current range" in body, "/cache shows both buffers")
st, body, _, _ = page(a, "/cache?tag=orders")
check(rows(body) == 1 and ">orders<" in body, "/cache?tag=orders shows that tag only")
check("ready: " in body or "fetching" in body or "not yet" in body, "the second buffer's state is shown")
st, body, _, _ = page(a, "/cache?tag=TAG-0001&per=5")
check(rows(body) == 5 and "matching" in body and "next" in body,
      "case-insensitive filter with pages of 5 and a next link (rows %d)" % rows(body))
st, body, _, _ = page(a, "/cache?tag=tag-00&sort=tag&desc=1&page=2&per=10")
names = re.findall(r"<tr><td>(tag-\d+)</td>", body)
check(len(names) == 10 and names == sorted(names, reverse=True) and names[0] < "tag-009990",
      "sorted descending, page 2: %r" % names[:3])
st, body, _, _ = page(a, "/cache?sort=issued&desc=1&per=3")
first = re.findall(r"<tr><td>([^<]+)</td>", body)
check(first[:1] == ["orders"], "sorted by issued, most first: orders (got %r)" % first)
st, body, _, _ = page(a, "/cache?tag=%3Cscript%3E")
check("<script>alert" not in body and rows(body) == 100, "a filter outside the tag alphabet is ignored")

log("/db")
st, body, _, took = page(a, "/db")
check(st == 200, "/db 200")
common("/db", body)
log("/db with %d rows: %d bytes in %.3f s" % (TAGS + 2, len(body), took))
check(rows(body) == 100 and "of %d" % (TAGS + 2) in body, "/db: one page of 100 of all rows")
st, body, _, _ = page(a, "/db?tag=orders")
check(rows(body) == 1 and "订单" in body, "/db?tag=orders: the row, description in UTF-8")
st, body, _, _ = page(a, "/db?sort=max_id&desc=1&per=2")
top = re.findall(r"<tr><td>([^<]+)</td>", body)
check(top and top[0] == "orders", "/db sorted by max_id, highest first: %r" % top)

log("/ (the index)")
st, body, _, _ = page(a, "/")
check(st == 200 and "<!DOCTYPE html>" in body and "</html>" in body, "/ 200, a whole HTML page")
for link in ('href="/cluster"', 'href="/cache"', 'href="/db"', 'href="/ready"', 'href="/metrics"'):
    check(link in body, "/: links to %s" % link)
check("<link" not in body and "//" not in body.replace("http://127.0.0.1", ""),
      "/: loads nothing from elsewhere")
check('href="/api/segment/get/leaf-segment-test"' in body and 'href="/health"' in body,
      "/ links the ID endpoints of the modes on and /health")

log("/cluster")
st, body, _, _ = page(a, "/cluster")
check(st == 200, "/cluster 200")
check("Live nodes (0)" not in body, "the first /cluster does not say the cluster is empty: %s"
      % body[body.find("<h3>"):][:300])
def settled():
    b = page(a, "/cluster")[1]
    table = b[b.find("Live nodes"):]
    return "Live nodes (3)" in b and "healthy" in b and table.count("sequence (standby)") == 2


ok = wait_until(settled, 30, interval=0.5)
st, body, _, took = page(a, "/cluster")
common("/cluster", body)
check(ok, "/cluster finds the three live nodes and calls the cluster healthy:\n%s" % body[body.find("<h2>"):][:1200])
for n in nodes:
    check("127.0.0.1:%d" % n.port in body, "/cluster lists %s" % n.name)
check(len(re.findall(r">\d+\.\d+\.\d+<", body)) >= 3, "/cluster shows the nodes' versions")
st, cj, hdr, _ = page(a, "/cluster?format=json")
try:
    cj = json.loads(cj)
except ValueError:
    cj = {}
check(st == 200 and hdr.get("Content-Type", "").startswith("application/json"),
      "/cluster?format=json answers JSON: %d %s" % (st, hdr))
check(re.fullmatch(r"\d+\.\d+\.\d+", cj.get("node", {}).get("version", "")) is not None,
      "/cluster's JSON names this node's version: %s" % cj.get("node"))
check(len([n for n in cj.get("nodes", []) if n.get("version") == cj["node"]["version"]]) == 3,
      "/cluster's JSON shows each live node's version: %s" % cj.get("nodes"))
check(len(re.findall(r"[+-]\d+ ms</td>", body)) >= 3, "/cluster shows clock offsets")
check(body.count("s ago</td>") >= 3, "/cluster shows the age of each node's last report")
table = body[body.find("Live nodes"):]
check("sequence (primary)" in table and table.count("sequence (standby)") == 2,
      "/cluster shows the modes, one primary and two standbys: %s"
      % body[body.find("Live nodes"):][:2500])
check("primary: <b>" in body, "/cluster names the sequence primary")
# orders (1,000 IDs in a burst) or payments (45 of a 50-ID range taken) leads the list; which
# one depends on when the page is drawn: a tag's rate is measured since its last range fetch,
# and orders' dynamic step may have grown its buffer past the 20,000 idle tags' runway by then.
check("least runway" in body and (">orders<" in body or ">payments<" in body),
      "/cluster lists the tags with the least runway: %s" % body[body.find("least runway"):][:1500])
check("(this node)" in body, "/cluster marks this node")

log("a standby's /cluster counts the primary's sequences")
primary = next(n for n in nodes if '"role":"primary"' in n.get("/ready")[1])
standby = next(n for n in nodes if n is not primary)
for name in ("seq-a", "seq-b", "seq-c"):
    st_, b_, _ = primary.get("/api/sequence", method="POST", body='{"name":"%s"}' % name)
    check(st_ == 201, "POST /api/sequence %s: %d %s" % (name, st_, b_))
    primary.get("/api/sequence/get/%s" % name)
page(standby, "/cluster")  # starts its survey
ok = wait_until(lambda: "3 sequences" in page(standby, "/cluster")[1], 20, interval=0.5)
body = page(standby, "/cluster")[1]
check(ok, "a standby's /cluster shows the primary's 3 sequences: %s"
      % body[body.find("Sequences"):][:400])

log("a node goes away: /cluster says so")
nodes[2].stop()
ok = wait_until(lambda: "Live nodes (2)" in page(a, "/cluster")[1], 30, interval=0.5)
check(ok, "/cluster follows a stopped node out")
env.finish()
