"""Operator errors as chaos faults (docs/IDENTITY.md), mixed
into the Scheduler:

    twin      start a second leafd process with a live node's identity: a
              copy of that node's configuration (snowflake, segment and
              sequences on) with its own HTTP and RESP ports and data dir,
              but the node's leaf.snowflake.port and advertise ip. While it
              lives a prober asks it for snowflake IDs (HTTP and RESP), for
              /health and /ready. It must issue no snowflake ID, answer
              /health 200 and /ready 503 only, and exit 1 within
              leafd.zk.session.timeout.ms + 2 s (+ start-up slack) naming the
              identity and both keys; the live node must not notice (no
              window is opened: any client error on it fails the run).
              Forever set only: in lease mode an identity holds no worker ID
              (a twin there claims a free slot, which the lease set's
              restarts with new identities already exercise).
    seq_bump  write /leafd/chaos/sequences/chaos.seq0 with a higher
              {"max":...} behind the primary's back, as zkCli would. The
              episode then pulls the sequence (count=100, following
              redirects) until an ID above the written max comes back: the
              primary must re-read the record and serve strictly above it
              within leafd.zk.session.timeout.ms + 2 s (+ slack), unless
              another fault overlapped. The episode's IDs join the
              sequence's duplicate and order checks.

These kinds are drawn on their own track of the seed ("<seed>/identity"),
so the main schedule of a seed is the same as before they existed and older
recorded seeds replay the same main faults. A twin holds its node (no
restart, expiry or clock step of it meanwhile) and keeps the whole ensemble
up: a twin rightly takes an identity whose session expired. Other faults
may overlap a bump; its bound then does not apply (the overlap is logged).
"""
import json
import os
import random
import re
import threading
import time
from array import array

from chaos_clients import RespConn, RespError
from leafdtest import free_port, http
from zkhelpers import cli_get

SEQ_NAME = "chaos.seq0"  # one of the clients' sequences (chaos_clients.SEQUENCES)
TWIN_MARKS = ("leafd.snowflake.advertise.ip", "leaf.snowflake.port")
# Slack over the documented bounds for a process under ASan on a shared
# 2-core machine (start-up, one zkCli JVM).
TWIN_EXIT_SLACK_S = 12.0
HEAL_SLACK_S = 3.0
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


class SideFault:
    """Like chaos_faults.Fault (kept apart to avoid an import cycle)."""

    def __init__(self, fid, t, kind, target, params):
        self.id, self.t, self.kind, self.target, self.params = fid, t, kind, target, params
        self.started = self.ended = None

    def describe(self):
        p = " ".join("%s=%s" % kv for kv in sorted(self.params.items()))
        tgt = "" if self.target is None else " target=%d" % (self.target + 1)
        return "#%d %s%s %s" % (self.id, self.kind, tgt, p)


def identity_kinds(lease):
    return ("seq_bump",) if lease else ("twin", "seq_bump")


def identity_schedule(seed, seconds, lease, first_id):
    """The side track: a twin first at 5-15 s, then every 20-30 s; a bump
    first at 3-12 s, then every 12-20 s; none starts later than
    max(seconds - 12, seconds * 0.75). Ids follow the main schedule's."""
    rng = random.Random("%s/identity" % seed)
    last = max(seconds - 12.0, seconds * 0.75)
    out = []
    tracks = [("seq_bump", (3.0, 12.0), (12.0, 20.0))]
    if not lease:
        tracks.insert(0, ("twin", (5.0, 15.0), (20.0, 30.0)))
    for kind, first, every in tracks:
        t = rng.uniform(*first)
        while t < last:
            target = rng.randrange(3) if kind == "twin" else None
            # bump: far above the batch (500), so the written max is above the stored one
            params = {"bump": rng.choice((5000, 20000, 100000))} if kind == "seq_bump" else {}
            out.append((t, kind, target, params))
            t += rng.uniform(*every)
    out.sort(key=lambda x: x[0])
    return [SideFault(first_id + i, t, k, tg, p) for i, (t, k, tg, p) in enumerate(out)]


