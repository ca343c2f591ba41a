"""Keyed sequence clients as separate processes, and the jump measure (docs/keyed-sequences.md).

A client process asks for IDs of random keys of one space until a stop file exists or its
deadline passes. Each call follows the cluster as a well-behaved client for up to RETRY_S:
HTTP 307 -> the Location's port, RESP -MOVED -> the named port, anything else (503, -TRYAGAIN, a
refused or reset connection, a timeout) -> another node a few ms later. The port that answered
a key last is tried first next time (with sharding, keys live on different owners). Every call
is recorded in an order checker history (tests/lib/ordercheck.py) as "<name>@<port>", the port
that answered (a call that ran out of time: a failed call under the client's name); at the end
the process writes <name>.json beside the histories: {"calls", "redirects"}.

Run as a script, the module is one client process:
    keyedclients.py http|resp NAME SPACE HISTORY_DIR STOP_FILE DEADLINE PORTS KEYS_FILE COUNTS
(DEADLINE on time.time(); PORTS, COUNTS comma-separated; KEYS_FILE one key a line).

section_calls() and section_jumps() measure, per call, how far its first ID lies above the
highest ID of any key of its section answered before: the cost of a failover or a hand-over
(docs/keyed-sequences.md, "Costs")."""
import http.client as httpclient
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.parse

from ordercheck import Histories, History
from seqclients import RespError, RespReader, resp_command

RETRY_S = 8.0
PAUSE = 0.004


def crc16(data):
    """CRC16-CCITT (XMODEM), Redis Cluster's key slot hash."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def slot(space, key):
    """The slot of keyed:<space>:<key>, hash tags honoured."""
    k = ("keyed:%s:%s" % (space, key)).encode()
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return crc16(k) % 16384


def section(space, key):
    """The key's section: its slot / 64 (docs/keyed-sequences.md, "Sections")."""
    return slot(space, key) // 64


def owners(resp_port):
    """{slot: RESP port of its owner} from CLUSTER SLOTS."""
    sock = socket.create_connection(("127.0.0.1", resp_port), timeout=5)
    try:
        sock.sendall(resp_command("CLUSTER", "SLOTS"))
        ranges = RespReader(sock).read()
    finally:
        sock.close()
    return {s: int(r[2][1]) for r in ranges for s in range(int(r[0]), int(r[1]) + 1)}


def sharded_space(nodes, space, step):
    """Waits for the nodes (leafd.sequence.sharding = true) to be ready and share the slots,
    then creates the keyed space on the first (tests/lib/leafdtest.py's checks)."""
    from leafdtest import check, http, wait_until  # the client processes need neither
    from seqcluster import shard_slots
    check(all(n.wait_ready(40) for n in nodes), "%d nodes ready" % len(nodes))
    check(bool(wait_until(lambda: shard_slots(nodes), 40, 0.2)),
          "%d owners share the slots" % len(nodes))
    st, body, _ = http(nodes[0].port, "/api/keyed", method="POST",
                       body=json.dumps({"name": space, "step": step}))
    check(st == 201, "space %s created with step %d: %d %s" % (space, step, st, body))


def _port_of(location, default):
    try:
        return urllib.parse.urlsplit(location).port or default
    except ValueError:
        return default


def http_call(port, space, key, n):
    """(ids, None, port) or (None, why, next port, or None for another node)."""
    path = "/api/keyed/get/%s/%s%s" % (space, urllib.parse.quote(key, safe=""),
                                       "?count=%d" % n if n > 1 else "")
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read()
        loc = r.getheader("Location") or ""
    finally:
        conn.close()
    if r.status == 200:
        return [int(x) for x in body.split(b"\n")], None, port
    if r.status == 307:
        return None, "307", _port_of(loc, port)
    try:
        code = json.loads(body).get("code") or "http_%d" % r.status
    except ValueError:
        code = "http_%d" % r.status
    return None, code, None


