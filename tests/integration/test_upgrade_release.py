"""Every release is tested against the previous one (docs/OPERATIONS.md, "Upgrading a
cluster"): the previous release, 1.0.0 (commit 209a81c), is built from git history
(tests/lib/releasebuild.py, cached under the build dir), and clusters of it are upgraded to
this build (LEAFD_BIN) node by node under continuous load from keep-alive HTTP clients (and a RESP client where the mode has
one). Each scenario counts IDs checked, duplicates (all of the scenario's IDs), IDs going
backwards on one connection and per worker ID / sequence, failed requests, and per node the
time /ready (polled every 20 ms) was not 200 from the stop to the new binary's first 200.

  forever   3 nodes of 1.0.0 -> this build after SIGTERM, then 3 more after kill -9: each node not
            ready for under 1 s (a kill -9 does not make the new binary wait out the old
            session);
  older     3 nodes of 0.1.0 (commit 42e24c4, whose cache records no session) -> this build after
            kill -9: under 1 s each too;
  lease     3 lease-mode nodes, rolling upgrade;
  sequence  3 nodes, rolling upgrade including the primary; strict order across the cluster
            (HTTP clients following the standbys' 307; no RESP client: it would follow -MOVED);
  segment   2 segment nodes on MariaDB, rolling upgrade; unique IDs, rising on a connection;
  opaque    2 segment nodes with leafd.opaque.key (HTTP and RESP opaque IDs), one upgraded:
            in the mixed period every opaque ID issued so far, by either version, decodes on
            both nodes to the same segment ID, all distinct (one permutation per tag in both
            releases); then the other node; unique IDs, no failed request;
  mixed     one 1.0.0 node beside two nodes of this build for 10 s, then a downgrade of one of
            them to 1.0.0: 0 duplicates, 0 backwards.

UPGRADE_SCENARIOS=forever,mixed runs a subset. Skips (77) only when the repository has no
history to build 1.0.0 from (a shallow clone). The ZooKeeper-down upgrade of an older cache is
test_upgrade_zk_down.py, the in-place upgrade from 1.0.0 test_upgrade_inplace.py; 0.2.0 ->
this build is also run by test_upgrade_users.py, test_upgrade_shard_gate.py and
test_upgrade_zk_down.py.
"""
import os
import time

from leafdtest import LEAFD_BIN, Env, check, decode_opaque, log, seg_props, wait_until
from releasebuild import release_binary
from upgradehelpers import Load, ReadyPoller, VLeafd, rolling, replace_binary
from zkhelpers import worker_of, zk_props

PREVIOUS = "209a81c"  # 1.0.0
OLDER = "42e24c4"     # 0.1.0: its cache records neither identity nor session
MAX_NOT_READY_MS = 1000
LOAD_S = 2.0
OPAQUE_KEY = "000102030405060708090a0b0c0d0e0f"

old = release_binary(PREVIOUS)
wanted = set((os.environ.get("UPGRADE_SCENARIOS") or
              "forever,older,lease,sequence,segment,opaque,mixed").split(","))
env = Env()
zk = env.zookeeper()
totals = {"ids": 0, "duplicates": 0, "backwards": 0, "failed": 0}


def cluster(prefix, props, n=3, resp=False, binary=None):
    nodes = [VLeafd(env, "%s%d" % (prefix, i), props, binary=binary or old, wait_ready=False,
                    resp=resp) for i in range(n)]
    for x in nodes:
        check(x.wait_ready(40), "%s (%s) ready:\n%s" % (x.name, x.binary, x.log_text()[-1500:]))
    return nodes


def finish(label, load, ready, nodes, strict_failed=True):
    load.stop()
    ready.stop()
    f = load.report(label)
    for k in ("ids", "duplicates", "failed"):
        totals[k] += f[k]
    totals["backwards"] += f["backwards_conn"] + f["backwards_key"]
    check(f["ids"] > 0, "%s: IDs were issued" % label)
    check(f["duplicates"] == 0, "%s: no ID twice (%d)" % (label, f["duplicates"]))
    check(f["backwards_conn"] == 0 and f["backwards_key"] == 0,
          "%s: no ID backwards (%d on a connection, %d per key)"
          % (label, f["backwards_conn"], f["backwards_key"]))
    if strict_failed:
        check(f["failed"] == 0, "%s: no failed request (%d)" % (label, f["failed"]))
    for x in nodes:
        x.stop()
    return f


