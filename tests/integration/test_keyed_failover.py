"""Keyed sequences through a kill -9 of the primary and a graceful stop (docs/keyed-sequences.md,
"Costs"): three nodes, four client processes (two over HTTP, two over RESP, each following 307 and
-MOVED and retrying 503 and -TRYAGAIN) on 200 keys of one space with a small step; the primary
is killed with -9 once and a standby takes over, then the new primary is stopped gracefully. Every
call is recorded (tests/lib/ordercheck.py): 0 violations and 0 repeats. Per key, the largest
jump (an ID minus the key's ID before it) is measured, and no key starts above its section's
highest ID (of any key of the section, issued before) by more than step and a call's count."""
import json
import multiprocessing
import os
import random
import signal
import time
import urllib.parse

import redis

import keyedclients
from leafdtest import Env, check, http, log, wait_until
from ordercheck import Histories, History, verify
from zkhelpers import zk_props

STEP = 100
KEYS = ["k%d" % i for i in range(150)] + ["{tag%d}:m%d" % (i % 10, i) for i in range(50)]
COUNTS = [1, 1, 1, 5, 10]  # HTTP's ?count=, RESP's INCRBY
SPACE = "fo"
RUN_S = 40  # no client runs past this, whatever happens


def section(key):
    """The key's section (keyedclients.section: the slot of keyed:<space>:<key> / 64)."""
    return keyedclients.section(SPACE, key)


def http_client(i, ports, hdir, stop):
    hist = History(hdir, "http%d" % i)
    rnd = random.Random(i)
    port = ports[0]
    end = time.monotonic() + RUN_S
    while not os.path.exists(stop) and time.monotonic() < end:
        key, n = rnd.choice(KEYS), rnd.choice(COUNTS)
        path = "/api/keyed/get/%s/%s?count=%d" % (SPACE, urllib.parse.quote(key, safe=""), n)
        with hist.call("keyed:%s:%s" % (SPACE, key)) as c:
            try:
                st, body, hdr = http(port, path, timeout=2)
            except OSError as e:
                st, body, hdr = 0, repr(e), {}
            if st == 200:
                c.values = [int(x) for x in body.split("\n")]
            else:
                c.fail(st)
        if st == 307:
            port = int(urllib.parse.urlparse(hdr.get("Location", "")).port or port)
        elif st != 200:
            port = rnd.choice(ports)
            time.sleep(0.02)
    hist.close()


def resp_client(i, ports, hdir, stop):
    hist = History(hdir, "resp%d" % i)
    rnd = random.Random(100 + i)
    port = ports[0]
    r = redis.Redis(port=port, socket_timeout=2)
    end = time.monotonic() + RUN_S
    while not os.path.exists(stop) and time.monotonic() < end:
        key, n = rnd.choice(KEYS), rnd.choice(COUNTS)
        err = None
        with hist.call("keyed:%s:%s" % (SPACE, key)) as c:
            try:
                last = r.incrby("keyed:%s:%s" % (SPACE, key), n)
                c.values = range(last - n + 1, last + 1)
            except (redis.exceptions.ResponseError, redis.exceptions.ConnectionError,
                    redis.exceptions.TimeoutError) as e:
                err = str(e)
                c.fail(err[:60])
        if err is not None:
            if err.startswith("MOVED"):
                port = int(err.split()[2].rsplit(":", 1)[1])
            else:
                port = rnd.choice(ports)
                time.sleep(0.02)
            r.close()
            r = redis.Redis(port=port, socket_timeout=2)
    r.close()
    hist.close()


env = Env()
zk = env.zookeeper()
HISTORY = os.path.join(env.dir, "history")
STOP = os.path.join(env.dir, "stop")


def props():
    return zk_props(zk.address(), name="kf", **{
        "leafd.sequence.enable": "true", "leafd.zk.session.timeout.ms": "3000"})


nodes = [env.leafd("n%d" % i, props(), resp=True, wait_ready=False) for i in range(3)]
check(all(n.wait_ready(30) for n in nodes), "three nodes ready")


def role(n):
    try:
        return json.loads(n.get("/ready", timeout=2)[1])["sequence"]["role"]
    except (OSError, ValueError, KeyError):
        return None


def primary(exclude=None):
    return wait_until(lambda: next((n for n in nodes if n is not exclude and n.proc.alive() and
                                    role(n) == "primary"), None), 20)


p = primary()
check(p is not None, "a primary is elected")
st, body, _ = http(p.port, "/api/keyed", method="POST", body=json.dumps({"name": SPACE, "step": STEP}))
check(st == 201, "space %s created: %d %s" % (SPACE, st, body))

ctx = multiprocessing.get_context("fork")
http_ports = [n.port for n in nodes]
resp_ports = [n.resp_port for n in nodes]
procs = [ctx.Process(target=http_client, args=(i, http_ports, HISTORY, STOP)) for i in range(2)]
procs += [ctx.Process(target=resp_client, args=(i, resp_ports, HISTORY, STOP)) for i in range(2)]
for pr in procs:
    pr.start()
time.sleep(3)

log("kill -9 the primary %s" % p.name)
p.stop(signal.SIGKILL)
q = primary(exclude=p)
check(q is not None, "a standby takes over")
time.sleep(3)
p.start(wait_ready=False)
check(p.wait_ready(30), "the killed node is back")
time.sleep(2)

q = primary() or q
log("graceful stop of the primary %s" % q.name)
q.stop(signal.SIGTERM)
r = primary(exclude=q)
check(r is not None, "another node takes over after the graceful stop")
time.sleep(3)
open(STOP, "w").close()
for pr in procs:
    pr.join(RUN_S + 10)
    check(pr.exitcode == 0, "client %s ended cleanly (rc %s)" % (pr.name, pr.exitcode))

ok, text = verify(HISTORY)
log(text)
check(ok, "0 violations and 0 repeats: %s" % text)

# Jumps: per key, each ID minus the key's ID before it; and per section, how far a key's ID lies
# above the highest ID of any key of its section issued before it (calls that began earlier).
h = Histories().load(HISTORY)
calls = []  # (start, end, key, first, last)
for key, kl in h.keys.items():
    for j in range(len(kl.first)):
        calls.append((kl.start[j], kl.end[j], key.split(":", 2)[2], kl.first[j], kl.last[j]))
calls.sort()
check(len(calls) > 1000, "the clients made calls: %d" % len(calls))
last_of, high_of = {}, {}
worst_jump, worst_past = (0, None), (0, None)
for start, end, key, first, last in calls:
    sec = section(key)
    if key in last_of and first - last_of[key] > worst_jump[0]:
        worst_jump = (first - last_of[key], key)
    if sec in high_of and first - high_of[sec] > worst_past[0]:
        worst_past = (first - high_of[sec], key)
    last_of[key] = max(last_of.get(key, 0), last)
    high_of[sec] = max(high_of.get(sec, 0), last)
log("largest jump of one key: %d (%s); largest start above its section's highest: %d (%s); step %d"
    % (worst_jump[0], worst_jump[1], worst_past[0], worst_past[1], STEP))
check(worst_past[0] <= STEP + max(COUNTS),
      "no key starts more than step (+ a call's count) above its section's highest ID: %d" % worst_past[0])
check(all(first >= 1 for _, _, _, first, _ in calls), "every ID >= 1")
env.finish()
