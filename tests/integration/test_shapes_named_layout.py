"""Named snowflake layouts (docs/id-shapes.md, "Named layouts"):

- `twitter` with datacenter 3 and worker 9 (static): every ID's bits read back
  by Twitter's formula as datacenter 3, worker 9, and /decodeSnowflakeId names
  the datacenter;
- `twitter` in forever mode: the ZooKeeper worker ID fits the 5-bit worker
  field and the datacenter field holds the configured datacenter;
- `js-safe`: IDs stay below 2^53;
- configuration errors name leafd.snowflake.datacenter.id."""
import json

from leafdtest import Env, check, log, static_props
from zkhelpers import zk_props

EPOCH = 1288834974657


def twitter_parts(id_):
    """Twitter's snowflake: 41 bits of ms | 5 datacenter | 5 worker | 12 sequence."""
    return {"ms": (id_ >> 22) + EPOCH, "datacenter": (id_ >> 17) & 31,
            "worker": (id_ >> 12) & 31, "sequence": id_ & 4095}


env = Env()

log("twitter, datacenter 3, worker 9")
tw = env.leafd("tw", static_props(worker=9, **{"leafd.snowflake.layout": "twitter",
                                               "leafd.snowflake.datacenter.id": "3"}))
ids = []
for i in range(50):
    ids += tw.get_ids("/api/snowflake/get/x?count=%d" % (1 + i))
parts = [twitter_parts(i) for i in ids]
check(all(p["datacenter"] == 3 and p["worker"] == 9 for p in parts),
      "all %d IDs read datacenter 3, worker 9 by Twitter's formula" % len(ids))
check(ids == sorted(set(ids)), "they ascend")
st, body, _ = tw.get("/decodeSnowflakeId?snowflakeId=%d" % ids[-1])
j = json.loads(body) if st == 200 else {}
p = parts[-1]
check(st == 200 and j.get("datacenterId") == "3" and j.get("workerId") == "9" and
      j.get("sequenceId") == str(p["sequence"]) and
      j.get("timestamp", "").startswith(str(p["ms"]) + "("),
      "/decodeSnowflakeId names every field: %s" % body)
check("time:41,datacenter:5,worker:5,sequence:12" in tw.log_text(),
      "the node logs the layout's fields")
check(tw.stop() == 0, "the twitter node stops cleanly")

log("js-safe: below 2^53")
js = env.leafd("js", static_props(worker=15, **{"leafd.snowflake.layout": "js-safe"}))
ids = []
for i in range(20):
    ids += js.get_ids("/api/snowflake/get/x?count=%d" % (1 + 10 * i))
check(all(0 < i < 2 ** 53 for i in ids) and ids == sorted(set(ids)),
      "all %d js-safe IDs are below 2^53 and ascend (largest %d)" % (len(ids), max(ids)))
check(js.stop() == 0, "the js-safe node stops cleanly")

log("twitter in forever mode: the worker ID fits the worker field only")
zk = env.zookeeper()
nodes = [env.leafd("f%d" % k, zk_props(zk.address(), name="tw", **{
    "leafd.snowflake.layout": "twitter", "leafd.snowflake.datacenter.id": "17"})) for k in (0, 1)]
seen = set()
for n in nodes:
    got = [twitter_parts(i) for i in n.get_ids("/api/snowflake/get/x?count=100")]
    workers = {p["worker"] for p in got}
    check(all(p["datacenter"] == 17 for p in got) and len(workers) == 1,
          "%s: datacenter 17, one worker ID %s" % (n.name, workers))
    seen |= workers
check(len(seen) == 2, "two nodes, two worker IDs %s" % seen)
for n in nodes:
    check(n.stop() == 0, "%s stops cleanly" % n.name)



log("configuration errors name the key")
for layout, dc, want in (("twitter", "32", "holds 0..31"),
                         ("time:41,worker:10,sequence:12", "1", "needs a layout with a datacenter")):
    rc, err = env.check_config(static_props(**{"leafd.snowflake.layout": layout,
                                          "leafd.snowflake.datacenter.id": dc}))
    check(rc == 1 and "leafd.snowflake.datacenter.id: " in err and want in err,
          "%s, datacenter %s: --check-config exits 1 naming the key: %r" % (layout, dc, err))
rc, err = env.check_config(static_props(worker=32, **{"leafd.snowflake.layout": "twitter"}))
check(rc == 1 and "leafd.snowflake.worker.id: 32 does not fit" in err,
      "twitter: worker 32 does not fit the 5-bit worker field: %r" % err)
env.finish()
