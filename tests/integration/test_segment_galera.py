"""Segments on a three-node MariaDB Galera cluster (docs/cluster.md).

Two leafd nodes whose leaf.jdbc.url lists the hosts in opposite orders
(A: g1,g2,g3; B: g3,g2,g1) pull IDs from several connections each. The
load moves to a fresh tag every second (tags seg0..), so that each node
reserves small ranges every few hundred milliseconds despite the dynamic
step (which doubles a range used in under 15 minutes). Then:
  1. kill -9 g1, the host A uses: A moves to g2; B stays on g3;
  2. stop g2 cleanly (a clean leave shrinks the cluster, which keeps a
     primary component): A moves to g3. Should g3 be left non-primary all
     the same (g2's leave not heard as one: Galera then counts g2 as
     crashed, and 1 of the 2 is no majority; seen once on a loaded
     machine), the test does what docs/cluster.md tells an operator to,
     pc.bootstrap on g3, and says so; A moves to g3 once it is primary;
  3. start g2 again: it rejoins (IST) and A fails back to it.
Checks: 0 duplicates across both nodes; each node's IDs per tag strictly
increase in real time (an ID answered after another was answered is
larger); no 503 once the cluster has re-formed after each fault (a
re-formed cluster: the expected size seen from every live member, each
in the primary component; g2's rejoin counts as one: it ends when g2 is
synced); /ready,
/metrics and /db show the host in use and each host's state. Reports the
longest pause per node.

Runs about 60 s on two cores (cluster start ~15 s, load ~30 s). Skips
(exit 0, says why) when galera-4, rsync or the mysql user is missing.

Under load: it runs alone (RUN_SERIAL in tests/segment.cmake: its checks are
timings of Galera's own failure detection, 2 s suspect timeout, which a test
beside it on two cores would stretch); every wait for the cluster's re-forming is
bounded by REFORM_S and checked (an unnoticed timeout would count the
eviction's own errors as "after the cluster re-formed"); an error counts as late only GRACE_S after the
re-forming was seen.
"""
import bisect
import http.client as httpclient
import json
import sys
import threading
import time

from leafdtest import Env, check, log, wait_until

import galera

TAGS = 60
STEP = 100
COUNT = 5
# Bound of each wait for Galera to evict a member or take one back (it takes 2-5 s alone).
REFORM_S = 60
# How long g3 may take to install its primary view of 1 after g2's clean leave before the test
# takes it for lost quorum and bootstraps g3 (Galera decides within its evs timeouts, 2-3 s here).
QUORUM_S = 20
# Errors are allowed until this long after the cluster was seen re-formed: a statement stalled
# in Galera's eviction returns at most a moment after it (measured: under 0.5 s alone).
GRACE_S = 2


def tag_at(t0):
    return "seg%d" % min(int(time.time() - t0), TAGS - 1)


class Puller(threading.Thread):
    """GETs count IDs of the current tag over one keep-alive connection, recording
    (sent, answered, tag, ids) for every 200 and (time, status, body) for the rest."""

    def __init__(self, node, t0):
        super().__init__(daemon=True)
        self.node, self.t0 = node, t0
        self.ok, self.errors = [], []
        self.stop_at = 0

    def run(self):
        conn = httpclient.HTTPConnection("127.0.0.1", self.node.port, timeout=10)
        while time.time() < self.stop_at:
            tag = tag_at(self.t0)
            sent = time.time()
            try:
                conn.request("GET", "/api/segment/get/%s?count=%d" % (tag, COUNT))
                r = conn.getresponse()
                body = r.read().decode()
            except Exception as e:  # noqa: BLE001 - recorded and reported
                self.errors.append((time.time(), 0, repr(e)))
                conn.close()
                conn = httpclient.HTTPConnection("127.0.0.1", self.node.port, timeout=10)
                continue
            if r.status != 200:
                self.errors.append((time.time(), r.status, body[:200]))
                time.sleep(0.01)
                continue
            self.ok.append((sent, time.time(), tag, [int(x) for x in body.split("\n")]))
        conn.close()


def ready(node):
    st, body, _ = node.get("/ready")
    return json.loads(body)["segment"]


def host_in_use(node):
    try:
        return ready(node).get("db_host")
    except Exception:  # noqa: BLE001
        return None


