#include "sequence_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S SEQUENCE_SHARD_SLOTS

void sequence_shard_init(struct sequence_shard_map *m) {
    memset(m, 0, sizeof(*m));
    m->n = 1;
    m->r[0] = (struct sequence_shard_range){0, S - 1, -1};
}

long long sequence_shard_owner(const struct sequence_shard_map *m, int slot) {
    int lo = 0, hi = m->n - 1;
    while (lo <= hi) { /* ranges are sorted and cover 0..S-1 */
        int mid = (lo + hi) / 2;
        if (slot < m->r[mid].start) {
            hi = mid - 1;
        } else if (slot > m->r[mid].end) {
            lo = mid + 1;
        } else {
            return m->r[mid].owner;
        }
    }
    return -1;
}

static void shard_expand(const struct sequence_shard_map *m, long long *owner) {
    for (int i = 0; i < m->n; i++) {
        for (int s = m->r[i].start; s <= m->r[i].end; s++) {
            owner[s] = m->r[i].owner;
        }
    }
}

/* Runs of equal owners into ranges; -1 when there are more than the map holds. */
static int shard_compact(const long long *owner, struct sequence_shard_map *m) {
    m->n = 0;
    for (int s = 0; s < S; s++) {
        if (s > 0 && owner[s] == owner[s - 1]) {
            m->r[m->n - 1].end = s;
            continue;
        }
        if (m->n == SEQUENCE_SHARD_MAX_RANGES) {
            return -1;
        }
        m->r[m->n++] = (struct sequence_shard_range){s, s, owner[s]};
    }
    return 0;
}

static int shard_index(const long long *live, int nlive, long long id) {
    for (int i = 0; i < nlive; i++) {
        if (live[i] == id) {
            return i;
        }
    }
    return -1;
}

/*
 * Each node's target: S / N, and one more for the S % N nodes that own the
 * most now (ties: the lower id), so that rounding moves as little as it can.
 */
static void shard_targets(const long long *live, int nlive, const int *count, int *target) {
    int extra = S % nlive;
    for (int i = 0; i < nlive; i++) {
        int better = 0; /* nodes ranked above i */
        for (int j = 0; j < nlive; j++) {
            better += count[j] > count[i] || (count[j] == count[i] && live[j] < live[i]);
        }
        target[i] = S / nlive + (better < extra);
    }
}

/* Unowned slots go to nodes below their target: the previous slot's owner first (contiguity). */
static void shard_fill(long long *owner, const long long *live, int nlive, int *count,
                       const int *target) {
    for (int s = 0; s < S; s++) {
        if (owner[s] != -1) {
            continue;
        }
        int k = s > 0 ? shard_index(live, nlive, owner[s - 1]) : -1;
        if (k < 0 || count[k] >= target[k]) {
            k = -1;
            for (int i = 0; i < nlive; i++) { /* the lowest id still short */
                if (count[i] < target[i] && (k < 0 || live[i] < live[k])) {
                    k = i;
                }
            }
        }
        if (k >= 0) {
            owner[s] = live[k];
            count[k]++;
        }
    }
}

/* The fallback when a map would be too fragmented: one block per node, in id order. */
static void shard_fresh(long long *owner, const long long *live, int nlive) {
    long long sorted[SEQUENCE_SHARD_MAX_NODES];
    memcpy(sorted, live, (size_t)nlive * sizeof(*live));
    for (int i = 1; i < nlive; i++) {
        for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
            long long t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    }
    for (int s = 0, i = 0; i < nlive; i++) {
        int size = S / nlive + (i < S % nlive);
        for (int k = 0; k < size; k++) {
            owner[s++] = sorted[i];
        }
    }
}

int sequence_shard_rebalance(const struct sequence_shard_map *cur, const long long *live, int nlive,
                             struct sequence_shard_map *out) {
    long long *owner = calloc((size_t)2 * S, sizeof(*owner));
    int count[SEQUENCE_SHARD_MAX_NODES] = {0}, target[SEQUENCE_SHARD_MAX_NODES];
    if (owner == NULL || nlive > SEQUENCE_SHARD_MAX_NODES || nlive < 0) {
        free(owner);
        *out = *cur;
        return -1;
    }
    long long *before = owner + S;
    shard_expand(cur, before);
    for (int s = 0; s < S; s++) { /* a node that left owns nothing */
        int k = shard_index(live, nlive, before[s]);
        owner[s] = k >= 0 ? before[s] : -1;
        count[k >= 0 ? k : 0] += k >= 0;
    }
    if (nlive > 0) {
        shard_targets(live, nlive, count, target);
        for (int s = S - 1; s >= 0; s--) { /* the richest give from their high end */
            int k = owner[s] >= 0 ? shard_index(live, nlive, owner[s]) : -1;
            if (k >= 0 && count[k] > target[k]) {
                owner[s] = -1;
                count[k]--;
            }
        }
        shard_fill(owner, live, nlive, count, target);
    }
    out->epoch = cur->epoch;
    if (shard_compact(owner, out) != 0) {
        shard_fresh(owner, live, nlive);
        shard_compact(owner, out);
    }
    int moved = 0;
    for (int s = 0; s < S; s++) {
        moved += owner[s] != before[s];
    }
    out->epoch += moved > 0;
    free(owner);
    return moved;
}

size_t sequence_shard_format(const struct sequence_shard_map *m, char *buf, size_t cap) {
    size_t len = 0;
    int w = snprintf(buf, cap, "epoch %llu\n", (unsigned long long)m->epoch);
    for (int i = 0; w >= 0 && (size_t)w < cap - len; i++) {
        len += (size_t)w;
        if (i == m->n) {
            break;
        }
        w = snprintf(buf + len, cap - len, "%d-%d %lld\n", m->r[i].start, m->r[i].end,
                     m->r[i].owner);
    }
    return len;
}

int sequence_shard_parse(const char *text, size_t len, struct sequence_shard_map *m) {
    char buf[SEQUENCE_SHARD_TEXT_MAX + 1];
    if (len > SEQUENCE_SHARD_TEXT_MAX) {
        return -1;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    unsigned long long epoch;
    int used = 0;
    if (sscanf(buf, "epoch %llu\n%n", &epoch, &used) != 1 || used == 0) {
        return -1;
    }
    m->epoch = epoch;
    m->n = 0;
    const char *p = buf + used;
    int next = 0;
    while (*p != '\0') {
        int start, end, k = 0;
        long long owner;
        if (sscanf(p, "%d-%d %lld\n%n", &start, &end, &owner, &k) != 3 || k == 0 || start != next ||
            end < start || end >= S || owner < -1 || m->n == SEQUENCE_SHARD_MAX_RANGES) {
            return -1;
        }
        m->r[m->n++] = (struct sequence_shard_range){start, end, owner};
        next = end + 1;
        p += k;
    }
    return next == S ? 0 : -1;
}
