#include "sequence_elect.h"

#include <string.h>

#define SEQUENCE_ELECT_DIGITS 10

long long sequence_elect_seq(const char *name) {
    if (name == NULL) {
        return -1;
    }
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    size_t len = strlen(base);
    if (len < SEQUENCE_ELECT_DIGITS) {
        return -1;
    }
    long long v = 0;
    for (const char *p = base + len - SEQUENCE_ELECT_DIGITS; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') {
            return -1;
        }
        v = v * 10 + (*p - '0');
    }
    return v;
}

/* The last path component: children are listed by name, mine may be a path. */
static const char *elect_base(const char *name) {
    const char *slash = strrchr(name, '/');
    return slash ? slash + 1 : name;
}

leaf_status_t sequence_elect_decide(const char *const *children, int n, const char *mine,
                                    struct sequence_elect *out) {
    long long my_seq = sequence_elect_seq(mine);
    *out = (struct sequence_elect){
        .verdict = SEQUENCE_ELECT_MISSING, .watch = -1, .primary = -1, .mine_seq = my_seq};
    if (my_seq < 0) {
        return LEAF_EINVAL;
    }
    const char *my_base = elect_base(mine);
    long long low_seq = -1, pred_seq = -1;
    int found = 0;
    for (int i = 0; i < n; i++) {
        long long seq = sequence_elect_seq(children[i]);
        if (seq < 0) {
            continue;
        }
        if (strcmp(elect_base(children[i]), my_base) == 0) {
            found = 1;
        }
        if (low_seq < 0 || seq < low_seq) {
            low_seq = seq;
            out->primary = i;
        }
        if (seq < my_seq && seq > pred_seq) {
            pred_seq = seq;
            out->watch = i;
        }
    }
    if (!found) {
        out->watch = -1;
        return LEAF_OK;
    }
    /* The counter is unique under one parent, so "no predecessor" means lowest. */
    out->verdict = out->watch < 0 ? SEQUENCE_ELECT_PRIMARY : SEQUENCE_ELECT_WATCH;
    return LEAF_OK;
}
