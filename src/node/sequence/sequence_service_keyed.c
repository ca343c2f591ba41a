/*
 * Keyed sequences in the sequence service (docs/keyed-sequences.md): a stand-in that
 * answers LEAF_EUNAVAIL until the service performs what sequence/sequence_keyed.h decides.
 */
#include "sequence_service.h"

leaf_status_t sequence_service_keyed_next(struct sequence_service *svc, const char *space,
                                          size_t space_len, const char *key, size_t key_len,
                                          int64_t n, int64_t *first, struct leaf_wait *w,
                                          struct sequence_where *where) {
    (void)svc, (void)space, (void)space_len, (void)key, (void)key_len, (void)n, (void)first;
    (void)w;
    where->known = 0;
    return LEAF_EUNAVAIL;
}

leaf_status_t sequence_service_keyed_create(struct sequence_service *svc, const char *space,
                                            size_t len, int64_t step, int *ticket,
                                            struct leaf_wait *w) {
    (void)svc, (void)space, (void)len, (void)step, (void)ticket, (void)w;
    return LEAF_EUNAVAIL;
}

leaf_status_t sequence_service_keyed_list(struct sequence_service *svc,
                                          struct sequence_keyed_view *out, int cap, int *n,
                                          int *ticket, struct leaf_wait *w) {
    (void)svc, (void)out, (void)cap, (void)ticket, (void)w;
    *n = 0;
    return LEAF_EUNAVAIL;
}

size_t sequence_service_keyed_stats(struct sequence_service *svc, struct sequence_keyed_view *out,
                                    size_t cap) {
    (void)svc, (void)out, (void)cap;
    return 0;
}
