#!/bin/bash
# tools/benchmarks/bench-locks.sh LEAFD [LOOPS] [REQUESTS] [PIPELINE] [EXTRA_REDIS_BENCHMARK_ARGS...]
# Contention on the snowflake generator's lock: LEAFD must be built with
# -DLEAFD_LOCK_STATS=ON (add -DCMAKE_C_FLAGS=-DLEAF_SNOWFLAKE_LOCKED_ONLY for the locked-only
# path). Starts it in static worker mode with LOOPS event loops, sends REQUESTS pipelined
# `INCR snowflake:bench` (redis-benchmark, 50 connections), stops it and prints its
# "lock stats" log line: acquisitions, contended acquisitions, ns waited.
# docs/BENCHMARKS.md ("Scaling with cores") has the figures.
set -e
BIN=$1; LOOPS=${2:-2}; N=${3:-2000000}; P=${4:-16}; shift 4 2>/dev/null || shift $#
T=$(mktemp -d)
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
HP=$(port); RP=$(port)
printf 'leaf.name = bench\nleaf.snowflake.enable = true\nleafd.snowflake.worker.id = 3\nleafd.threads = %s\nleafd.listen = 127.0.0.1:%s\nleafd.resp.listen = 127.0.0.1:%s\nleafd.data.dir = %s\n' \
  "$LOOPS" "$HP" "$RP" "$T" > "$T/leafd.properties"
"$BIN" -c "$T/leafd.properties" > "$T/leafd.log" 2>&1 &
PID=$!
for i in $(seq 1 200); do curl -sf "http://127.0.0.1:$HP/ready" >/dev/null 2>&1 && break; sleep 0.05; done
redis-benchmark -h 127.0.0.1 -p "$RP" -c 50 -n "$N" -P "$P" -q "$@" INCR snowflake:bench | tr '\r' '\n' | tail -n 2
kill "$PID"; wait "$PID" || true
grep "lock stats" "$T/leafd.log"
rm -rf "$T"
