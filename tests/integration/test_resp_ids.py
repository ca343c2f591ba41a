"""IDs over the RESP port against a real MariaDB (docs/reference/http.md, docs/reference/resp.md).

Covers:
- uniqueness and order: 100,000 IDs from 8 threads, each with its own redis-py
  connection sending pipelines (transaction=False) that mix INCR, INCRBY and
  LEAF.IDS on a snowflake and a segment key; no ID twice within a key across
  all connections (INCRBY counted as its whole block v-n+1..v), ascending per
  connection per key;
- INCRBY's dense blocks on a tag with step 10: INCRBY 7 twice gives 7 then 17
  (8..10 skipped), singles never skip, a block skips less than its size, the
  limits 10000 and 10001;
- every error of docs/reference/resp.md with its exact first word (or Redis's wording),
  the connection staying usable after each;
- malformed frames, a bulk over 64 KiB, more than 1024 arguments, an inline
  line over 64 KiB and a command over 4 KiB in all before AUTH: an error
  reply, then that connection only is closed (one other connection, kept open
  throughout, still works); a command within the limits is accepted;
- MariaDB killed: DATABASE_UNAVAILABLE within about a second for a tag with
  nothing buffered, buffered tags and snowflake still served, and recovery by
  itself after the restart;
- a segment request that waits for its range (the row locked in MariaDB) parks
  without blocking other connections, and pipelined replies stay in order
  (a second node with leafd.segment.wait.ms = 3000 and leafd.db.timeout.ms = 6000 so the
  wait and the statement's server-side limit fit);
- MULTI / EXEC whose first queued command waits for its tag's first range: EXEC
  parks and answers the three commands in order;
- /metrics has the RESP families for all of it; INFO has loading:0 and leafd.

Run by ctest with /usr/bin/python3, the interpreter python3-redis belongs to.
"""
import random
import signal
import socket
import subprocess
import threading
import time

import redis

from leafdtest import (Env, RespError, RespStream, check, log, resp_command, static_props,
                       wait_until)

THREADS, TOTAL = 8, 100_000


def ascending(xs):
    return all(a < b for a, b in zip(xs, xs[1:]))


def metric(text, name, **labels):
    want = ",".join('%s="%s"' % kv for kv in labels.items())
    for line in text.splitlines():
        if line.startswith(name + "{") and line.split("}")[0][len(name) + 1:] == want:
            return float(line.rsplit(" ", 1)[1])
    return None


def is_err(v, prefix):
    return isinstance(v, RespError) and v.startswith(prefix)


class Loader(threading.Thread):
    """One connection pulling its share of IDs in pipelines of 25 mixed commands."""

    def __init__(self, port, seed, target):
        super().__init__(daemon=True)
        self.port, self.rng, self.target = port, random.Random(seed), target
        self.ids = {"snowflake:load": [], "segment:load": []}
        self.errors = []
        self.commands = 0

    def plan(self):
        key = self.rng.choice(list(self.ids))
        dense = ["INCRBY"] if key.startswith("segment:") else []
        kind = self.rng.choice(["INCR", "LEAF.IDS"] + dense)
        return kind, key, 1 if kind == "INCR" else self.rng.randint(1, 80)

    def run(self):
        r = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=30)
        got = 0
        try:
            while got < self.target:
                p = r.pipeline(transaction=False)
                plan = [self.plan() for _ in range(25)]
                self.commands += len(plan)
                for kind, key, n in plan:
                    p.execute_command(kind, key, *([] if kind == "INCR" else [n]))
                for (kind, key, n), v in zip(plan, p.execute(raise_on_error=False)):
                    if isinstance(v, Exception):
                        self.errors.append("%s %s %d: %s" % (kind, key, n, v))
                        continue
                    ids = ([v] if kind == "INCR" else list(range(v - n + 1, v + 1))
                           if kind == "INCRBY" else v)
                    if len(ids) != n:
                        self.errors.append("%s %s %d: %d IDs" % (kind, key, n, len(ids)))
                    self.ids[key].extend(ids)
                    got += len(ids)
        except Exception as e:  # noqa: BLE001 - reported as a failed check
            self.errors.append(repr(e))
        finally:
            r.connection_pool.disconnect()


