"""The checks of a chaos run, over every answer every client received.

1. No duplicate: snowflake IDs across all nodes; segment IDs per tag across
   all nodes (ranges included, and the segment IDs the opaque IDs decode to);
   opaque IDs across all nodes, each of which must have decoded.
2. Snowflake order: within each run of each node, the IDs one client thread
   received strictly increase in the order it received them; across clients,
   an answer received before another request was sent holds only smaller
   IDs; across runs, every ID of a run is above every ID of the node's
   earlier runs (docs/reference/guarantees.md, "Uniqueness": across restarts too).
3. Segment order: per client thread, node run and tag, IDs ascend.
3b. Sequence order (docs/reference/guarantees.md, "Order, per mode"), by the order checker
   (tests/lib/ordercheck.py, on CLOCK_MONOTONIC): across every client, node
   and protocol, an answer received before another request was sent holds
   only smaller IDs; no sequence ID repeats. Sequence clients follow
   redirects and retry for up to 8 s, so a sequence error is one that
   outlasted that; it is explained by any fault window (any node: the
   primary's fault is every node's).
4. No ID from the future: ms(id) <= t1 + offset + reserve.ms + 1 s, where t1
   is the client's real receive time and offset the largest clock offset
   the node's faked clock may have had during the request (so this is
   measured against the node's own clock, and an ID issued by a node 10
   minutes behind while it should refuse is caught).
5. Worker IDs: one per node, distinct between nodes.
6. Errors: every client error falls in a fault window (see chaos_faults) that
   names its node, mode and code; any other error is unexplained and fails
   the run. The overall error rate is reported.
7. Liveness: in the quiet period after the last fault ended, every node
   served both modes.
9. Operator errors (chaos_identity.py): a process started with a live
   node's identity (a twin) issued no snowflake ID; whatever it issued
   would also join check 1. The sequence IDs the seq_bump episodes pulled
   join checks 1 and 3b.

Lease mode (chaos.py --lease; docs/cluster.md, "Worker-ID leases") changes 2 and 5 and adds 8:
2. The order checks hold per (node run, worker ID): a node may move to
   another worker ID in one run (a switch, a claim after an expiry), and its
   IDs are then smaller than before a clock step. Across runs: see 8.
5. A node may hold several worker IDs over a run, and a worker ID may pass
   between nodes: nothing is checked per node (reported only). One answer
   holds one worker ID.
8. The fence: for each worker ID, its holder segments (node, run: a node
   run's IDs from that worker ID), ordered by their first receive time;
   every segment's smallest ID is above the largest ID of every earlier
   segment of that worker ID: a new holder starts above the old holder's
   reservation, even while the old one, cut off from ZooKeeper, still issues
   below its ceiling. (A node run never takes back a worker ID another node
   held meanwhile here: a claim prefers never-created slots, and there are
   1024.) And a node cut off from ZooKeeper answers no snowflake request sent
   later than reserve.ms + 1 s after the cut, until the heal: it cannot
   extend its reservation, so it stops at its ceiling.
"""
import collections

from ordercheck import Histories

EPOCH = 1288834974657
SLACK_MS = 1000
# The refusals of a lease node around a clock step (a restart's connection
# errors are not the switch's).
SWITCH_CODES = ("clock_backwards", "not_ready", "overloaded")
SHOW = 8


def ms_of(i):
    return (i >> 22) + EPOCH


def worker_of(i):
    return (i >> 12) & 1023


class Verdict:
    def __init__(self):
        self.problems = collections.OrderedDict()
        self.notes = []

    def bad(self, check, text):
        self.problems.setdefault(check, []).append(text)

    def ok(self):
        return not self.problems