class IdentityEpisodes:
    """ep_twin and ep_seq_bump; needs the Scheduler's c, log, fail, lock and
    injected. Results: twins (one dict per twin), twin_ids (arrays of
    snowflake IDs a twin issued: must stay empty, and join the duplicate
    check), bumps (one dict per bump), seq_extra ((t0, t1, ids, name, start_ns,
    end_ns) of the sequence IDs the bump episodes pulled; the last two on
    time.monotonic_ns(), for the order checker)."""

    def __init__(self):
        self.twins = []
        self.twin_ids = []
        self.bumps = []
        self.seq_extra = []

    # ---- twin ---------------------------------------------------------------

    def ep_twin(self, f):
        n = self.c.nodes[f.target]
        ident_port = int(n.leafd.props.get("leaf.snowflake.port", n.port))
        props = dict(n.leafd.props)
        http_port, resp_port = free_port(), free_port()
        props["leafd.listen"] = "127.0.0.1:%d" % http_port
        props["leafd.resp.listen"] = "127.0.0.1:%d" % resp_port
        props["leaf.snowflake.port"] = str(ident_port)
        name = "twin%d" % f.id
        props["leafd.data.dir"] = os.path.join(self.c.dir, name, "data")
        # The fault is the snowflake identity. A twin with sequences on would also join the
        # sequence line for its few seconds: with sharded sequences, a node joining and
        # leaving at once moves slots twice (docs/IDENTITY.md, known limits).
        props["leafd.sequence.enable"] = "false"
        t = time.time()
        twin = self.c.env.leafd(name, props, wait_ready=False, port=http_port)
        self.c.track(twin.proc)
        self.log("#%d twin %s started: HTTP %d, identity 127.0.0.1:%d (%s's)"
                 % (f.id, name, http_port, ident_port, n.name))
        probe = TwinProbe(http_port, resp_port, twin.proc)
        probe.start()
        limit = self.c.session_ms / 1000.0 + 2.0 + TWIN_EXIT_SLACK_S
        rc = twin.wait_exit(limit)
        took = time.time() - t
        probe.stop.set()
        probe.join(10)
        if rc is None:
            self.fail(f, "twin of %s still running %.0f s after its start (bound: session "
                      "timeout + 2 s + %.0f s slack); killed" % (n.name, took, TWIN_EXIT_SLACK_S))
            twin.proc.kill9()
        text = twin.log_text()
        rec = {"node": n.name, "rc": rc, "seconds": took, "ids": probe.n_ids,
               "asked": probe.asked, "health": sorted(probe.health), "ready": sorted(probe.ready),
               "codes": dict(probe.codes)}
        with self.lock:
            self.twins.append(rec)
            self.twin_ids.extend(probe.ids)
        self.log("#%d twin exited %s after %.1f s; asked %d times, issued %d IDs; /health %s, "
                 "/ready %s; answers %s" % (f.id, rc, took, probe.asked, probe.n_ids,
                                            rec["health"], rec["ready"], rec["codes"]))
        self._twin_checks(f, n, ident_port, rc, probe, text)

    def _twin_checks(self, f, n, ident_port, rc, probe, text):
        if rc is not None and rc != 1:
            self.fail(f, "twin of %s exited %s (expected 1); log tail:\n%s" % (n.name, rc, text[-2000:]))
        if probe.n_ids:
            self.fail(f, "twin of %s issued %d snowflake IDs" % (n.name, probe.n_ids))
        if 200 not in probe.health:
            self.fail(f, "twin of %s never answered /health 200 while it waited (%s)"
                      % (n.name, sorted(probe.health)))
        if probe.ready - {503}:
            self.fail(f, "twin of %s answered /ready %s (503 only while it waits)"
                      % (n.name, sorted(probe.ready)))
        want = ["identity 127.0.0.1:%d" % ident_port] + list(TWIN_MARKS)
        missing = [w for w in want if w not in text]
        if rc == 1 and missing:
            self.fail(f, "twin's log does not name %s; tail:\n%s" % (missing, text[-1500:]))
        for mark in SANITIZER_MARKS:
            if mark in text:
                i = text.find(mark)
                self.fail(f, "twin's log has %r:\n%s" % (mark, text[i - 200:i + 3000]))
                break

    # ---- seq_bump -------------------------------------------------------------

    def ep_seq_bump(self, f):
        """Each zkCli call starts a JVM (1-4 s of CPU on this machine): two per
        bump, never in a loop. The max written is the sequence's current ID
        (pulled first) + bump, above the stored max (bump >= 10 x the batch)."""
        path = "/leafd/%s/sequences/%s" % (self.c.nodes[0].leafd.props["leaf.name"], SEQ_NAME)
        got, cur, _ = self._pull_above(0, min(time.time() + 15.0, self.t_start + self.seconds))
        zk = next((z for z in self.c.zks if z.proc and z.proc.alive() and z.serving()), None)
        if got is None or zk is None:
            self.log("#%d %s: no sequence ID, or no ZooKeeper server serving; nothing to bump"
                     % (f.id, SEQ_NAME))
            return
        new_max = cur + f.params["bump"]
        t = time.time()
        out = zk.cli("set", path, json.dumps({"max": new_max}, separators=(",", ":")))
        t_set = time.time()
        now = cli_get(zk, path)
        if now is None or int(json.loads(now)["max"]) < new_max:
            # Not leafd's doing as far as the run can tell: zkCli could not
            # connect under load (leafdtest.zkcli tries three sessions). Noted.
            with self.lock:
                self.bumps.append({"max": new_max, "seconds": None, "overlapped": [],
                                   "not_written": True})
            self.log("#%d %s: the write of max %d did not take (read back %s); zkCli said: %s"
                     % (f.id, path, new_max, now, " | ".join(out.strip().splitlines()[-3:])))
            return
        self.log("#%d %s set to max %d behind the primary's back, %d above the last ID issued "
                 "(zkCli took %.1f s; read back %s)" % (f.id, path, new_max, f.params["bump"],
                                                        t_set - t, now))
        bound = self.c.session_ms / 1000.0 + 2.0
        healed, top, errors = self._pull_above(new_max, t_set + bound + HEAL_SLACK_S + 20.0)
        took = (healed - t_set) if healed else None
        with self.lock:
            overlapped = [g.describe() for g in self.injected
                          if g is not f and g.started is not None and g.started < (healed or time.time())
                          and (g.ended is None or g.ended > t) and g.kind not in ("seq_bump", "twin")]
            self.bumps.append({"max": new_max, "seconds": took, "overlapped": overlapped})
        if took is None and self.stop_flag.is_set() and time.time() < t_set + bound:
            # The run's time was up before the bound passed (a bump started late, its zkCli
            # calls slow on a loaded machine): not a failure of leafd; every ID pulled was still
            # checked for order and repeats with the rest. Said in the summary.
            self.log("#%d the run ended %.1f s after the bump, before its bound of %.0f s: the "
                     "first ID above %d was not awaited" % (f.id, time.time() - t_set, bound, new_max))
            return
        if took is None:
            self.fail(f, "no sequence ID above the written max %d within %.0f s (last %s; errors %s)"
                      % (new_max, bound + HEAL_SLACK_S + 20.0, top, errors))
            return
        self.log("#%d first ID above %d after %.2f s (%s)" % (
            f.id, new_max, took, "overlapping: " + "; ".join(overlapped) if overlapped else "alone"))
        if took > bound + HEAL_SLACK_S and not overlapped:
            self.fail(f, "the primary served above the written max %d only %.1f s after the write "
                      "(bound: session timeout + 2 s = %.0f s, + %.0f s slack)"
                      % (new_max, took, bound, HEAL_SLACK_S))

    def _pull_above(self, new_max, deadline):
        """Pulls 100 IDs at a time (following redirects) until one is above
        new_max; returns (time it was received or None, last ID, errors)."""
        k, top, errors = 0, None, {}
        while time.time() < deadline and not self.stop_flag.is_set():
            node = self.c.nodes[k % 3]
            t0, s0 = time.time(), time.monotonic_ns()
            try:
                st, body, hdr = http(node.port, "/api/sequence/get/%s?count=100" % SEQ_NAME, timeout=3)
                if st == 307:
                    port = int(re.sub(r"^https?://", "", hdr.get("Location", "")).split("/")[0]
                               .rsplit(":", 1)[1])
                    k = next((i for i, x in enumerate(self.c.nodes) if x.port == port), k + 1)
                    continue
            except (OSError, ValueError, IndexError) as e:
                st, body = "exception", repr(e)
            if st != 200:
                key = str(st)
                errors[key] = errors.get(key, 0) + 1
                k += 1 if st == "exception" else 0
                time.sleep(0.05)
                continue
            ids = array("q", (int(x) for x in body.split()))
            t1 = time.time()
            with self.lock:
                self.seq_extra.append((t0, t1, ids, SEQ_NAME, s0, time.monotonic_ns()))
            top = ids[-1]
            if top > new_max:
                return t1, top, errors
            time.sleep(0.01)
        return None, top, errors


