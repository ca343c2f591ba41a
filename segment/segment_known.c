#include "segment_known.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"

#define KNOWN_EMPTY UINT32_MAX

/* The packed rows and an open-addressing index of their offsets (linear probing). */
struct segment_known {
    struct sbuf rows;
    uint32_t *index;
    size_t mask; /* index size - 1, a power of two at least twice the rows */
    size_t count;
    uint64_t gen;
};

void segment_known_pack(struct sbuf *packed, const char *name, size_t len, int64_t step) {
    if (len == 0 || len > 255) {
        return;
    }
    unsigned char n = (unsigned char)len;
    sbuf_append(packed, &step, sizeof(step));
    sbuf_append(packed, &n, 1);
    sbuf_append(packed, name, len);
}

/* The row at off: its name and length, and its step. */
static const char *known_row(const struct segment_known *k, uint32_t off, size_t *len,
                             int64_t *step) {
    const char *p = k->rows.data + off;
    if (step != NULL) {
        memcpy(step, p, sizeof(*step));
    }
    *len = (unsigned char)p[sizeof(int64_t)];
    return p + sizeof(int64_t) + 1;
}

/* The index slot holding name, or the empty slot where it would go. */
static size_t known_slot(const struct segment_known *k, const char *name, size_t len) {
    size_t i = (size_t)leaf_hash(name, len) & k->mask;
    while (k->index[i] != KNOWN_EMPTY) {
        size_t n;
        const char *s = known_row(k, k->index[i], &n, NULL);
        if (n == len && memcmp(s, name, len) == 0) {
            return i;
        }
        i = (i + 1) & k->mask;
    }
    return i;
}

static size_t known_rows(const struct sbuf *rows) {
    size_t n = 0;
    for (size_t off = 0; off + sizeof(int64_t) + 1 <= rows->len; n++) {
        off += sizeof(int64_t) + 1 + (unsigned char)rows->data[off + sizeof(int64_t)];
    }
    return n;
}

leaf_status_t segment_known_build(struct segment_known **out, struct sbuf *packed, uint64_t gen) {
    if (packed->failed || packed->len >= KNOWN_EMPTY) {
        return LEAF_ENOMEM;
    }
    struct segment_known *k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return LEAF_ENOMEM;
    }
    size_t rows = known_rows(packed);
    size_t size = 16;
    while (size < rows * 2) {
        size *= 2;
    }
    k->index = malloc(size * sizeof(*k->index));
    if (k->index == NULL) {
        free(k);
        return LEAF_ENOMEM;
    }
    memset(k->index, 0xff, size * sizeof(*k->index));
    k->mask = size - 1;
    k->gen = gen;
    k->rows = *packed;
    sbuf_init(packed, 0); /* the set owns the rows now */
    for (size_t off = 0; off + sizeof(int64_t) + 1 <= k->rows.len;) {
        size_t len;
        const char *name = known_row(k, (uint32_t)off, &len, NULL);
        size_t i = known_slot(k, name, len);
        if (k->index[i] == KNOWN_EMPTY) {
            k->index[i] = (uint32_t)off;
            k->count++;
        }
        off += sizeof(int64_t) + 1 + len;
    }
    *out = k;
    return LEAF_OK;
}

int segment_known_find(const struct segment_known *k, const char *name, size_t len, int64_t *step) {
    if (k == NULL || len == 0 || len > 255) {
        return 0;
    }
    size_t i = known_slot(k, name, len);
    if (k->index[i] == KNOWN_EMPTY) {
        return 0;
    }
    size_t n;
    known_row(k, k->index[i], &n, step);
    return 1;
}

size_t segment_known_count(const struct segment_known *k) {
    return k ? k->count : 0;
}

uint64_t segment_known_gen(const struct segment_known *k) {
    return k ? k->gen : 0;
}

size_t segment_known_bytes(const struct segment_known *k) {
    return k ? sizeof(*k) + k->rows.cap + (k->mask + 1) * sizeof(*k->index) : 0;
}

void segment_known_free(struct segment_known *k) {
    if (k != NULL) {
        sbuf_free(&k->rows);
        free(k->index);
        free(k);
    }
}
