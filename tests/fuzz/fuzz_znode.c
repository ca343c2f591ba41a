/*
 * libFuzzer harness for the znode JSON reader and writer (zk/zk_record.c,
 * pure code, linked alone as leaf_zk_core): the data of leaf_forever and
 * leaf_temporary nodes, which any ZooKeeper client (or an older Leaf) may
 * have written.
 *
 * Checked, besides crashes and sanitizer reports: whatever the reader
 * accepts is in range (port 0..65535, timestamp -1 or a non-negative
 * integer, ip a terminated string); the writer never writes past its
 * buffer; and both round trips hold: parse -> format -> parse gives the
 * same values, and values built from the input -> format -> parse too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zk_record.h"

static int same(const struct zk_node_data *a, const struct zk_node_data *b) {
    return strcmp(a->ip, b->ip) == 0 && a->port == b->port && a->timestamp == b->timestamp;
}

static void check_range(const struct zk_node_data *d) {
    if (memchr(d->ip, '\0', sizeof(d->ip)) == NULL || d->port < 0 || d->port > 65535 ||
        d->timestamp < -1) {
        __builtin_trap();
    }
}

/* format -> parse must give d back; the writer must respect any capacity. */
static void round_trip(const struct zk_node_data *d, size_t small_cap) {
    char buf[1024];
    struct zk_node_data back;
    size_t n = zk_record_format_node(d, buf, sizeof(buf));
    if (n == 0 || n >= sizeof(buf) || strlen(buf) != n) {
        __builtin_trap(); /* a 63-byte ip always fits in 1 KiB, escaped */
    }
    if (zk_record_parse_node(buf, n, &back) != LEAF_OK || !same(d, &back)) {
        __builtin_trap();
    }
    char *tiny = malloc(small_cap);
    size_t m = zk_record_format_node(d, tiny, small_cap);
    if (m != 0 && (m != n || memcmp(tiny, buf, n + 1) != 0)) {
        __builtin_trap(); /* a short buffer gives all or nothing */
    }
    free(tiny);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct zk_node_data d;
    size_t cap = 1 + (size > 0 ? data[0] : 0) % 96;

    /* 1. Arbitrary bytes as znode data. */
    if (zk_record_parse_node((const char *)data, size, &d) == LEAF_OK) {
        check_range(&d);
        round_trip(&d, cap);
    }

    /* 2. Values built from the input: 2 bytes port, 8 bytes timestamp, the rest ip. */
    if (size >= 10) {
        uint64_t ts;
        memcpy(&ts, data + 2, sizeof(ts));
        memset(&d, 0, sizeof(d));
        d.port = (int)(data[0] << 8 | data[1]);
        d.timestamp = (ts & 1) ? -1 : (int64_t)((ts >> 1) % 9000000000000000ULL);
        size_t iplen = size - 10 < sizeof(d.ip) - 1 ? size - 10 : sizeof(d.ip) - 1;
        memcpy(d.ip, data + 10, iplen);
        d.ip[strnlen(d.ip, iplen)] = '\0';
        round_trip(&d, cap);
    }
    return 0;
}