class TwinProbe(threading.Thread):
    """Asks a twin for snowflake IDs (HTTP count=10 and RESP INCR, in turn),
    /health and /ready, every 50 ms while it lives."""

    def __init__(self, http_port, resp_port, proc):
        super().__init__(name="twin-probe", daemon=True)
        self.http_port, self.resp_port, self.proc = http_port, resp_port, proc
        self.stop = threading.Event()
        self.ids = []
        self.n_ids = 0
        self.asked = 0
        self.health, self.ready = set(), set()
        self.codes = {}

    def _count(self, code):
        self.codes[code] = self.codes.get(code, 0) + 1

    def run(self):
        turn = 0
        while not self.stop.is_set() and self.proc.alive():
            turn += 1
            try:
                self.health.add(http(self.http_port, "/health", timeout=2)[0])
                self.ready.add(http(self.http_port, "/ready", timeout=2)[0])
                if turn % 2:
                    st, body, _ = http(self.http_port, "/api/snowflake/get/chaos?count=10", timeout=2)
                    self.asked += 1
                    if st == 200:
                        self._got([int(x) for x in body.split()])
                    else:
                        self._count(_code(body, st))
                else:
                    c = RespConn(self.resp_port, 2)
                    try:
                        self.asked += 1
                        self._got([c.call("INCR", "snowflake:chaos")])
                    except RespError as e:
                        self._count(e.code)
                    finally:
                        c.close()
            except OSError:
                self._count("unreachable")
            self.stop.wait(0.05)

    def _got(self, ids):
        self._count("200")
        self.n_ids += len(ids)
        self.ids.append(array("q", ids))


def _code(body, st):
    try:
        return json.loads(body).get("code") or "http_%d" % st
    except ValueError:
        return "http_%d" % st
