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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zk_record.h"

static void round_trip(const struct zk_cache_data *c, const struct zk_cache_owner *o,
                       size_t small_cap) {
    char buf[ZK_CACHE_TEXT_MAX];
    struct zk_cache_data back;
    struct zk_cache_owner oback;
    size_t n = zk_record_format_cache_owned(c, o, buf, sizeof(buf));
    if (n == 0) {
        return; /* an owner value the writer refuses (bad character): nothing written */
    }
    if (strlen(buf) != n) {
        __builtin_trap();
    }
    if (zk_record_parse_cache_owned(buf, n, &back, &oback) != LEAF_OK ||
        back.worker_id != c->worker_id || back.timestamp != c->timestamp ||
        strcmp(oback.identity, o->identity) != 0 || strcmp(oback.cluster, o->cluster) != 0 ||
        oback.session_id != o->session_id || oback.generation != o->generation) {
        __builtin_trap();
    }
    char *tiny = malloc(small_cap);
    size_t m = zk_record_format_cache_owned(c, o, tiny, small_cap);
    if (m != 0 && (m != n || memcmp(tiny, buf, n + 1) != 0)) {
        __builtin_trap();
    }
    free(tiny);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct zk_cache_data c;
    size_t cap = 1 + (size > 0 ? data[0] : 0) % 200;

    /* 1. Arbitrary bytes as the cache file. */
    struct zk_cache_owner o;
    leaf_status_t rc = zk_record_parse_cache_owned((const char *)data, size, &c, &o);
    if (rc == LEAF_OK) {
        if (c.worker_id < -1 || c.timestamp < -1) {
            __builtin_trap();
        }
        if (c.worker_id >= 0 && c.timestamp >= 0) {
            round_trip(&c, &o, cap);
        }
    }

    /* 2. Values built from the input (the writer is only given non-negative ones). */
    if (size >= 16) {
        uint64_t w, t;
        memcpy(&w, data, sizeof(w));
        memcpy(&t, data + 8, sizeof(t));
        memset(&c, 0, sizeof(c));
        memset(&o, 0, sizeof(o));
        c.worker_id = (int64_t)(w >> 1);
        c.timestamp = (int64_t)(t >> 1);
        o.session_id = (int64_t)(w >> 2);
        o.generation = (int64_t)(t >> 3);
        snprintf(o.identity, sizeof(o.identity), "127.0.0.%u:%u", (unsigned)(w & 0xff),
                 (unsigned)(t & 0xffff));
        snprintf(o.cluster, sizeof(o.cluster), "c%u", (unsigned)(w >> 48));
        round_trip(&c, &o, cap);
    }
    return 0;
}