t_start = time.time()
env = Env()
db = env.mariadb()
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('load', 1, 1000), ('dense', 1, 10),"
       " ('idle', 1, 5000), ('park', 1, 1000), ('other', 1, 1000), ('hung', 1, 1000), ('rep', 1, 100)")
seg = {"leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
       "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw"}
node = env.leafd("n1", static_props(worker=7, **seg, **{"leafd.db.timeout.ms": "1000"}), resp=True)
port = node.resp_port
keeper = RespStream(port)  # open from start to end: errors elsewhere must not touch it
check(keeper.call("PING") == "PONG", "keeper connection answers")

log("100,000 IDs over 8 pipelined connections, INCR / INCRBY / LEAF.IDS mixed")
t0 = time.time()
loaders = [Loader(port, i, TOTAL // THREADS) for i in range(THREADS)]
for t in loaders:
    t.start()
for t in loaders:
    t.join(120)
check(not any(t.is_alive() for t in loaders), "all loaders finished")
errors = [e for t in loaders for e in t.errors]
check(not errors, "no error reply under load: %r" % errors[:5])
total = sum(len(v) for t in loaders for v in t.ids.values())
log("%d IDs (snowflake %d, segment %d) from %d commands in %.1f s" % (
    total, sum(len(t.ids["snowflake:load"]) for t in loaders),
    sum(len(t.ids["segment:load"]) for t in loaders), sum(t.commands for t in loaders),
    time.time() - t0))
check(total >= TOTAL, "at least %d IDs issued (%d)" % (TOTAL, total))
for key in ("snowflake:load", "segment:load"):
    every = [x for t in loaders for x in t.ids[key]]
    check(len(every) == len(set(every)), "%s: no duplicate across connections (%d IDs)"
          % (key, len(every)))
    check(all(ascending(t.ids[key]) for t in loaders), "%s: ascending per connection" % key)
    check(min(every) > 0, "%s: positive IDs" % key)

log("one pipeline of 50,000 INCR, written while nothing is read (back-pressure)")
big = RespStream(port, timeout=30)
sender = threading.Thread(target=big.send, args=(resp_command("INCR", "snowflake:deep") * 50000,))
sender.start()
deep = [big.read_reply() for _ in range(50000)]
sender.join(30)
check(len(deep) == 50000 and all(isinstance(x, int) for x in deep) and ascending(deep),
      "50,000 replies, in order, ascending")
big.close()

log("identical INCRs pipelined together share one reservation: still unique, and increasing per connection across keys")
# 16 identical INCRs then other snowflake commands in one write; a MULTI whose EXEC is
# followed by an identical EXEC must not reuse IDs taken ahead for its queued INCR.
burst = (resp_command("INCR", "snowflake:rep") * 16 + resp_command("INCR", "snowflake:oth") +
         resp_command("MULTI") + resp_command("INCR", "snowflake:rep") +
         resp_command("INCR", "snowflake:oth") + resp_command("EXEC") * 2 +
         resp_command("INCR", "snowflake:rep") * 3 + resp_command("LEAF.IDS", "snowflake:rep", 2))
per_burst = 16 + 1 + 1 + 1 + 1 + 2 + 3 + 1


def bursts(payload, replies, conns, n):
    """conns connections each send payload n times, reading its replies each
    time; the integers of each connection's replies (arrays flattened), in order."""
    out = []

    def one():
        st = RespStream(port, timeout=30)
        seq = []
        for _ in range(n):
            st.send(payload)
            for v in [st.read_reply() for _ in range(replies)]:
                seq += [x for x in (v if isinstance(v, list) else [v]) if isinstance(x, int)]
        out.append(seq)
        st.close()

    ts = [threading.Thread(target=one) for _ in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    return out


seqs = bursts(burst, per_burst, 6, 150)
every = [x for q in seqs for x in q]
check(len(seqs) == 6 and all(len(q) == 150 * 24 for q in seqs),
      "6 connections x 150 bursts, 24 snowflake IDs each (%s)" % [len(q) for q in seqs])
check(len(every) == len(set(every)), "no duplicate (%d IDs)" % len(every))
check(all(ascending(q) for q in seqs), "every snowflake ID of a connection above the one before")

log("segment: identical INCRs pipelined together share one take: unique, ascending per connection, and none wasted")
# Tag 'rep' (step 100): batches of 16 cross a range end every few bursts. The
# only consumers are these connections, so the IDs handed out must be exactly
# 1..N: a batch that skipped the rest of a range, or IDs taken ahead and never
# answered, would leave a hole.
sburst = resp_command("INCR", "segment:rep") * 16 + resp_command("INCRBY", "segment:rep", 1) * 3
sseqs = bursts(sburst, 19, 4, 60)
severy = [x for q in sseqs for x in q]
check(len(sseqs) == 4 and all(len(q) == 60 * 19 for q in sseqs),
      "4 connections x 60 bursts, 19 segment IDs each (%s)" % [len(q) for q in sseqs])
check(all(ascending(q) for q in sseqs), "every segment ID of a connection above the one before")
check(sorted(severy) == list(range(1, len(severy) + 1)),
      "the %d IDs are exactly 1..%d: unique, and none skipped or lost" % (len(severy), len(severy)))

log("HTTP and RESP draw on the same buffer of a tag")
mix = []
for i in range(20):
    mix += (node.get_ids("/api/segment/get/load?count=7") if i % 2 else
            keeper.call("LEAF.IDS", "segment:load", 7))
seg_max = max(x for t in loaders for x in t.ids["segment:load"])
check(len(mix) == 140 and ascending(mix) and mix[0] > seg_max, "interleaved, ascending, all new")

log("INCRBY: dense blocks from one range on a tag with step 10")
d = RespStream(port)
check(d.call("INCRBY", "segment:dense", 7) == 7, "INCRBY 7 on a fresh tag -> 7 (owns 1..7)")
check(d.call("INCRBY", "segment:dense", 7) == 17, "INCRBY 7 again -> 17: 8..10 skipped, 11..17")
check(d.call("INCR", "segment:dense") == 18, "INCR then -> 18")
rng, last, bad = random.Random(1), 18, []
for _ in range(300):
    n = rng.choice([1, 1, 2, 3, 5, 8, 9])
    v = d.call("INCRBY", "segment:dense", n) if n > 1 or rng.random() < 0.5 else \
        d.call("INCR", "segment:dense")
    gap = v - n + 1 - last - 1
    if not isinstance(v, int) or gap < 0 or gap >= n or (n == 1 and gap):
        bad.append((n, last, v))
    last = v
check(not bad, "blocks never overlap, a single never skips, a block skips < n: %r" % bad[:5])
v = d.call("INCRBY", "segment:dense", 10000)
check(isinstance(v, int) and v > last + 9999, "INCRBY 10000 (the limit) -> %r" % v)
ids = d.call("LEAF.IDS", "snowflake:lim", 10000)
check(len(ids) == 10000 and ascending(ids), "LEAF.IDS 10000 on snowflake")
ids = d.call("LEAF.IDS", "segment:dense", 25)
check(ids == list(range(v + 1, v + 26)), "LEAF.IDS 25 on segment: the next 25 of the tag")
d.close()

log("every error of docs/reference/resp.md, pipelined on one connection that stays open")
cases = [
    (("INCR", "segment:nosuch"), "UNKNOWN_TAG "),
    (("INCR", "segment:" + "x" * 128), "UNKNOWN_TAG "),
    (("LEAF.IDS", "segment:nosuch", 3), "UNKNOWN_TAG "),
    (("INCR", "nosuch"), "BAD_KEY "),
    (("INCR", "counter:1"), "BAD_KEY "),
    (("INCR", "Segment:load"), "BAD_KEY "),
    (("INCR", "segment:"), "BAD_TAG "),
    (("INCR", "segment:bad tag"), "BAD_TAG "),
    (("INCR", "segment:a/b"), "BAD_TAG "),
    (("INCR", "snowflake:" + "x" * 129), "BAD_TAG "),
    (("LEAF.IDS", "snowflake:caf\u00e9", 1), "BAD_TAG "),
    (("INCRBY", "segment:load", 0), "BAD_COUNT "),
    (("INCRBY", "segment:load", 10001), "BAD_COUNT "),
    (("INCRBY", "segment:load", -1), "BAD_COUNT "),
    (("INCRBY", "segment:load", "1.5"), "BAD_COUNT "),
    (("LEAF.IDS", "snowflake:e", "abc"), "BAD_COUNT "),
    (("LEAF.IDS", "snowflake:e", 0), "BAD_COUNT "),
    (("INCRBY", "snowflake:e", 5), "WRONG_MODE "),
    (("INCR", "sequence:s"), "SEQUENCE_DISABLED "),
    (("GET", "sequence:s"), "SEQUENCE_DISABLED "),
    (("INCR",), "ERR wrong number of arguments for 'incr' command"),
    (("incr", "segment:load", "x"), "ERR wrong number of arguments for 'incr' command"),
    (("INCRBY", "segment:load"), "ERR wrong number of arguments for 'incrby' command"),
    (("LEAF.IDS", "segment:load"), "ERR wrong number of arguments for 'leaf.ids' command"),
    (("GET",), "ERR wrong number of arguments for 'get' command"),
    (("SELECT", 1), "ERR DB index is out of range"),
    (("SET", "k", "v"), "ERR unknown command 'SET', with args beginning with: 'k' 'v' "),
    (("NoSuch",), "ERR unknown command 'NoSuch', with args beginning with: "),
]
e = RespStream(port)
e.send(b"".join(resp_command(*c) for c, _ in cases) + resp_command("PING"))
for (cmd, want), got in zip(cases, [e.read_reply() for _ in cases]):
    exact = want.startswith("ERR")
    check(isinstance(got, RespError) and (got == want if exact else got.startswith(want)),
          "%s -> %r (want %s%r)" % (" ".join(map(str, cmd))[:60], got, "" if exact else "prefix ", want))
check(e.read_reply() == "PONG", "the connection stays open after ID and command errors")
check(isinstance(e.call("INCR", "segment:load"), int), "and still issues IDs")
e.close()

log("malformed frames and limits: an error reply, then that connection only is closed")
frames = [
    ("invalid bulk length", resp_command("PING") + b"*2\r\n$4\r\nINCR\r\n$x\r\n"),
    ("invalid multibulk length", b"*abc\r\n"),
    ("no CRLF after a bulk", b"*1\r\n$4\r\nPINGxx\r\n"),
    ("not a bulk in a multibulk", b"*1\r\n+PING\r\n"),
    ("unbalanced quotes (inline)", b'ECHO "unterminated\r\n'),
    ("bulk over 64 KiB (header only)", b"*2\r\n$4\r\nECHO\r\n$65537\r\n"),
    ("bulk over 64 KiB (whole)", resp_command("ECHO", b"x" * 200000)),
    ("1025 arguments (header only)", b"*1025\r\n"),
    ("1025 arguments (whole)", resp_command("PING", *(["a"] * 1024))),
    ("1025 inline arguments", b"PING" + b" a" * 1024 + b"\r\n"),
    ("inline line over 64 KiB", b"x" * 65537),
    ("a command over 4 KiB in all before AUTH", resp_command("ECHO", b"x" * 5000)),
    ("too many arguments for 4 KiB before AUTH", b"*300\r\n"),
]


def send_quietly(stream, data):
    """Writes from a thread, so the reply is read while the server may stop
    reading (it closes right after its error; a write may then fail)."""
    def run():
        try:
            stream.send(data)
        except OSError:
            pass
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


for what, data in frames:
    c = RespStream(port)
    c.sock.settimeout(5)
    replies = []
    sender = send_quietly(c, data)
    try:
        while True:
            replies.append(c.read_reply())
    except (EOFError, socket.timeout, OSError) as ex:
        closed = isinstance(ex, EOFError) or c.eof
    if what == "invalid bulk length":
        check(replies[:1] == ["PONG"], "%s: the command before it is answered first" % what)
        replies = replies[1:]
    check(len(replies) == 1 and is_err(replies[0], "ERR Protocol error"),
          "%s: one protocol error: %r" % (what, replies))
    check(closed, "%s: then the connection is closed" % what)
    sender.join(5)
    c.close()
c = RespStream(port)
c.send(resp_command("ECHO", b"y" * 4000) + resp_command("ECHO", *(["a"] * 100)) +
       resp_command("PING"))
check(c.read_reply() == "y" * 4000, "a command of 4000 bytes is accepted before AUTH")
check(c.read_reply() == "ERR wrong number of arguments for 'echo' command",
      "100 arguments are accepted (and ECHO's arity applies)")
check(c.read_reply() == "PONG", "that connection stays open")
c.close()
check(keeper.call("PING") == "PONG" and isinstance(keeper.call("INCR", "snowflake:k"), int),
      "the connection kept open throughout is unaffected")

log("MariaDB stopped (SIGSTOP, a hung server): no request hangs on it")
o = RespStream(node.resp_port)
check(isinstance(o.call("INCR", "segment:load"), int), "segment:load has a buffered range")
check(db.proc.pause(), "MariaDB's threads all stopped")
t0 = time.time()
v = o.call("INCR", "segment:hung")
took = time.time() - t0
check(is_err(v, "DATABASE_UNAVAILABLE "), "tag with nothing buffered, database hung -> %r" % v)
check(took < 1.5, "... within about a second (%.3f s)" % took)
log("hung database: DATABASE_UNAVAILABLE after %.3f s" % took)
check(isinstance(o.call("INCR", "segment:load"), int), "a buffered tag is still served")
check(isinstance(keeper.call("INCR", "snowflake:k"), int), "snowflake is still served")
db.proc.p.send_signal(signal.SIGCONT)
t_up = time.time()
check(wait_until(lambda: isinstance(o.call("INCR", "segment:hung"), int), 30, 0.2),
      "served again after SIGCONT (%.1f s)" % (time.time() - t_up))

log("MariaDB killed (kill -9): DATABASE_UNAVAILABLE fast, then recovery by itself")
db.stop(signal.SIGKILL)
t0 = time.time()
v = o.call("INCR", "segment:idle")
took = time.time() - t0
check(is_err(v, "DATABASE_UNAVAILABLE "), "tag with nothing buffered -> %r" % v)
check(took < 1.5, "... within about a second (%.3f s)" % took)
log("DATABASE_UNAVAILABLE after %.3f s" % took)
v = o.call("INCR", "segment:never-seen")
check(is_err(v, "DATABASE_UNAVAILABLE "), "unknown tag while the database is down: %r" % v)
check(isinstance(o.call("INCR", "segment:load"), int), "a buffered tag is still served")
check(isinstance(keeper.call("INCR", "snowflake:k"), int), "snowflake is still served")
check(wait_until(lambda: "segment_database:down" in keeper.call("INFO", "leafd"), 10),
      "INFO leafd: segment_database:down")
db.start()
t_up = time.time()
got = wait_until(lambda: (lambda v: v if isinstance(v, int) else None)(
    o.call("INCR", "segment:idle")), 30, 0.2)
log("recovered %.2f s after the database was back" % (time.time() - t_up))
check(got == 1, "the idle tag is served after the restart, from 1: %r" % got)
check(time.time() - t_up < 15, "recovery within seconds (%.1f s)" % (time.time() - t_up))
o.close()

log("a request waiting for its range parks; others are served; replies stay in order")
# leafd.db.timeout.ms 6000: the server-side statement limit (half of it) outlasts the 1.2 s lock.
park = env.leafd("park", dict(seg, **{"leafd.segment.wait.ms": "3000", "leafd.db.timeout.ms": "6000"}),
                 resp=True)
b = RespStream(park.resp_port)
check(isinstance(b.call("INCR", "segment:other"), int), "segment:other warmed up")
lock = subprocess.Popen(["mariadb", "--no-defaults", "-uroot", "--socket=" + db.sock, "-N", "-B",
                         "-n", "leaf"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
lock.stdin.write("BEGIN; SELECT max_id FROM leaf_alloc WHERE biz_tag = 'park' FOR UPDATE;\n"
                 "SELECT SLEEP(1.2); COMMIT;\n")
lock.stdin.close()
check(lock.stdout.readline().strip() == "1", "the row of 'park' is locked in MariaDB")
a = RespStream(park.resp_port)
t0 = time.time()
a.send(resp_command("PING") + resp_command("INCR", "segment:park") + resp_command("ECHO", "after")
       + resp_command("INCR", "segment:park") + resp_command("PING"))
c2 = RespStream(park.resp_port)  # parked, then a malformed frame behind it
c2.send(resp_command("INCR", "segment:park") + b"*abc\r\n")
c3 = RespStream(park.resp_port)  # parked, then gone
c3.send(resp_command("INCR", "segment:park"))
time.sleep(0.05)
c3.close()
check(a.read_reply() == "PONG", "the PING before it is answered")
a.sock.settimeout(0.4)
try:
    early = a.sock.recv(4096)
except socket.timeout:
    early = b""
check(early == b"", "nothing after it while it waits: %r" % early[:80])
t1 = time.time()
quick = [b.call("PING"), b.call("INCR", "segment:other"), b.call("LEAF.IDS", "segment:other", 3)]
check(quick[0] == "PONG" and isinstance(quick[1], int) and len(quick[2]) == 3,
      "another connection is served meanwhile: %r" % quick)
check(time.time() - t1 < 0.5, "... at once (%.3f s)" % (time.time() - t1))
a.sock.settimeout(10)
rest = [a.read_reply() for _ in range(4)]
check([type(x) for x in rest] == [int, str, int, str] and rest[1:4:2] == ["after", "PONG"]
      and rest[0] < rest[2], "replies in order once the range came: %r" % rest)
log("parked for %.2f s" % (time.time() - t0))
c2.sock.settimeout(10)
r2 = [c2.read_reply(), c2.read_reply()]
check(isinstance(r2[0], int) and r2[0] not in rest and is_err(r2[1], "ERR Protocol error"),
      "a malformed frame behind a parked command: its reply first, then the error: %r" % r2)
check(c2.closed_by_server(5), "... then closed")

log("MULTI / EXEC whose first command waits for its range: EXEC parks, then answers all")
db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('multi', 1, 100)")
m = RespStream(park.resp_port)
m.send(resp_command("MULTI") + resp_command("INCR", "segment:multi")
       + resp_command("LEAF.IDS", "segment:multi", 3) + resp_command("INCRBY", "segment:multi", 5)
       + resp_command("EXEC") + resp_command("PING"))
m.sock.settimeout(10)
got = [m.read_reply() for _ in range(6)]
check(got[:4] == ["OK", "QUEUED", "QUEUED", "QUEUED"] and got[5] == "PONG"
      and isinstance(got[4], list) and len(got[4]) == 3,
      "MULTI, three QUEUED, EXEC's array of three, then PING: %r" % got)
if isinstance(got[4], list) and len(got[4]) == 3:
    first, ids, block = got[4]
    check(first == 1 and ids == [2, 3, 4] and block == 9,
          "the queued commands ran in order on a fresh tag: %r" % got[4])
m.close()
c2.close()
check(park.proc.alive() and b.call("PING") == "PONG", "a client gone while parked harms nobody")
v = b.call("INCR", "snowflake:x")
check(is_err(v, "SNOWFLAKE_DISABLED "), "snowflake is off on this node -> %r" % v)
lock.wait(10)
a.close()
b.close()

log("/metrics and INFO")
m = node.get("/metrics")[1]
for route, status in [("incr", "ok"), ("incrby", "ok"), ("leaf.ids", "ok"), ("incr", "unknown_tag"),
                      ("incr", "bad_key"), ("incr", "bad_tag"), ("incrby", "bad_count"),
                      ("incrby", "wrong_mode"), ("get", "sequence_disabled"),
                      ("incr", "database_unavailable"), ("incr", "err"), ("unknown", "err"),
                      ("protocol_error", "protocol_error")]:
    check(metric(m, "leafd_http_requests_total", protocol="resp", route=route, status=status),
          "leafd_http_requests_total{protocol=resp,route=%s,status=%s}" % (route, status))
n_ok = sum(metric(m, "leafd_http_requests_total", protocol="resp", route=r, status="ok") or 0
           for r in ("incr", "incrby", "leaf.ids"))
check(n_ok >= 4000, "thousands of ID commands counted (%d)" % n_ok)
check(metric(m, "leafd_http_request_duration_seconds_count", protocol="resp", route="leaf.ids"),
      "leafd_http_request_duration_seconds for LEAF.IDS")
check(metric(m, "leafd_http_connections", protocol="resp") is not None, "leafd_http_connections{resp}")
info = keeper.call("INFO")
check("loading:0" in info and "# Leafd" in info and "segment_enabled:1" in info
      and "segment_database:up" in info and "snowflake_worker_id:7" in info,
      "INFO: loading:0 and the leafd section")
keeper.close()

check(node.stop() == 0 and park.stop() == 0, "graceful stops exit 0")
log("took %.1f s" % (time.time() - t_start))
env.finish()
