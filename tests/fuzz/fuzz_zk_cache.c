/*
 * libFuzzer harness for the worker-ID cache file reader and writer
 * (zk/zk_record.c, pure code, linked alone as leaf_zk_core):
 * {data.dir}/{leaf.name}/{port}/workerID.properties, which Leaf, an
 * operator's editor or a half-written disk block may have produced.
 *
 * Checked, besides crashes and sanitizer reports: accepted values are -1
 * (absent) or non-negative; a failed read leaves nothing half-set that
 * looks valid; the writer never writes past its buffer; and the round
 * trips hold: parse -> format -> parse, and values built from the input ->
 * format -> parse, give the same workerID and timestamp.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zk_record.h"

static void round_trip(const struct zk_cache_data *c, size_t small_cap) {
    char buf[ZK_CACHE_TEXT_MAX];
    struct zk_cache_data back;
    size_t n = zk_record_format_cache(c, buf, sizeof(buf));
    if (n == 0 || strlen(buf) != n) {
        __builtin_trap();
    }
    if (zk_record_parse_cache(buf, n, &back) != LEAF_OK || back.worker_id != c->worker_id ||
        back.timestamp != c->timestamp ||
        memcmp(back.identity, c->identity, sizeof(c->identity)) != 0 ||
        back.session_id != c->session_id || back.generation != c->generation) {
        __builtin_trap();
    }
    char *tiny = malloc(small_cap);
    size_t m = zk_record_format_cache(c, tiny, small_cap);
    if (m != 0 && (m != n || memcmp(tiny, buf, n + 1) != 0)) {
        __builtin_trap();
    }
    free(tiny);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct zk_cache_data c;
    size_t cap = 1 + (size > 0 ? data[0] : 0) % 200;

    /* 1. Arbitrary bytes as the cache file. */
    leaf_status_t rc = zk_record_parse_cache((const char *)data, size, &c);
    if (rc == LEAF_OK) {
        if (c.worker_id < -1 || c.timestamp < -1) {
            __builtin_trap();
        }
        if (c.worker_id >= 0 && c.timestamp >= 0) {
            round_trip(&c, cap);
        }
    }

    /* 2. Values built from the input (the writer is only given non-negative ones). */
    if (size >= 16) {
        uint64_t w, t;
        memcpy(&w, data, sizeof(w));
        memcpy(&t, data + 8, sizeof(t));
        memset(&c, 0, sizeof(c));
        c.worker_id = (int64_t)(w >> 1);
        c.timestamp = (int64_t)(t >> 1);
        round_trip(&c, cap);
    }
    return 0;
}