def verify(clients, nodes, windows, reserve_ms, quiet, v=None, opaque_plain=None, lease=None,
           extra=None):
    """Runs every check; returns (Verdict, stats dict). opaque_plain: {opaque ID:
    segment ID or None} for every opaque ID received (decoded by chaos.py).
    lease: the scheduler of a lease-mode run (its partitions and switch
    windows), None in forever mode. extra: the scheduler's operator-error
    episodes (chaos_identity.py): the snowflake IDs twins issued (twin_ids)
    join the duplicate check, the sequence IDs the bump episodes pulled
    (seq_extra) the sequence checks."""
    v = v or Verdict()
    stats = {}
    names = [n.name for n in nodes]
    snow, seg, seq, opq = [], collections.defaultdict(list), [], []
    n_snow = n_seg = 0
    for c in clients:
        for (n, run, mode, tag, t0, t1, ids) in c.ok:
            if mode == "snowflake":
                n_snow += len(ids)
                snow.append(ids)
            elif mode == "opaque":
                opq.append((tag, ids))
            elif mode == "sequence":
                seq.append((t0, t1, ids, tag))
            else:
                n_seg += len(ids)
                seg[tag].append(ids)
        for text in c.violations:
            v.bad("well-formed answers", text)
    stats["snowflake_ids"] = n_snow
    stats["segment_ids"] = n_seg
    stats["segment_ids_per_tag"] = {t: sum(len(a) for a in l) for t, l in seg.items()}

    stats["opaque_ids"] = sum(len(ids) for _, ids in opq)
    _duplicates(v, "opaque", [ids for _, ids in opq], clients, names, "opaque")
    plain = opaque_plain or {}
    undecoded = [x for _, ids in opq for x in ids if plain.get(x) is None]
    if undecoded:
        v.bad("opaque IDs decode", "%d opaque IDs did not decode, e.g. %r"
              % (len(undecoded), undecoded[:SHOW]))
    for tag in {t for t, _ in opq}:
        dec = [plain[x] for t, ids in opq if t == tag for x in ids if plain.get(x) is not None]
        seg[tag].append(dec)  # checked with the tag's segment IDs: no overlap
    twin_ids = list(getattr(extra, "twin_ids", []))
    stats["twin_ids"] = sum(len(a) for a in twin_ids)
    if twin_ids:
        v.bad("twins issue nothing", "processes started with a live node's identity issued %d "
              "snowflake IDs, e.g. %r" % (stats["twin_ids"], list(twin_ids[0][:SHOW])))
    _duplicates(v, "snowflake", snow + twin_ids, clients, names)
    for tag, arrs in seg.items():
        _duplicates(v, "segment/" + tag, arrs, clients, names, tag)
    seq.extend(getattr(extra, "seq_extra", []))
    stats["sequence_ids"] = sum(len(r[2]) for r in seq)
    # Per sequence (several with sharding: their slots live on different owners).
    for name in sorted({r[3] for r in seq}):
        mine = [r for r in seq if r[3] == name]
        _duplicates(v, "sequence/" + name, [r[2] for r in mine], clients, names, name)
    _sequence_order(v, clients, extra)
    stats["sequences"] = len({r[3] for r in seq})
    _snowflake_order(v, clients, names, lease is not None)
    _segment_order(v, clients, names)
    stats["lead_ms"] = _future(v, clients, nodes, reserve_ms)
    stats["workers"] = _workers(v, clients, names, lease is not None)
    if lease is not None:
        stats["fence"] = _fence(v, clients, names)
        _cut_off(v, clients, names, lease.partitions, reserve_ms)
        stats["switch_spans"] = _switch_spans(clients, lease.switch_windows, windows)
    _errors(v, clients, names, windows, stats)
    _liveness(v, clients, names, quiet)
    return v, stats


def _sequence_order(v, clients, extra):
    """The order checker (tests/lib/ordercheck.py) over every sequence call of every client
    (failed ones kept, holding no value) and of the bump episodes: whenever a call returned
    before another began, the later IDs are larger; no ID repeats; an answer's IDs ascend."""
    h = Histories()
    for c in clients:
        who = "client%d" % c.idx
        for tag, s0, s1, ids, code in c.seq_calls:
            if ids is None:
                h.add(who, "sequence:" + tag, s0, s1, error=code)
            else:
                h.add(who, "sequence:" + tag, s0, s1, ids=ids)
    for r in getattr(extra, "seq_extra", []):
        h.add("seq_bump", "sequence:" + r[3], r[4], r[5], ids=r[2])
    bad, text = h.report(SHOW)
    for x in bad[:SHOW]:
        v.bad("sequence strictly increasing", str(x))
    if len(bad) > SHOW:
        v.bad("sequence strictly increasing", "... and %d more" % (len(bad) - SHOW))
    v.notes.append(text.split("\n", 1)[0])


