"""Snowflake layouts (docs/id-shapes.md): a node continues an existing
layout, and its IDs read back with that system's own decomposition.

- Sonyflake (time:39,sequence:8,worker:16, 10 ms units, epoch 2014-09-01):
  Sonyflake's Decompose() reads the right time (within one unit) and worker;
  a batch of two ticks' 512 sequence numbers stays in order, a larger one is
  refused at once (400 bad_count);
- Baidu uid-generator at unit 1000 (its formula, parameterised by its bit
  widths, as its BitsAllocator is): time:31,worker:23,sequence:9, epoch
  2016-05-20. Its default time:28 lasts 8.5 years and is refused by the
  horizon check, with an error naming the key;
- /decodeSnowflakeId follows the layout;
- forever mode: a worker ID above the layout's largest stops start-up
  (layout worker:1: the third node's worker ID 2 does not fit)."""
import json
import time

from leafdtest import Env, check, log, static_props
from zkhelpers import start_expect_exit, zk_props

SONYFLAKE_EPOCH = 1409529600000
BAIDU_EPOCH = 1463673600000
MASK64 = (1 << 64) - 1


def sonyflake_decompose(id_):
    """Sonyflake's Decompose(): BitLenSequence 8, BitLenMachineID 16, time in 10 ms."""
    bit_len_sequence, bit_len_machine = 8, 16
    mask_sequence = ((1 << bit_len_sequence) - 1) << bit_len_machine
    mask_machine = (1 << bit_len_machine) - 1
    return {"time": id_ >> (bit_len_sequence + bit_len_machine),
            "sequence": (id_ & mask_sequence) >> bit_len_machine,
            "machine-id": id_ & mask_machine}


def baidu_parse(uid, timestamp_bits, worker_bits, sequence_bits):
    """uid-generator's DefaultUidGenerator.parseUID(), with Java's 64-bit shifts."""
    total_bits, sign_bits = 64, 1
    sequence = ((uid << (total_bits - sequence_bits)) & MASK64) >> (total_bits - sequence_bits)
    worker = ((uid << (timestamp_bits + sign_bits)) & MASK64) >> (total_bits - worker_bits)
    delta_seconds = uid >> (worker_bits + sequence_bits)
    return delta_seconds, worker, sequence


def now_ms():
    return int(time.time() * 1000)


def timed_ids(node, path):
    before = now_ms()
    out = node.get_ids(path)
    return before, now_ms(), out


def layout_node(name, worker, layout, unit, epoch):
    """A static-worker node in a given layout."""
    return env.leafd(name, static_props(worker=worker, **{
        "leafd.snowflake.layout": layout, "leafd.snowflake.time.unit.ms": str(unit),
        "leafd.snowflake.epoch": str(epoch)}))


env = Env()

log("Sonyflake layout at 10 ms, worker 40000")
sony = layout_node("sony", 40000, "time:39,sequence:8,worker:16", 10, SONYFLAKE_EPOCH)
ok_time = ok_worker = 0
prev = 0
rounds = 200
for i in range(rounds):
    before, after, ids = timed_ids(sony, "/api/snowflake/get/x?count=%d" % (1 if i % 2 else 3))
    for id_ in ids:
        d = sonyflake_decompose(id_)
        ms = SONYFLAKE_EPOCH + d["time"] * 10
        # a tick [ms, ms+10) that overlaps the request's time (a borrowed tick: one ahead)
        ok_time += before - 10 < ms <= after + 10
        ok_worker += d["machine-id"] == 40000
        check(id_ > prev, "Sonyflake IDs ascend")
        prev = id_
check(ok_time == ok_worker and ok_worker >= rounds * 2,
      "Sonyflake's Decompose reads the right time (within the unit) and machine ID for all "
      "IDs (time %d, machine %d)" % (ok_time, ok_worker))
before, after, big = timed_ids(sony, "/api/snowflake/get/x?count=512")
check(big == sorted(set(big)) and big[0] > prev, "a batch of 512 (two ticks' worth) ascends")
ticks = {sonyflake_decompose(i)["time"] for i in big}
check(len(ticks) == 2, "it spans two ticks of 256 (%d)" % len(ticks))
st, body, _ = sony.get("/api/snowflake/get/x?count=513")
check(st == 400 and "bad_count" in body and "leafd.snowflake.layout" in body,
      "a batch above what two ticks hold: 400 bad_count naming the layout (%d %s)" % (st, body))
check("batches of at most 512 IDs" in sony.log_text(), "the node logs its largest batch")
last_ms = SONYFLAKE_EPOCH + max(ticks) * 10
check(last_ms <= after + 10, "no tick more than one unit ahead of the clock (%d > %d)"
      % (last_ms, after))
