"""The Python binding of libleafd-client (src/client/python/leafd): `import leafd`, through two
nodes, one killed with -9 mid-run; 4 threads of next() and next_many(): no failed call, no ID
repeated, segment IDs ascending per thread; snowflake IDs unique; the errors as leafd.Error with
the C library's codes. The same checks as test_client_failover, from Python."""
import signal
import threading
import time

from clientbinding import import_leafd

leafd = import_leafd()
from leafdtest import Env, check, log, seg_props, static_props  # noqa: E402

PER_THREAD = 100000


class Taker(threading.Thread):
    def __init__(self, client, key, i):
        super().__init__(daemon=True)
        self.client, self.key, self.i = client, key, i
        self.ids, self.errors = [], []

    def run(self):
        while len(self.ids) < PER_THREAD:
            try:
                if self.i % 2:
                    self.ids += self.client.next_many(self.key, 100)
                else:
                    self.ids.append(self.client.next(self.key))
            except leafd.Error as e:
                self.errors.append((e.code, str(e)))
                if len(self.errors) > 100:
                    return
                time.sleep(0.01)


def take(client, key, threads=4):
    ts = [Taker(client, key, i) for i in range(threads)]
    for t in ts:
        t.start()
    return ts


def main():
    with Env() as env:
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('py', 1, 20000)")
        nodes = [env.leafd("a", static_props(1, **seg_props(db))),
                 env.leafd("b", static_props(2, **seg_props(db)))]
        endpoints = ",".join("http://127.0.0.1:%d" % n.port for n in nodes)
        c = leafd.Client(endpoints, options="prefetch.min=2000;prefetch.max=20000;wait.ms=30000;"
                                            "timeout.ms=10000;"
                                            "batch.max=5000;retry.min.ms=50;log=0")
        ts = take(c, "segment:py")
        while sum(len(t.ids) for t in ts) < 4 * PER_THREAD // 3:
            time.sleep(0.01)
        nodes[0].stop(signal.SIGKILL)
        done = sum(len(t.ids) for t in ts)
        log("node a killed with -9 after %d IDs" % done)
        for t in ts:
            t.join(120)
        check(done < 4 * PER_THREAD, "the kill came mid-run")
        every = [i for t in ts for i in t.ids]
        check(all(not t.errors for t in ts), "0 failed calls: %r" % [t.errors[:2] for t in ts])
        check(len(every) == 4 * PER_THREAD, "%d IDs taken" % len(every))
        check(len(set(every)) == len(every), "no ID repeated")
        check(all(all(a < b for a, b in zip(t.ids, t.ids[1:])) for t in ts),
              "segment IDs ascending per thread")
        check(all(isinstance(i, int) and i > 0 for i in every[:10]), "IDs are Python ints")
        # Snowflake IDs: 63-bit, unique.
        ts = take(c, "snowflake:py")
        for t in ts:
            t.join(120)
        sf = [i for t in ts for i in t.ids]
        check(len(sf) == 4 * PER_THREAD and len(set(sf)) == len(sf) and min(sf) > 2 ** 53,
              "snowflake IDs: %d, unique, above 2^53 and exact" % len(sf))
        # The errors: a bad key, an unknown tag, a closed handle, a bad endpoint.
        for key, code in (("nokind:x", leafd.EINVAL), ("segment:nosuchtag", leafd.ENOTFOUND)):
            try:
                c.next(key)
                check(False, "%s refused" % key)
            except leafd.Error as e:
                check(e.code == code, "%s: code %d, %s" % (key, e.code, e))
        c.close()
        try:
            c.next("segment:py")
            check(False, "a closed handle refuses")
        except leafd.Error as e:
            check(e.code == leafd.EINVAL, "a closed handle: EINVAL")
        try:
            leafd.Client("ftp://x")
            check(False, "a bad endpoint refused")
        except leafd.Error as e:
            check("ftp://x" in str(e), "open's reason: %s" % e)
        with leafd.Client(endpoints.split(",")[1], options="log=0;wait.ms=30000") as c2:
            check(len(c2.next_many("segment:py", 1000)) == 1000, "a with-block handle")
    env.finish()


if __name__ == "__main__":
    main()
