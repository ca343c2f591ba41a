"""Snowflake IDs over HTTP (the HTTP API and the snowflake rules), static worker mode.

- 20,000 single-ID requests on ONE keep-alive connection (pipelined batches on
  a raw socket), plus a sequential http.client loop: unique, strictly
  ascending, each decodes to the configured worker and a timestamp near now.
- ?count=N for N in 1, 2, 1000, 10000: N lines, ascending, unique across batches.
- /decodeSnowflakeId answers exactly Leaf's JSON shape with the configured epoch,
  and a custom leafd.snowflake.epoch is honoured.
"""
import http.client as httpclient
import json
import re
import time

from leafdtest import (Env, HttpStream, check, get_request, http, log, static_props)

WORKER = 37
DEFAULT_EPOCH = 1288834974657
CUSTOM_EPOCH = 1700000000000  # 2023-11-14


def layout(i, epoch):
    """(timestamp ms since 1970, worker, sequence) of a snowflake ID."""
    return ((i >> 22) + epoch, (i >> 12) & 0x3FF, i & 0xFFF)


def pipelined_ids(port, total, batch):
    """`total` single-ID requests on one connection, `batch` per send."""
    s = HttpStream(port, timeout=20)
    ids, bad = [], []
    try:
        for start in range(0, total, batch):
            n = min(batch, total - start)
            s.send(b"".join(get_request("/api/snowflake/get/it.ids-%d" % ((start + k) % 7))
                            for k in range(n)))
            rs = s.read_responses(n)
            if len(rs) != n:
                bad.append("batch at %d: %d of %d responses" % (start, len(rs), n))
                break
            for st, hdr, body in rs:
                if st != 200 or not hdr.get("content-type", "").startswith("text/plain"):
                    bad.append("%d %s %r" % (st, hdr.get("content-type"), body[:100]))
                    continue
                ids.append(int(body))
        check(not s.closed_by_server(0.2), "keep-alive connection stayed open after %d requests" % total)
    finally:
        s.close()
    return ids, bad


def sequential_ids(port, total):
    """`total` requests one after the other through http.client, one connection."""
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=10)
    ids, bad = [], []
    try:
        for k in range(total):
            conn.request("GET", "/api/snowflake/get/seq%d" % (k % 3))
            r = conn.getresponse()
            body = r.read()
            if r.status != 200:
                bad.append("%d %r" % (r.status, body[:100]))
            else:
                ids.append(int(body))
            if r.will_close:
                bad.append("server asked to close after request %d" % k)
                break
    finally:
        conn.close()
    return ids, bad


def strictly_ascending(xs):
    return all(a < b for a, b in zip(xs, xs[1:]))


def check_ids(name, ids, epoch, t0_ms, t1_ms):
    check(len(ids) == len(set(ids)), "%s: all %d IDs unique" % (name, len(ids)))
    check(strictly_ascending(ids), "%s: IDs strictly ascending" % name)
    check(all(i > 0 for i in ids), "%s: every ID positive" % name)
    workers = {layout(i, epoch)[1] for i in ids}
    check(workers == {WORKER}, "%s: worker bits are %d (got %s)" % (name, WORKER, sorted(workers)[:5]))
    ts = [layout(i, epoch)[0] for i in ids]
    # Sequence exhaustion may borrow a few ms ahead; allow a little slack.
    check(min(ts) >= t0_ms - 5 and max(ts) <= t1_ms + 50,
          "%s: timestamps within the run [%d, %d], got [%d, %d]" % (name, t0_ms, t1_ms, min(ts), max(ts)))


DECODE_RE = re.compile(r'^\{"timestamp":"(\d+)\((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\)",'
                       r'"workerId":"(\d+)","sequenceId":"(\d+)"\}$')


def decode(port, i):
    st, body, hdr = http(port, "/decodeSnowflakeId?snowflakeId=%d" % i)
    return st, body, hdr


def check_decode(port, i, epoch, name):
    """Decodes i through the server and compares with the layout; returns True if exact."""
    st, body, hdr = decode(port, i)
    ok = check(st == 200, "%s: decode %d -> 200 (got %d %s)" % (name, i, st, body))
    ok &= check(hdr.get("Content-Type", "").startswith("application/json"),
                "%s: decode Content-Type application/json (got %s)" % (name, hdr.get("Content-Type")))
    m = DECODE_RE.match(body)
    ok &= check(m is not None, "%s: decode body has Leaf's exact shape: %s" % (name, body))
    if not m:
        return False
    ts, worker, seq = layout(i, epoch)
    ok &= check(int(m.group(1)) == ts, "%s: decoded timestamp %s == %d" % (name, m.group(1), ts))
    local = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts // 1000)) + ".%03d" % (ts % 1000)
    ok &= check(m.group(2) == local, "%s: decoded local time %s == %s" % (name, m.group(2), local))
    ok &= check(int(m.group(3)) == worker, "%s: decoded workerId %s == %d" % (name, m.group(3), worker))
    ok &= check(int(m.group(4)) == seq, "%s: decoded sequenceId %s == %d" % (name, m.group(4), seq))
    # Every value is a JSON string, exactly the three keys.
    obj = json.loads(body)
    ok &= check(list(obj) == ["timestamp", "workerId", "sequenceId"] and
                all(isinstance(v, str) for v in obj.values()),
                "%s: decode JSON has three string values in Leaf's order" % name)
    return ok