st, body, _ = sony.get("/decodeSnowflakeId?snowflakeId=%d" % big[-1])
d = sonyflake_decompose(big[-1])
j = json.loads(body) if st == 200 else {}
check(st == 200 and j.get("workerId") == "40000" and j.get("sequenceId") == str(d["sequence"]) and
      j.get("timestamp", "").startswith(str(SONYFLAKE_EPOCH + d["time"] * 10) + "("),
      "/decodeSnowflakeId follows the layout: %s" % body)
st, body, _ = sony.get("/decodeSnowflakeId?snowflakeId=-1")
check(st == 400 and "bad_snowflake_id" in body, "a negative ID: 400 (%d %s)" % (st, body))
check(sony.stop() == 0, "the Sonyflake node stops cleanly")

log("Baidu uid-generator formula at 1000 ms: time:31,worker:23,sequence:9, worker 5000000")
baidu = layout_node("baidu", 5000000, "time:31,worker:23,sequence:9", 1000, BAIDU_EPOCH)
good = total = 0
for i in range(30):  # 512 IDs a second: about 1300 IDs, 3 s
    before, after, ids = timed_ids(baidu, "/api/snowflake/get/x?count=%d" % (1 + i * 3))
    for uid in ids:
        secs, worker, seq = baidu_parse(uid, 31, 23, 9)
        t = BAIDU_EPOCH // 1000 + secs
        # one second a tick, borrowing at most one tick ahead
        good += (before // 1000 <= t <= after // 1000 + 1) and worker == 5000000
        total += 1
check(good == total and total > 1000, "uid-generator's parseUID reads the right second and worker "
      "of %d/%d IDs" % (good, total))
check(baidu.stop() == 0, "the Baidu node stops cleanly")



log("configuration errors name the key")
for layout, unit, want in (
        ("time:28,worker:22,sequence:13", "1000", "leafd.snowflake.layout: time:28 at 1000 ms per "
                                                  "tick runs out"),
        ("time:41,worker:10", "1", "leafd.snowflake.layout: field sequence is missing"),
        ("time:41,worker:10,sequence:12,worker:3", "1", "leafd.snowflake.layout:"),
        ("time:41,rack:10,sequence:12", "1", "leafd.snowflake.layout: unknown field \"rack\""),
        ("time:41,worker:12,sequence:12", "1", "leafd.snowflake.layout: widths sum to 65 bits")):
    rc, err = env.check_config(static_props(**{"leafd.snowflake.layout": layout,
                                          "leafd.snowflake.time.unit.ms": unit}))
    check(rc == 1 and "check.properties:5: " + want in err,
          "%s: --check-config exits 1 naming the key: %r" % (layout, err))
# Any layout that lasts a year is taken: uid-generator's default (28/22/13) from an epoch of
# 2026, and its README's 29/21/13 (docs/id-shapes.md, "The horizon").
for layout in ("time:28,worker:22,sequence:13", "time:29,worker:21,sequence:13"):
    rc, err = env.check_config(static_props(**{"leafd.snowflake.layout": layout,
                                               "leafd.snowflake.time.unit.ms": "1000",
                                               "leafd.snowflake.epoch": "1767225600000"}))
    check(rc == 0, "%s at 1000 ms from 2026-01-01: --check-config takes it: %r" % (layout, err))
rc, err = env.check_config(static_props(worker=16, **{"leafd.snowflake.layout": "time:41,worker:4,sequence:8"}))
check(rc == 1 and "leafd.snowflake.worker.id: 16 does not fit" in err, "static worker ID too wide: %r" % err)

log("forever mode: a worker ID above the layout's largest stops start-up")
zk = env.zookeeper()
narrow = {"leafd.snowflake.layout": "time:41,worker:1,sequence:12"}
nodes = [env.leafd("w%d" % i, zk_props(zk.address(), name="narrow", **narrow)) for i in (0, 1)]
third = env.leafd("w2", zk_props(zk.address(), name="narrow", **narrow), wait_ready=False)
third.stop()
rc, text = start_expect_exit(third)
check(rc == 1, "the third node (worker ID 2, layout worker:1) exits 1 (got %s)" % rc)
check("worker ID 2" in text and "above 1" in text, "clear message:\n" + text[-600:])
for n in nodes:
    ids = n.get_ids("/api/snowflake/get/x?count=3")
    check(all((i >> 12) & 1 in (0, 1) for i in ids), "%s issues IDs" % n.name)
    check(n.stop() == 0, "%s stops cleanly" % n.name)
env.finish()
