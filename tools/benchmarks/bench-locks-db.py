#!/usr/bin/env python3
"""Lock contention on the segment and sequence ID paths (a LEAFD_LOCK_STATS build).

Starts a throwaway MariaDB and ZooKeeper (tests/lib/leafdtest.py), leafd with
LOOPS event loops and segment and sequences on, sends REQUESTS pipelined
`INCR segment:bench` and `INCR sequence:bench` (redis-benchmark, 50
connections), stops leafd and prints its "lock stats" log lines.

usage: tools/benchmarks/bench-locks-db.py LEAFD [LOOPS] [REQUESTS] [PIPELINE]
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import leafdtest  # noqa: E402


def main():
    binary = os.path.abspath(sys.argv[1])
    loops = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
    pipe = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    leafdtest.LEAFD_BIN = binary
    env = leafdtest.Env()
    try:
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) "
               "VALUES ('bench', 1, 100000, '')")
        zk = env.zookeeper()
        props = {"leaf.name": "bench", "leaf.snowflake.enable": "true",
                 "leafd.threads": str(loops), "leafd.log.level": "info",
                 "leaf.segment.enable": "true", "leaf.jdbc.url": db.jdbc_url(),
                 "leaf.jdbc.username": "leaf", "leaf.jdbc.password": "leafpw",
                 "leafd.snowflake.advertise.ip": "127.0.0.1",
                 "leaf.snowflake.zk.address": zk.address(),
                 "leafd.sequence.enable": "true", "leafd.sequence.autocreate": "true"}
        node = env.leafd("bench", props, resp=True)
        for key in ("segment:bench", "sequence:bench"):
            out = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(node.resp_port),
                                  "-c", "50", "-n", str(n), "-P", str(pipe), "-q", "INCR", key],
                                 capture_output=True, text=True, timeout=600).stdout
            print(key, out.replace("\r", "\n").strip().splitlines()[-1])
        node.stop()
        for line in node.log_text().splitlines():
            if "lock stats" in line:
                print(line)
    finally:
        env.close()


if __name__ == "__main__":
    main()
