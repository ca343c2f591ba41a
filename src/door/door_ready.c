#include "door_ready.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "door_ctx.h"
#include "sbuf.h"
#include "status.h"

static const char *const readiness_names[DOOR_READY_COUNT] = {
#define DOOR_READY_NAME(e, label) label,
    DOOR_READY_COMPONENTS(DOOR_READY_NAME)
#undef DOOR_READY_NAME
};

const char *door_ready_name(enum door_ready_component c) {
    return (int)c >= 0 && c < DOOR_READY_COUNT ? readiness_names[c] : NULL;
}

static void readiness_set(struct door_ready *r, enum door_ready_component c, int enabled, int ready,
                          const char *reason) {
    r->enabled[c] = enabled;
    r->ready[c] = enabled && ready;
    r->reason[c] = enabled && !ready ? reason : "";
    if (enabled && !ready) {
        r->all = 0;
    }
}

void door_ready_eval(const struct door_ctx *ctx, struct door_ready *r) {
    struct snowflake_service_view sf;
    struct segment_service_stats seg;
    struct sequence_service_stats seq;
    struct user_service_stats users;
    r->all = 1;
    r->stopping = ctx->stopping != NULL && atomic_load(ctx->stopping);
    if (ctx->cfg->snowflake_enable) {
        snowflake_service_view(ctx->snowflake, &sf);
        readiness_set(r, DOOR_READY_SNOWFLAKE, 1, sf.ready,
                      sf.reason && sf.reason[0] ? sf.reason : "not ready");
    } else {
        readiness_set(r, DOOR_READY_SNOWFLAKE, 0, 0, "");
    }
    segment_service_stats(ctx->segment, &seg);
    readiness_set(r, DOOR_READY_SEGMENT, seg.enabled, seg.ready,
                  "database unreachable and no tag has a buffered range");
    sequence_service_stats(ctx->sequence, &seq);
    readiness_set(r, DOOR_READY_SEQUENCE, seq.enabled, seq.connected,
                  "no ZooKeeper session: not in line for the primary");
    user_service_stats(ctx->users, &users);
    readiness_set(r, DOOR_READY_AUTH, users.enabled, users.loaded_ms != 0,
                  "users not loaded yet: ZooKeeper unreachable and no local copy");
    struct region_service_view region;
    region_service_view(ctx->region, &region);
    snprintf(r->region_reason, sizeof(r->region_reason), "%s",
             region.reason[0] ? region.reason : "region claim not confirmed");
    readiness_set(r, DOOR_READY_REGION, region.enabled, region.ready, r->region_reason);
    if (r->stopping) {
        r->all = 0;
    }
}

int door_ready_parse(const char *s, size_t n, unsigned *mask, char *bad, size_t badlen) {
    *mask = 0;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && s[j] != ',') {
            j++;
        }
        int found = j - i == 3 && memcmp(s + i, "any", 3) == 0;
        if (found) {
            *mask |= DOOR_READY_ANY;
        }
        for (int c = 0; c < DOOR_READY_COUNT && !found; c++) {
            if (strlen(readiness_names[c]) == j - i &&
                memcmp(readiness_names[c], s + i, j - i) == 0) {
                *mask |= 1u << c;
                found = 1;
            }
        }
        if (!found) {
            if (badlen > 0) {
                snprintf(bad, badlen, "%.*s", (int)(j - i), s + i);
            }
            return LEAF_EINVAL;
        }
        i = j + 1;
    }
    return LEAF_OK;
}

int door_ready_ok(const struct door_ready *r, unsigned mask) {
    if (r->stopping) {
        return 0;
    }
    if (mask == 0) {
        return r->all;
    }
    int any = 0, every = 1;
    for (int c = 0; c < DOOR_READY_COUNT; c++) {
        any |= r->ready[c];
        if (mask & (1u << c)) {
            every &= r->ready[c]; /* a disabled component is never ready */
        }
    }
    return (mask & DOOR_READY_ANY) ? any && every : every;
}

/* Appends to buf[*pos..cap), cutting at cap - 1 bytes. */
static void readiness_put(char *buf, size_t cap, size_t *pos, const char *a, const char *b) {
    int n = snprintf(buf + *pos, cap - *pos, "%s%s", a, b);
    if (n > 0) {
        *pos = *pos + (size_t)n >= cap ? cap - 1 : *pos + (size_t)n;
    }
}

size_t door_ready_text(const struct door_ready *r, char *buf, size_t cap) {
    return door_ready_text_for(r, 0, buf, cap);
}

size_t door_ready_text_for(const struct door_ready *r, unsigned mask, char *buf, size_t cap) {
    size_t pos = 0;
    int ok = door_ready_ok(r, mask);
    if (cap == 0) {
        return 0;
    }
    buf[0] = '\0';
    readiness_put(buf, cap, &pos, ok ? "ready" : "not ready:", "");
    if (!ok && r->stopping) {
        readiness_put(buf, cap, &pos, " stopping", "");
        return pos;
    }
    const char *sep = " ";
    for (int c = 0; c < DOOR_READY_COUNT && !ok; c++) {
        int asked = mask == 0 || (mask & ~DOOR_READY_ANY) == 0 || (mask & (1u << c));
        if (!asked || r->ready[c] || (!r->enabled[c] && !(mask & (1u << c)))) {
            continue;
        }
        readiness_put(buf, cap, &pos, sep, readiness_names[c]);
        readiness_put(buf, cap, &pos, ": ", r->enabled[c] ? r->reason[c] : "disabled");
        sep = "; ";
    }
    return pos;
}

void door_ready_region_json(const struct door_ctx *ctx, const struct door_ready *r,
                            struct sbuf *b) {
    struct region_service_view v;
    region_service_view(ctx->region, &v);
    if (!v.enabled) {
        return;
    }
    int ready = r->ready[DOOR_READY_REGION];
    sbuf_puts(b, ",\"region\":{\"name\":");
    sbuf_json_str(b, v.name, strlen(v.name));
    sbuf_printf(b,
                ",\"id\":%" PRId64 ",\"count\":%" PRId64 ",\"ready\":%s,\"claim\":\"%s\","
                "\"registry\":\"%s\",\"confirmed_ms\":%" PRId64,
                v.id, v.count, ready ? "true" : "false", v.source,
                v.registry_up ? "connected" : "disconnected", v.confirmed_ms);
    /* Homes (docs/regions.md, "Homes"): a peer that does not answer never makes this node not
     * ready; only the names homed there answer 503. */
    sbuf_printf(b, ",\"homes\":%d,\"peers\":[", v.homes);
    for (int i = 0; i < v.npeers; i++) {
        sbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        sbuf_json_str(b, v.peers[i].name, strlen(v.peers[i].name));
        sbuf_puts(b, ",\"http\":");
        sbuf_json_str(b, v.peers[i].http, strlen(v.peers[i].http));
        sbuf_printf(b, ",\"answers\":%s}", v.peers[i].answers ? "true" : "false");
    }
    sbuf_putc(b, ']');
    if (!ready) {
        sbuf_puts(b, ",\"reason\":");
        sbuf_json_str(b, r->reason[DOOR_READY_REGION], strlen(r->reason[DOOR_READY_REGION]));
    }
    sbuf_putc(b, '}');
}
