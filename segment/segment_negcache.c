#include "segment_negcache.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"

leaf_status_t segment_negcache_init(struct segment_negcache *c, size_t cap, int64_t ttl_ms,
                                    double lookups_per_s) {
    memset(c, 0, sizeof(*c));
    c->cap = cap < 1 ? 1 : cap;
    c->nbuckets = 1;
    while (c->nbuckets < c->cap) {
        c->nbuckets *= 2;
    }
    c->ring = calloc(c->cap, sizeof(*c->ring));
    c->buckets = malloc(c->nbuckets * sizeof(*c->buckets));
    if (c->ring == NULL || c->buckets == NULL) {
        segment_negcache_free(c);
        return LEAF_ENOMEM;
    }
    memset(c->buckets, 0xff, c->nbuckets * sizeof(*c->buckets));
    c->ttl_ms = ttl_ms;
    c->rate = c->tokens = lookups_per_s;
    c->tokens_ms = -1;
    return LEAF_OK;
}

void segment_negcache_free(struct segment_negcache *c) {
    free(c->ring);
    free(c->buckets);
    memset(c, 0, sizeof(*c));
}

static int32_t *neg_bucket(struct segment_negcache *c, const char *name, size_t len) {
    return &c->buckets[leaf_hash(name, len) & (c->nbuckets - 1)];
}

/* The link pointing at the entry for name, or at the chain's end (-1). */
static int32_t *neg_link(struct segment_negcache *c, const char *name, size_t len) {
    int32_t *link = neg_bucket(c, name, len);
    while (*link >= 0) {
        struct segment_negcache_entry *e = &c->ring[*link];
        if (e->len == len && memcmp(e->name, name, len) == 0) {
            return link;
        }
        link = &e->next;
    }
    return link;
}

/* Unlinks ring entry i from its chain. */
static void neg_unlink(struct segment_negcache *c, size_t i) {
    struct segment_negcache_entry *e = &c->ring[i];
    int32_t *link = neg_link(c, e->name, e->len);
    if (*link == (int32_t)i) {
        *link = e->next;
    }
    e->len = 0;
}

/* Drops the oldest entry (a forgotten one is just skipped). */
static void neg_pop(struct segment_negcache *c) {
    if (c->ring[c->tail].len > 0) {
        neg_unlink(c, c->tail);
    }
    c->tail = (c->tail + 1) % c->cap;
    c->count--;
}

int64_t segment_negcache_found(struct segment_negcache *c, const char *name, size_t len,
                               int64_t now_ms) {
    if (len == 0 || len > VALIDATE_TAG_MAX) {
        return -1;
    }
    while (c->count > 0 && (c->ring[c->tail].len == 0 || c->ring[c->tail].expires_ms <= now_ms)) {
        neg_pop(c); /* expired, in insertion order */
    }
    int32_t i = *neg_link(c, name, len);
    if (i >= 0 && c->ring[i].expires_ms > now_ms) {
        c->hits++;
        return c->ring[i].expires_ms - c->ttl_ms;
    }
    return -1;
}

void segment_negcache_put(struct segment_negcache *c, const char *name, size_t len,
                          int64_t now_ms) {
    if (len == 0 || len > VALIDATE_TAG_MAX) {
        return;
    }
    segment_negcache_forget(c, name, len);
    if (c->count == c->cap) {
        neg_pop(c);
    }
    struct segment_negcache_entry *e = &c->ring[c->head];
    memcpy(e->name, name, len);
    e->len = (uint8_t)len;
    e->expires_ms = now_ms + c->ttl_ms;
    int32_t *b = neg_bucket(c, name, len);
    e->next = *b;
    *b = (int32_t)c->head;
    c->head = (c->head + 1) % c->cap;
    c->count++;
}

void segment_negcache_forget(struct segment_negcache *c, const char *name, size_t len) {
    if (len == 0 || len > VALIDATE_TAG_MAX) {
        return;
    }
    int32_t *link = neg_link(c, name, len);
    if (*link >= 0) {
        struct segment_negcache_entry *e = &c->ring[*link];
        *link = e->next;
        e->len = 0; /* its ring slot stays until it is the oldest */
    }
}

int segment_negcache_admit(struct segment_negcache *c, int64_t now_ms) {
    if (c->tokens_ms >= 0 && now_ms > c->tokens_ms) {
        c->tokens += c->rate * (double)(now_ms - c->tokens_ms) / 1000.0;
        if (c->tokens > c->rate) {
            c->tokens = c->rate;
        }
    }
    if (c->tokens_ms < 0 || now_ms > c->tokens_ms) {
        c->tokens_ms = now_ms;
    }
    if (c->tokens < 1.0) {
        c->refused++;
        return 0;
    }
    c->tokens -= 1.0;
    return 1;
}