def _where(clients, names, value, tag=None):
    out = []
    for c in clients:
        for (n, run, mode, t, t0, t1, ids) in c.ok:
            if (tag is None and mode == "snowflake") or (mode != "snowflake" and t == tag):
                if value in ids:
                    out.append("client %d from %s run %d at %.3f" % (c.idx, names[n], run, t1))
    return "; ".join(out)


def _duplicates(v, what, arrays, clients, names, tag=None):
    allids = sorted(x for a in arrays for x in a)
    dups = [a for a, b in zip(allids, allids[1:]) if a == b]
    if dups:
        uniq = sorted(set(dups))
        v.bad("no duplicates", "%s: %d duplicate IDs (%d distinct values)" % (what, len(dups), len(uniq)))
        for d in uniq[:SHOW]:
            extra = ""
            if tag is None:
                extra = " (ms %d, worker %d, seq %d)" % (ms_of(d), worker_of(d), d & 4095)
            v.bad("no duplicates", "  %s ID %d%s received by: %s"
                  % (what, d, extra, _where(clients, names, d, tag)))


def _snowflake_order(v, clients, names, lease=False):
    """Per (node, run), or in lease mode per (node, run, worker ID)."""
    per_run = collections.defaultdict(list)  # key -> [(t0, t1, first, last)]
    for c in clients:
        last = {}  # key -> (last id, t1)
        for (n, run, mode, tag, t0, t1, ids) in c.ok:
            if mode != "snowflake":
                continue
            key = (n, run, worker_of(ids[0])) if lease else (n, run)
            per_run[key].append((t0, t1, ids[0], ids[-1]))
            prev = last.get(key)
            if prev and ids[0] <= prev[0]:
                v.bad("snowflake order per client", "client %d, %s run %d%s: ID %d at %.3f is not "
                      "above %d received at %.3f" % (c.idx, names[n], run, _wtext(key), ids[0], t1,
                                                      prev[0], prev[1]))
            last[key] = (ids[-1], t1)
    # Across clients, in real time: answers complete before a request left.
    for key, rs in per_run.items():
        n, run = key[0], key[1]
        by_t1 = sorted(rs, key=lambda r: r[1])
        by_t0 = sorted(rs, key=lambda r: r[0])
        i, best, best_r = 0, None, None
        for r in by_t0:
            while i < len(by_t1) and by_t1[i][1] < r[0]:
                if best is None or by_t1[i][3] > best:
                    best, best_r = by_t1[i][3], by_t1[i]
                i += 1
            if best is not None and r[2] <= best:
                v.bad("snowflake order in real time", "%s run %d%s: request sent at %.4f got %d, "
                      "not above %d received at %.4f" % (names[n], run, _wtext(key), r[0], r[2],
                                                          best, best_r[1]))
    if lease:
        return  # across runs: the fence check, per worker ID
    # Across runs of one node: every run above all earlier runs.
    runs = collections.defaultdict(dict)
    for (n, run), rs in per_run.items():
        runs[n][run] = (min(r[2] for r in rs), max(r[3] for r in rs))
    for n, rr in runs.items():
        top, top_run = None, None
        for run in sorted(rr):
            lo, hi = rr[run]
            if top is not None and lo <= top:
                v.bad("snowflake order across restarts", "%s run %d issued %d (ms %d), not above "
                      "%d (ms %d) of run %d" % (names[n], run, lo, ms_of(lo), top, ms_of(top), top_run))
            if top is None or hi > top:
                top, top_run = hi, run


def _segment_order(v, clients, names):
    for c in clients:
        last = {}
        for (n, run, mode, tag, t0, t1, ids) in c.ok:
            if mode != "segment":
                continue
            k = (n, run, tag)
            if k in last and ids[0] <= last[k]:
                v.bad("segment order per node run", "client %d, %s run %d tag %s: %d at %.3f not "
                      "above %d" % (c.idx, names[n], run, tag, ids[0], t1, last[k]))
            last[k] = ids[-1]