def forever(kill9):
    how = "kill -9" if kill9 else "SIGTERM"
    nodes = cluster("k" if kill9 else "t", zk_props(zk.address(), name="fk" if kill9 else "ft"),
                    resp=True)
    load = Load(nodes, "/api/snowflake/get/up?count=5", key=worker_of, clients=3,
                resp=("INCR", "snowflake:up")).start()
    ready = ReadyPoller(nodes).start()
    time.sleep(LOAD_S)
    log("forever: rolling upgrade 1.0.0 -> this build after %s" % how)
    ms = rolling(nodes, LEAFD_BIN, load, ready, kill9=kill9)
    time.sleep(LOAD_S)
    finish("forever %s" % how, load, ready, nodes)
    log("forever %s: not ready per node (ms): %s" % (how, ms))
    for name, v in ms.items():
        check(v < MAX_NOT_READY_MS, "forever %s: %s not ready for %d ms (< %d)"
              % (how, name, v, MAX_NOT_READY_MS))


def older():
    """0.1.0 -> this build after kill -9: the old cache records no session; the new binary tells its
    previous process's znode from a twin's (data dir lock, cache written after the znode)."""
    older_bin = release_binary(OLDER)
    nodes = cluster("o", zk_props(zk.address(), name="fo"), binary=older_bin)
    load = Load(nodes, "/api/snowflake/get/up?count=5", key=worker_of, clients=3).start()
    ready = ReadyPoller(nodes).start()
    time.sleep(4.0)  # 0.1.0 writes its cache every 3 s after creating its znode
    log("older: rolling upgrade 0.1.0 -> this build after kill -9")
    ms = rolling(nodes, LEAFD_BIN, load, ready, kill9=True)
    time.sleep(LOAD_S)
    finish("older kill -9", load, ready, nodes)
    log("older kill -9: not ready per node (ms): %s" % ms)
    for name, v in ms.items():
        check(v < MAX_NOT_READY_MS, "older kill -9: %s not ready for %d ms (< %d)"
              % (name, v, MAX_NOT_READY_MS))
    for x in nodes:
        check("written by an older leafd) does not record" in x.log_text(),
              "%s took its previous process's znode over:\n%s" % (x.name, x.log_text()[-1500:]))


def lease():
    nodes = cluster("l", zk_props(zk.address(), name="ls",
                                  **{"leafd.snowflake.worker.mode": "lease"}), resp=True)
    load = Load(nodes, "/api/snowflake/get/up?count=5", key=worker_of, clients=3,
                resp=("INCR", "snowflake:up")).start()
    ready = ReadyPoller(nodes).start()
    time.sleep(LOAD_S)
    log("lease: rolling upgrade 1.0.0 -> this build after SIGTERM")
    ms = rolling(nodes, LEAFD_BIN, load, ready)
    time.sleep(LOAD_S)
    finish("lease SIGTERM", load, ready, nodes)
    log("lease: not ready per node (ms): %s" % ms)


def sequence():
    props = zk_props(zk.address(), name="sq", **{
        "leaf.snowflake.enable": "false", "leafd.sequence.enable": "true",
        "leafd.sequence.autocreate": "true", "leafd.sequence.batch": "100",
        "leafd.zk.session.timeout.ms": "4000"})
    nodes = [VLeafd(env, "s%d" % i, props, binary=old, wait_ready=False) for i in range(3)]
    serving = lambda x: x.get("/api/sequence/get/probe")[0] in (200, 307)
    for x in nodes:
        check(wait_until(lambda: serving(x), 40), "%s (1.0.0) serves sequences:\n%s"
              % (x.name, x.log_text()[-1500:]))
    load = Load(nodes, "/api/sequence/get/orders?count=3", key=lambda v: "orders", clients=3,
                follow=True).start()
    ready = ReadyPoller(nodes).start()
    time.sleep(LOAD_S)
    primary = [x for x in nodes if x.get("/api/sequence/get/orders")[0] == 200]
    check(len(primary) == 1, "one primary for the sequence (%s)" % [x.name for x in primary])
    log("sequence: primary %s; rolling upgrade 1.0.0 -> this build after SIGTERM, the primary "
        "last" % [x.name for x in primary])
    order = [x for x in nodes if x not in primary] + primary
    ms = rolling(order, LEAFD_BIN, load, ready)
    time.sleep(LOAD_S)
    # a primary's hand-over answers 503 for a moment: reported, not failed on
    f = finish("sequence SIGTERM", load, ready, nodes, strict_failed=False)
    log("sequence: not ready per node (ms): %s; %d failed requests during the hand-overs"
        % (ms, f["failed"]))


