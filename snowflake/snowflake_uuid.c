#include "snowflake_uuid.h"

#include <string.h>

/* The low n bits set (n 0..63). */
static uint64_t low_bits(int n) {
    return n <= 0 ? 0 : (UINT64_C(1) << n) - 1;
}

void snowflake_uuid_shape(const struct snowflake_layout *l, struct snowflake_uuid_shape *s) {
    int seq = l->bits[SNOWFLAKE_SEQUENCE];
    s->counter_bits = seq > SNOWFLAKE_UUID_RAND_A ? seq : SNOWFLAKE_UUID_RAND_A;
    s->worker_bits = l->bits[SNOWFLAKE_WORKER];
    s->node_bits = s->worker_bits + l->bits[SNOWFLAKE_DATACENTER];
    /* A layout sums to at most 63 bits with time at least 1, so this is never negative. */
    s->random_bits =
        SNOWFLAKE_UUID_RAND_B - (s->counter_bits - SNOWFLAKE_UUID_RAND_A) - s->node_bits;
}

/* RFC 9562's fields into 16 bytes (big-endian): unix_ms < 2^48, rand_a < 2^12, rand_b < 2^62. */
static void uuid_pack(uint8_t out[16], int64_t unix_ms, unsigned rand_a, uint64_t rand_b) {
    uint64_t hi = ((uint64_t)unix_ms << 16) | (UINT64_C(7) << 12) | (rand_a & 0xFFFu);
    uint64_t lo = (UINT64_C(2) << 62) | (rand_b & low_bits(SNOWFLAKE_UUID_RAND_B));
    for (int i = 0; i < 8; i++) {
        out[i] = (uint8_t)(hi >> (56 - 8 * i));
        out[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
    }
}

/* The UUID of a part set, each part within its width (else LEAF_ERANGE). */
static leaf_status_t uuid_make(const struct snowflake_uuid_shape *s,
                               const struct snowflake_uuid_parts *p, uint8_t out[16]) {
    int low = s->counter_bits - SNOWFLAKE_UUID_RAND_A; /* counter bits in rand_b */
    if (p->unix_ms < 0 || p->unix_ms > SNOWFLAKE_UUID_MAX_MS || p->counter < 0 ||
        (uint64_t)p->counter > low_bits(s->counter_bits) || p->worker_id < 0 ||
        (uint64_t)p->worker_id > low_bits(s->worker_bits) || p->datacenter_id < 0 ||
        (uint64_t)p->datacenter_id > low_bits(s->node_bits - s->worker_bits)) {
        return LEAF_ERANGE;
    }
    uint64_t node = ((uint64_t)p->datacenter_id << s->worker_bits) | (uint64_t)p->worker_id;
    uint64_t rand_b = ((uint64_t)p->counter & low_bits(low)) << (SNOWFLAKE_UUID_RAND_B - low) |
                      node << s->random_bits | (p->random & low_bits(s->random_bits));
    uuid_pack(out, p->unix_ms, (unsigned)((uint64_t)p->counter >> low), rand_b);
    return LEAF_OK;
}

leaf_status_t snowflake_uuid_from_id(const struct snowflake_layout *l, int64_t epoch, int64_t id,
                                     uint64_t random, uint8_t out[16]) {
    struct snowflake_parts sp;
    struct snowflake_uuid_shape s;
    if (snowflake_layout_decode(l, id, epoch, &sp) != LEAF_OK) {
        return LEAF_ERANGE;
    }
    snowflake_uuid_shape(l, &s);
    struct snowflake_uuid_parts p = {sp.timestamp_ms, sp.sequence, sp.worker_id, sp.datacenter_id,
                                     random};
    return uuid_make(&s, &p, out);
}

void snowflake_uuid_format(const uint8_t u[16], char *out) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            out[o++] = '-';
        }
        out[o++] = hex[u[i] >> 4];
        out[o++] = hex[u[i] & 0xF];
    }
    out[o] = '\0';
}

static int hex_value(char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

leaf_status_t snowflake_uuid_parse(const char *text, size_t len, uint8_t out[16]) {
    if (len != SNOWFLAKE_UUID_TEXT) {
        return LEAF_EINVAL;
    }
    uint8_t u[16];
    int nibble = 0;
    for (size_t i = 0; i < len; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-') {
                return LEAF_EINVAL;
            }
            continue;
        }
        int v = hex_value(text[i]);
        if (v < 0) {
            return LEAF_EINVAL;
        }
        u[nibble / 2] = (uint8_t)(nibble % 2 ? (u[nibble / 2] << 4) | v : v);
        nibble++;
    }
    memcpy(out, u, sizeof(u));
    return LEAF_OK;
}

leaf_status_t snowflake_uuid_decode(const struct snowflake_uuid_shape *s, const uint8_t u[16],
                                    struct snowflake_uuid_parts *out) {
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
        hi = hi << 8 | u[i];
        lo = lo << 8 | u[8 + i];
    }
    if (((hi >> 12) & 0xF) != 7 || (lo >> 62) != 2) {
        return LEAF_EINVAL;
    }
    int low = s->counter_bits - SNOWFLAKE_UUID_RAND_A;
    uint64_t rand_b = lo & low_bits(SNOWFLAKE_UUID_RAND_B);
    uint64_t node = (rand_b >> s->random_bits) & low_bits(s->node_bits);
    out->unix_ms = (int64_t)(hi >> 16);
    out->counter = (int64_t)(((hi & 0xFFF) << low) |
                             ((rand_b >> (SNOWFLAKE_UUID_RAND_B - low)) & low_bits(low)));
    out->worker_id = (int64_t)(node & low_bits(s->worker_bits));
    out->datacenter_id = (int64_t)(node >> s->worker_bits);
    out->random = rand_b & low_bits(s->random_bits);
    return LEAF_OK;
}

/* A UUID's time is the start of its ID's tick: at most this far past it for a borrowed tick. */
#define UUID_FOREIGN_SLACK_MS 1000

const char *snowflake_uuid_foreign(const struct snowflake_layout *l,
                                   const struct snowflake_uuid_parts *p, int64_t epoch,
                                   int64_t now_ms, int64_t max_lead_ms) {
    if (p->unix_ms < epoch) {
        return "its time is before leafd.snowflake.epoch";
    }
    if (p->unix_ms > now_ms + max_lead_ms + UUID_FOREIGN_SLACK_MS) {
        return "its time is ahead of this node's clock by more than leafd.snowflake.max.lead.ms";
    }
    if (l->unit_ms > 1 && (p->unix_ms - epoch) % l->unit_ms != 0) {
        return "its time is not the start of a tick of leafd.snowflake.time.unit.ms";
    }
    if (p->counter > snowflake_layout_max(l, SNOWFLAKE_SEQUENCE)) {
        return "its counter is wider than the layout's sequence field";
    }
    if (l->bits[SNOWFLAKE_DATACENTER] > 0 && p->datacenter_id != l->datacenter_id) {
        return "its datacenter field is not leafd.snowflake.datacenter.id";
    }
    return NULL;
}