LEAD_NOTE_MS = 50


def _future(v, clients, nodes, reserve_ms):
    lead = {}
    ahead = collections.Counter()
    for c in clients:
        for (n, run, mode, tag, t0, t1, ids) in c.ok:
            if mode != "snowflake":
                continue
            node = nodes[n]
            off = node.max_offset(t0, t1)
            clock = t1 * 1000.0 + off * 1000.0
            ms = ms_of(ids[-1])
            d = ms - clock
            if n not in lead or d > lead[n]:
                lead[n] = d
            if d > LEAD_NOTE_MS:
                ahead[n] += 1
                if ahead[n] <= 3:
                    v.notes.append("%s run %d: answer to client %d sent %.3f received %.3f: ID %d "
                                   "(ms %d) is %.0f ms ahead of the node's clock (offset %+g s)"
                                   % (node.name, run, c.idx, t0, t1, ids[-1], ms, d, off))
            if ms > clock + reserve_ms + SLACK_MS:
                v.bad("no ID from the future", "client %d, %s run %d: ID %d decodes to ms %d, "
                      "%.0f ms ahead of the node's clock at receipt (offset %+g s); bound %d ms"
                      % (c.idx, node.name, run, ids[-1], ms, d, off, reserve_ms + SLACK_MS))
    for n, k in sorted(ahead.items()):
        v.notes.append("%s: %d snowflake answers more than %d ms ahead of the node's own clock "
                       "(allowed up to reserve.ms + 1 s; the bounded lead issues up to "
                       "max.lead.ms ahead after a clock step back or a restart)" % (nodes[n].name, k, LEAD_NOTE_MS))
    return {nodes[n].name: d for n, d in sorted(lead.items())}


def _wtext(key):
    return " worker %d" % key[2] if len(key) > 2 else ""


def _workers(v, clients, names, lease=False):
    seen = collections.defaultdict(set)
    for c in clients:
        for (n, run, mode, tag, t0, t1, ids) in c.ok:
            if mode == "snowflake":
                seen[n].add(worker_of(ids[0]))
                seen[n].add(worker_of(ids[-1]))
                if lease and worker_of(ids[0]) != worker_of(ids[-1]):
                    v.bad("worker IDs", "client %d, %s run %d: one answer holds worker IDs %d and "
                          "%d" % (c.idx, names[n], run, worker_of(ids[0]), worker_of(ids[-1])))
    if lease:
        return {names[n]: sorted(ws) for n, ws in sorted(seen.items())}
    for n, ws in seen.items():
        if len(ws) != 1:
            v.bad("worker IDs", "%s used worker IDs %s" % (names[n], sorted(ws)))
    flat = [w for ws in seen.values() for w in ws]
    if len(flat) != len(set(flat)):
        v.bad("worker IDs", "nodes share a worker ID: %s"
              % {names[n]: sorted(ws) for n, ws in seen.items()})
    return {names[n]: sorted(ws) for n, ws in sorted(seen.items())}


def _fence(v, clients, names):
    """Check 8: per worker ID, holder segments (node, run) in order of their
    first receive time; each starts above every earlier one's largest ID."""
    seg = {}  # (worker, node, run) -> [first t1, min, max, answers]
    for c in clients:
        for (n, run, mode, tag, t0, t1, ids) in c.ok:
            if mode != "snowflake":
                continue
            k = (worker_of(ids[0]), n, run)
            s = seg.get(k)
            if s is None:
                seg[k] = [t1, ids[0], ids[-1], 1]
            else:
                s[0] = min(s[0], t1)
                s[1] = min(s[1], ids[0])
                s[2] = max(s[2], ids[-1])
                s[3] += 1
    per_worker = collections.defaultdict(list)
    for (w, n, run), s in seg.items():
        per_worker[w].append((s[0], s[1], s[2], s[3], n, run))
    handovers = shared = 0
    for w, segs in sorted(per_worker.items()):
        segs.sort()
        if len({n for _, _, _, _, n, _ in segs}) > 1:
            shared += 1
        top = None
        for k, (first, lo, hi, count, n, run) in enumerate(segs):
            if k and segs[k - 1][4] != n:
                handovers += 1
            if top is not None and lo <= top[0]:
                v.bad("fence", "worker %d: %s run %d's first answer at %.3f holds %d (ms %d), not "
                      "above %d (ms %d) from %s run %d, an earlier holder"
                      % (w, names[n], run, first, lo, ms_of(lo), top[0], ms_of(top[0]),
                         names[top[1]], top[2]))
            if top is None or hi > top[0]:
                top = (hi, n, run)
    return {"segments": len(seg), "workers": len(per_worker), "shared": shared,
            "handovers": handovers}