def resp_call(port, space, key, n):
    """As http_call, over RESP: INCR, or INCRBY for n > 1 (its answer v: IDs v-n+1..v)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=2)
    try:
        k = "keyed:%s:%s" % (space, key)
        sock.sendall(resp_command("INCR", k) if n == 1 else resp_command("INCRBY", k, n))
        last = RespReader(sock).read()
    finally:
        sock.close()
    if isinstance(last, RespError):
        if last.startswith("MOVED"):
            return None, "moved", int(last.rsplit(":", 1)[1])
        return None, last.split(" ", 1)[0].lower(), None
    return list(range(last - n + 1, last + 1)), None, port


def client(proto, name, space, hdir, stop_file, deadline, ports, keys, counts):
    hist = History(hdir, name)
    rng = random.Random("%s/%s" % (space, name))
    one = http_call if proto == "http" else resp_call
    home = {}  # key -> the port that answered it last
    calls = redirects = 0
    while not os.path.exists(stop_file) and time.time() < deadline:
        key, n = rng.choice(keys), rng.choice(counts)
        port = home.get(key) or rng.choice(ports)
        with hist.call("keyed:%s:%s" % (space, key), who=name) as c:
            ids, why, give_up = None, "timeout", time.monotonic() + RETRY_S
            while ids is None and time.monotonic() < give_up and not os.path.exists(stop_file):
                try:
                    ids, why, nxt = one(port, space, key, n)
                except (OSError, ValueError, httpclient.HTTPException) as e:
                    why, nxt = type(e).__name__, None
                if ids is not None:
                    break
                redirects += nxt is not None
                port = nxt or rng.choice([p for p in ports if p != port] or ports)
                if nxt is None:
                    time.sleep(0.02)
            if ids is None:
                c.fail(why)
            else:
                c.values = ids
                c.who = "%s@%d" % (name, port)
                home[key] = port
        calls += 1
        time.sleep(PAUSE)
    hist.close()
    with open(os.path.join(hdir, name + ".json"), "w") as f:
        json.dump({"calls": calls, "redirects": redirects}, f)


def start(proto, name, space, hdir, stop_file, deadline, ports, keys, counts):
    """One client process (a fresh interpreter: safe beside the caller's threads)."""
    os.makedirs(hdir, exist_ok=True)
    keys_file = os.path.join(hdir, name + ".keys")
    with open(keys_file, "w") as f:
        f.write("".join(k + "\n" for k in keys))
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), proto, name, space, hdir,
                             stop_file, "%.3f" % deadline, ",".join(map(str, ports)), keys_file,
                             ",".join(map(str, counts))])


def stop(procs, stop_file, timeout=15):
    """Stops the client processes; returns their exit codes."""
    open(stop_file, "w").close()
    for p in procs:
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return [p.returncode for p in procs]


def section_calls(h, space):
    """Every answered call of the space's keys in the histories h (ordercheck.Histories) as
    (start ns, end ns, key, first, last, who), sorted by start."""
    calls, prefix = [], "keyed:%s:" % space
    for k, kl in h.keys.items():
        if not k.startswith(prefix):
            continue
        key = k[len(prefix):]
        for j in range(len(kl.first)):
            calls.append((kl.start[j], kl.end[j], key, kl.first[j], kl.last[j],
                          h.names[kl.who[j]]))
    calls.sort()
    return calls


def section_jumps(calls, space):
    """Per call of section_calls() whose section had an answer before: (call, jump, since),
    jump = its first ID minus the highest ID of its section in calls that began before it,
    since = the start (ns) of the call that held that highest ID."""
    high, out = {}, []
    for c in calls:
        sec = section(space, c[2])
        if sec in high:
            out.append((c, c[3] - high[sec][0], high[sec][1]))
        if sec not in high or c[4] > high[sec][0]:
            high[sec] = (c[4], c[0])
    return out


def phase_jumps(jumps, phases):
    """section_jumps() split by phases [(name, start ns)], in order: per phase (name, calls,
    largest jump, its call or None), a call belonging to the phase its answer came in (its end)."""
    out = []
    for i, (name, t0) in enumerate(phases):
        t1 = phases[i + 1][1] if i + 1 < len(phases) else float("inf")
        mine = [j for j in jumps if t0 <= j[0][1] < t1]
        w = max(mine, key=lambda j: j[1]) if mine else (None, 0, 0)
        out.append((name, len(mine), w[1], w[0]))
    return out


def jump_bound(calls, space, step, max_count, faults, per_fault=1):
    """The failover cost's bound (docs/keyed-sequences.md, "Costs": a takeover costs at most a
    step, each takeover in a row with no ID issued in between one more): a call's first ID lies
    at most step x max(1, per_fault x the faults between) + max_count above its section's
    highest, the faults between being those of faults [(start ns, end ns)] that overlap the time
    from the call holding that highest to this call's end. Returns (worst, breaches): worst =
    (jump, key, faults between), breaches = texts."""
    worst, breaches = (0, None, 0), []
    for c, jump, since in section_jumps(calls, space):
        between = sum(1 for (a, b) in faults if a <= c[1] and b >= since)
        bound = step * max(1, per_fault * between) + max_count
        if jump > worst[0]:
            worst = (jump, c[2], between)
        if jump > bound:
            breaches.append("%s (%s): first ID %d is %d above its section's highest, bound %d "
                            "(%d faults between)" % (c[2], c[5], c[3], jump, bound, between))
    return worst, breaches


if __name__ == "__main__":
    a = sys.argv
    with open(a[8]) as kf:
        key_list = [line.rstrip("\n") for line in kf if line.strip()]
    client(a[1], a[2], a[3], a[4], a[5], float(a[6]), [int(p) for p in a[7].split(",")],
           key_list, [int(x) for x in a[9].split(",")])