def main():
    with Env() as env:
        node = env.leafd("ids", static_props(WORKER))
        port = node.port

        # 1. 20,000 single IDs, pipelined in batches of 100 on one connection.
        t0 = int(time.time() * 1000)
        start = time.monotonic()
        ids, bad = pipelined_ids(port, 20000, 100)
        t1 = int(time.time() * 1000)
        log("20000 pipelined single-ID requests in %.2f s" % (time.monotonic() - start))
        check(not bad, "pipelined: every answer 200 text/plain: %s" % bad[:3])
        check(len(ids) == 20000, "pipelined: 20000 IDs (got %d)" % len(ids))
        check_ids("pipelined", ids, DEFAULT_EPOCH, t0, t1)

        # 2. A plain sequential keep-alive loop.
        t2 = int(time.time() * 1000)
        seq_ids, bad = sequential_ids(port, 2000)
        t3 = int(time.time() * 1000)
        check(not bad, "sequential: every answer 200: %s" % bad[:3])
        check(len(seq_ids) == 2000, "sequential: 2000 IDs (got %d)" % len(seq_ids))
        check_ids("sequential", seq_ids, DEFAULT_EPOCH, t2, t3)
        check(ids and seq_ids and seq_ids[0] > ids[-1], "sequential IDs above the pipelined ones")

        # 3. Decode a sample (first, last, and spread) exactly.
        sample = ids[:3] + ids[::2500] + ids[-3:] + seq_ids[::500]
        good = sum(1 for i in sample if check_decode(port, i, DEFAULT_EPOCH, "decode"))
        check(good == len(sample), "decode: %d of %d sampled IDs exact" % (good, len(sample)))

        # 4. Batches: N lines, ascending, unique across batches.
        all_batch = []
        last = seq_ids[-1] if seq_ids else 0
        for n in (1, 2, 1000, 10000, 2, 1):
            st, body, hdr = http(port, "/api/snowflake/get/batch?count=%d" % n)
            if not check(st == 200, "count=%d -> 200 (got %d %s)" % (n, st, body[:200])):
                continue
            check(hdr.get("Content-Type", "").startswith("text/plain"),
                  "count=%d: text/plain (got %s)" % (n, hdr.get("Content-Type")))
            lines = body.split("\n")
            check(len(lines) == n, "count=%d: %d lines (got %d)" % (n, n, len(lines)))
            check(all(re.fullmatch(r"[1-9]\d*", x) for x in lines),
                  "count=%d: every line a positive decimal" % n)
            got = [int(x) for x in lines if x.isdigit()]
            check(strictly_ascending(got), "count=%d: ascending" % n)
            check(got and got[0] > last, "count=%d: above every earlier ID" % n)
            if got:
                last = got[-1]
            all_batch += got
        check(len(all_batch) == len(set(all_batch)) == 11006,
              "batches: 11006 IDs unique across batches (got %d, %d unique)"
              % (len(all_batch), len(set(all_batch))))
        check({layout(i, DEFAULT_EPOCH)[1] for i in all_batch} == {WORKER}, "batches: worker bits")
        if all_batch:
            check_decode(port, all_batch[-1], DEFAULT_EPOCH, "decode batch")

        # 5. A custom epoch is used by both the generator and decode.
        node2 = env.leafd("epoch", static_props(WORKER, **{"leafd.snowflake.epoch": str(CUSTOM_EPOCH)}))
        t4 = int(time.time() * 1000)
        st, body, _ = http(node2.port, "/api/snowflake/get/ep?count=5")
        t5 = int(time.time() * 1000)
        check(st == 200, "custom epoch: IDs served (got %d %s)" % (st, body))
        if st == 200:
            eids = [int(x) for x in body.split("\n")]
            check_ids("custom epoch", eids, CUSTOM_EPOCH, t4, t5)
            for i in (eids[0], eids[-1]):
                check_decode(node2.port, i, CUSTOM_EPOCH, "custom epoch decode")
            # The same number decoded by the default-epoch node differs by the epochs.
            st, body, _ = decode(port, eids[0])
            m = DECODE_RE.match(body)
            check(m is not None and int(m.group(1)) == layout(eids[0], DEFAULT_EPOCH)[0],
                  "default-epoch node decodes with its own epoch: %s" % body)
        # A hand-made ID decodes exactly: ts=1 ms after epoch, worker 5, seq 7.
        hand = (1 << 22) | (5 << 12) | 7
        check_decode(node2.port, hand, CUSTOM_EPOCH, "hand-made ID")
        check_decode(node2.port, 0, CUSTOM_EPOCH, "ID 0")
        env.finish()


if __name__ == "__main__":
    main()