def _cut_off(v, clients, names, partitions, reserve_ms):
    """A node cut off from ZooKeeper serves no snowflake request sent more than
    reserve.ms + SLACK_MS after the cut, until the heal."""
    for (n, run, slot, cut, healed) in partitions:
        late = [(c.idx, t0, t1, ids[-1]) for c in clients
                for (nn, rr, mode, tag, t0, t1, ids) in c.ok
                if nn == n and rr == run and mode == "snowflake" and
                t0 > cut + (reserve_ms + SLACK_MS) / 1000.0 and t1 < healed]
        for (ci, t0, t1, last) in late[:SHOW]:
            v.bad("cut-off node stops at its ceiling", "%s run %d, cut off at %.3f (slot %s), "
                  "healed at %.3f: client %d sent at %.3f got ID %d (worker %d, ms %d)"
                  % (names[n], run, cut, slot, healed, ci, t0, last, worker_of(last), ms_of(last)))


def _switch_spans(clients, switch_windows, windows):
    """Per clock transition of a lease node whose window overlaps no other
    fault's on that node (a restart, a partition): from its first to its
    last refusal inside the window (0 when none), in s."""
    out = []
    for (n, start, end, label, fid) in switch_windows:
        if any(n in w.nodes and "snowflake" in w.modes and w.start < end and w.end > start and
               (w.fid != fid or w.codes is None) for w in windows):
            continue
        errs = [(t0, t1) for c in clients for (nn, run, mode, tag, t0, t1, code, d) in c.errors
                if nn == n and mode == "snowflake" and code in SWITCH_CODES and
                t0 <= end and t1 >= start]
        span = (max(t1 for _, t1 in errs) - min(t0 for t0, _ in errs)) if errs else 0.0
        out.append((label, span))
    return out


def _errors(v, clients, names, windows, stats):
    codes = collections.Counter()
    unexplained = collections.Counter()
    examples = []
    requests = sum(c.requests for c in clients)
    for c in clients:
        for (n, run, mode, tag, t0, t1, code, detail) in c.errors:
            codes[code] += 1
            if any(w.explains(n, mode, code, t0, t1) for w in windows):
                continue
            if mode == "sequence" and any(t0 <= w.end and t1 >= w.start for w in windows):
                continue
            unexplained[code] += 1
            if len(examples) < SHOW:
                examples.append("client %d, %s run %d %s/%s, sent %.3f answered %.3f: %s %s"
                                % (c.idx, names[n], run, mode, tag, t0, t1, code, detail))
    stats["requests"] = requests
    stats["errors"] = dict(codes.most_common())
    stats["unexplained"] = dict(unexplained.most_common())
    if unexplained:
        v.bad("errors explained by faults", "%d errors outside every fault window: %s"
              % (sum(unexplained.values()), dict(unexplained)))
        for e in examples:
            v.bad("errors explained by faults", "  " + e)


def _liveness(v, clients, names, quiet):
    t_from, t_to = quiet
    served = set()
    for c in clients:
        for (n, run, mode, tag, t0, t1, ids) in c.ok:
            if t_from <= t0 and t1 <= t_to:
                served.add((n, mode))
    for n in range(len(names)):
        for mode in ("snowflake", "segment"):
            if (n, mode) not in served:
                v.bad("service resumes", "%s served no %s ID in the quiet period after the last "
                      "fault (%.1f s)" % (names[n], mode, t_to - t_from))