def check_order(name, records):
    """Per tag: an ID answered before another request was sent is smaller than all of that
    request's IDs (real-time order), and each answer ascends."""
    bad = 0
    by_tag = {}
    for rec in records:
        by_tag.setdefault(rec[2], []).append(rec)
    for tag, recs in by_tag.items():
        done = sorted(recs, key=lambda r: r[1])
        done_t = [r[1] for r in done]
        prefix_max, m = [], 0
        for r in done:
            m = max(m, max(r[3]))
            prefix_max.append(m)
        for r in recs:
            if r[3] != sorted(r[3]) or len(set(r[3])) != len(r[3]):
                bad += 1
                continue
            k = bisect.bisect_left(done_t, r[0])  # answers strictly before this one was sent
            if k > 0 and prefix_max[k - 1] >= min(r[3]):
                bad += 1
    check(bad == 0, "%s: %d answers out of real-time order" % (name, bad))
    return len(by_tag)


def longest_gap(records, start, end):
    ts = sorted(r[1] for r in records if start <= r[1] <= end)
    if not ts:
        return end - start
    gaps = [ts[0] - start] + [b - a for a, b in zip(ts, ts[1:])] + [end - ts[-1]]
    return max(gaps)


def main():
    why = galera.available()
    if why:
        print("SKIP: " + why)
        return 0
    t_test = time.time()
    with Env() as env:
        t = time.time()
        cluster = galera.GaleraCluster(env)
        g1, g2, g3 = cluster.nodes
        log("galera: 3 nodes synced in %.1f s" % (time.time() - t))
        g1.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES %s" %
               ",".join("('seg%d', 1, %d)" % (i, STEP) for i in range(TAGS)))
        props = {"leaf.segment.enable": "true", "leaf.jdbc.username": "leaf",
                 "leaf.jdbc.password": "leafpw",
                 # Galera stalls the survivors' commits ~3 s after a kill -9 (suspect 2 s):
                 # a statement must outlast that, or it moves on from a live host.
                 "leafd.db.timeout.ms": "5000"}
        a = env.leafd("leafdA", dict(props, **{"leaf.jdbc.url": cluster.jdbc_url([0, 1, 2])}))
        b = env.leafd("leafdB", dict(props, **{"leaf.jdbc.url": cluster.jdbc_url([2, 1, 0])}))
        check(host_in_use(a) == g1.hostport(), "A reserves on g1 first: %s" % host_in_use(a))
        check(host_in_use(b) == g3.hostport(), "B reserves on g3 first: %s" % host_in_use(b))

        t0 = time.time()
        pullers = [Puller(n, t0) for n in (a, b) for _ in range(3)]
        for p in pullers:
            p.stop_at = time.time() + 3600
            p.start()
        time.sleep(3)

        # 1. kill -9 the host A uses.
        t_kill = time.time()
        g1.kill9()
        log("kill -9 g1 (A's host)")
        moved = wait_until(lambda: host_in_use(a) == g2.hostport(), REFORM_S)
        check(moved, "A moved to g2 after g1's kill -9: %s" % host_in_use(a))
        # Both survivors in one primary component of 2: the clean leave of step 2 shrinks that.
        check(wait_until(lambda: all(cluster.size(x) == 2 and x.primary() for x in (g2, g3)),
                         REFORM_S),
              "the cluster re-formed as a primary component of 2 after g1's kill -9 "
              "(within %d s): g2 %s, g3 %s" % (REFORM_S, g2.status("wsrep_cluster_status"),
                                               g3.status("wsrep_cluster_status")))
        t_formed1 = time.time()
        log("A on %s after %.2f s; cluster of 2 after %.2f s" %
            (host_in_use(a), (moved and time.time() or 0) - t_kill, t_formed1 - t_kill))
        time.sleep(5)

        # 2. stop g2 cleanly (now A's host).
        t_stop = time.time()
        g2.stop()
        log("clean stop of g2")
        alone = lambda: cluster.size(g3) == 1 and g3.primary()  # noqa: E731
        bootstrapped = False
        if not wait_until(alone, QUORUM_S):
            log("g3 is not primary %d s after g2's clean stop (wsrep_cluster_status %s, size %d): "
                "g2's leave was not heard as one; bootstrapping g3 as an operator would"
                % (QUORUM_S, g3.status("wsrep_cluster_status"), cluster.size(g3)))
            g3.bootstrap()
            bootstrapped = True
        check(wait_until(alone, REFORM_S),
              "the cluster re-formed as a primary component of 1 after g2's clean stop "
              "(within %d s%s)" % (REFORM_S, ", bootstrapped" if bootstrapped else ""))
        moved = wait_until(lambda: host_in_use(a) == g3.hostport(), REFORM_S)
        check(moved, "A moved to g3 after g2's clean stop: %s" % host_in_use(a))
        t_formed2 = time.time()
        log("A on %s; cluster of 1 after %.2f s%s" % (host_in_use(a), t_formed2 - t_stop,
                                                      " (g3 bootstrapped)" if bootstrapped else ""))
        time.sleep(5)

        # 3. g2 comes back: it rejoins, and A (whose list has g2 before g3) uses it again.
        t_back = time.time()
        g2.start(wait=False)
        rejoined = g2.wait_synced(REFORM_S + 30)
        check(rejoined, "g2 rejoined the cluster")
        t_formed3 = time.time()
        log("g2 synced again after %.1f s" % (t_formed3 - t_back))
        back = wait_until(lambda: host_in_use(a) == g2.hostport(), 30)
        check(back, "A uses g2 again after it rejoined: %s" % host_in_use(a))
        log("A back on g2 after %.1f s" % (time.time() - t_back))
        time.sleep(2)
        t_end = time.time()
        for p in pullers:
            p.stop_at = 0
        for p in pullers:
            p.join(15)

        # What the node shows.
        ra = ready(a)
        states = {h["host"]: h["state"] for h in ra.get("db_hosts", [])}
        check(states.get(g1.hostport()) in ("down", "not_primary"), "/ready: g1 down: %s" % states)
        check(states.get(g2.hostport()) == "up" and states.get(g3.hostport()) in ("up", "unknown"),
              "/ready: g2 up: %s" % states)
        check(ra.get("db_moves", 0) >= 3, "/ready: A moved at least 3 times: %s" % ra.get("db_moves"))
        st, metrics, _ = a.get("/metrics")
        check('leafd_segment_db_host_in_use{host="%s"} 1' % g2.hostport() in metrics,
              "/metrics: g2 in use")
        check('leafd_segment_db_host_up{host="%s"} 0' % g1.hostport() in metrics,
              "/metrics: g1 not up")
        st, page, _ = a.get("/db")
        check(st == 200 and "(in use)" in page and g2.hostport() in page, "/db shows the hosts: %d" % st)

        for name, node in (("A", a), ("B", b)):
            mine = [p for p in pullers if p.node is node]
            recs = [r for p in mine for r in p.ok]
            errs = [e for p in mine for e in p.errors]
            ntags = check_order(name, recs)
            nids = sum(len(r[3]) for r in recs)
            # Each change of the cluster is a window in which errors are allowed: from the
            # fault (or g2's start: its joining installs a new view) until the cluster is seen
            # re-formed (or g2 synced) + GRACE_S, as tools/checks/chaos --galera counts them.
            late = [e for e in errs
                    if (t_formed1 + GRACE_S <= e[0] < t_stop) or
                    (t_formed2 + GRACE_S <= e[0] < t_back) or e[0] >= t_formed3 + GRACE_S]
            check(not late, "%s: errors after the cluster re-formed: %s" % (name, late[:3]))
            joining = [e for e in errs if t_back <= e[0] < t_formed3 + GRACE_S]
            if joining:
                log("%s: %d error(s) while g2 rejoined (allowed), the first: %s" %
                    (name, len(joining), joining[0]))
            log("%s: %d IDs in %d answers over %d tags, %d errors (%s); longest pause: kill -9 "
                "%.2f s, clean stop %.2f s, rejoin %.2f s" %
                (name, nids, len(recs), ntags, len(errs), sorted(set(e[1] for e in errs)),
                 longest_gap(recs, t_kill, t_formed1 + GRACE_S),
                 longest_gap(recs, t_stop, t_formed2 + GRACE_S),
                 longest_gap(recs, t_back, t_end)))
            check(nids > 1000, "%s issued IDs throughout: %d" % (name, nids))
        every = {}
        for p in pullers:
            for r in p.ok:
                for i in r[3]:
                    every.setdefault(r[2], []).append(i)
        dups = sum(len(v) - len(set(v)) for v in every.values())
        check(dups == 0, "0 duplicates across both nodes and all hosts: %d" % dups)
        cert = sum(n.log_text().count("failed: 1213") for n in (a, b))
        log("Galera refusals retried (1213, deadlock/certification): %d" % cert)
        log("%d IDs, %d duplicates; test took %.1f s" %
            (sum(len(v) for v in every.values()), dups, time.time() - t_test))
    env.finish()


if __name__ == "__main__":
    sys.exit(main())