def segment():
    db = env.mariadb()
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('up', 1, 200)")
    nodes = [VLeafd(env, "g%d" % i, seg_props(db), binary=old, wait_ready=False, resp=True)
             for i in range(2)]
    for x in nodes:
        check(x.wait_ready(40), "%s (1.0.0) ready:\n%s" % (x.name, x.log_text()[-1500:]))
    load = Load(nodes, "/api/segment/get/up", clients=3, resp=("INCR", "segment:up")).start()
    ready = ReadyPoller(nodes).start()
    time.sleep(LOAD_S)
    log("segment: rolling upgrade 1.0.0 -> this build after SIGTERM")
    ms = rolling(nodes, LEAFD_BIN, load, ready)
    time.sleep(LOAD_S)
    finish("segment SIGTERM", load, ready, nodes)
    log("segment: not ready per node (ms): %s" % ms)
    db.stop()


def opaque():
    db = env.mariadb(name="db-opaque")  # its own data dir: the segment scenario's is "db"
    db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('op', 1, 200)")
    props = seg_props(db, **{"leafd.opaque.key": OPAQUE_KEY})
    nodes = [VLeafd(env, "o%d" % i, props, binary=old, wait_ready=False, resp=True)
             for i in range(2)]
    for x in nodes:
        check(x.wait_ready(40), "%s (1.0.0) ready:\n%s" % (x.name, x.log_text()[-1500:]))
    load = Load(nodes, "/api/opaque/get/op?count=5", clients=3, resp=("INCR", "opaque:op"),
                ordered=False).start()
    ready = ReadyPoller(nodes).start()
    time.sleep(LOAD_S)
    log("opaque: upgrade %s 1.0.0 -> this build" % nodes[0].name)
    ms = rolling(nodes[:1], LEAFD_BIN, load, ready)
    time.sleep(LOAD_S)
    with load.lock:
        issued = list(load.ids)
    log("opaque: decoding the %d opaque IDs issued so far on both nodes" % len(issued))
    new_dec = decode_opaque(nodes[0], issued, "op")
    old_dec = decode_opaque(nodes[1], issued, "op")
    check(issued and None not in new_dec and None not in old_dec,
          "opaque: the %d IDs issued so far (1.0.0 and this build) decode on the new node (%d "
          "refused) and on the 1.0.0 node (%d refused)"
          % (len(issued), new_dec.count(None), old_dec.count(None)))
    check(new_dec == old_dec, "opaque: both versions decode every ID to the same segment ID "
          "(%d differ)" % sum(1 for a, b in zip(new_dec, old_dec) if a != b))
    check(len(set(new_dec)) == len(new_dec), "opaque: the segment IDs behind them are distinct "
          "(%d of %d)" % (len(set(new_dec)), len(new_dec)))
    log("opaque: upgrade %s 1.0.0 -> this build" % nodes[1].name)
    ms.update(rolling(nodes[1:], LEAFD_BIN, load, ready))
    time.sleep(LOAD_S)
    finish("opaque", load, ready, nodes)
    log("opaque: not ready per node (ms): %s" % ms)
    db.stop()


def mixed():
    nodes = cluster("m", zk_props(zk.address(), name="mx"), resp=True)
    load = Load(nodes, "/api/snowflake/get/up?count=5", key=worker_of, clients=3,
                resp=("INCR", "snowflake:up")).start()
    ready = ReadyPoller(nodes).start()
    time.sleep(1.0)
    ms = rolling(nodes[:2], LEAFD_BIN, load, ready)
    log("mixed: %s run this build, %s runs 1.0.0: 10 s under load"
        % ([x.name for x in nodes[:2]], nodes[2].name))
    time.sleep(10)
    log("mixed: downgrade %s this build -> 1.0.0" % nodes[0].name)
    ms["%s downgrade" % nodes[0].name] = replace_binary(nodes[0], old, load, ready)
    time.sleep(LOAD_S)
    finish("mixed + downgrade", load, ready, nodes)
    log("mixed: not ready per node (ms): %s" % ms)


if "forever" in wanted:
    forever(kill9=False)
    forever(kill9=True)
if "older" in wanted:
    older()
if "lease" in wanted:
    lease()
if "sequence" in wanted:
    sequence()
if "segment" in wanted:
    segment()
if "opaque" in wanted:
    opaque()
if "mixed" in wanted:
    mixed()
log("all scenarios: %d IDs checked, %d duplicates, %d backwards, %d failed requests"
    % (totals["ids"], totals["duplicates"], totals["backwards"], totals["failed"]))
env.finish()
