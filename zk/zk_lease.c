#include "zk_lease.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

static int64_t max3(int64_t a, int64_t b, int64_t c) {
    int64_t m = a > b ? a : b;
    return m > c ? m : c;
}

/*
 * A new holder's floor: the largest of the slot's reserved (-1: the slot
 * does not exist), the leaf_forever timestamp of its worker ID (-1: none;
 * counted even once the slot is used, which costs nothing as reserved has
 * passed it) and what this node knows of the slot (local cache or memory,
 * -1: nothing). Never below 0.
 */
static int64_t zk_lease_floor(int64_t reserved, int64_t forever_ms, int64_t known_ms) {
    int64_t f = max3(reserved, forever_ms, known_ms);
    return f > 0 ? f : 0;
}

/* ----- slot data and names ----- */

size_t zk_lease_format_data(const struct zk_lease_data *d, char *buf, size_t cap) {
    char reserved[24], token[24];
    if (d->reserved < 0 || d->reserved >= ZK_LEASE_MS_LIMIT || cap > INT32_MAX) {
        return 0;
    }
    reserved[num_format_i64(reserved, d->reserved)] = '\0';
    snprintf(token, sizeof(token), "%016" PRIx64, d->token);
    /* cJSON escapes the ip; "reserved" goes in as raw digits, exactly. */
    cJSON *o = cJSON_CreateObject();
    int ok = o != NULL && cJSON_AddRawToObject(o, "reserved", reserved) != NULL &&
             cJSON_AddStringToObject(o, "ip", d->ip) != NULL &&
             cJSON_AddNumberToObject(o, "port", d->port) != NULL &&
             cJSON_AddStringToObject(o, "token", token) != NULL &&
             cJSON_PrintPreallocated(o, buf, (int)cap, 0);
    cJSON_Delete(o);
    return ok ? strlen(buf) : 0;
}

/* An integer JSON number in [0, limit); -1 otherwise. Below 2^53 a decimal
 * integer converts to a double exactly, so nothing is rounded. */
static int64_t json_int(const cJSON *item, int64_t limit) {
    if (!cJSON_IsNumber(item) || !(item->valuedouble >= 0) || item->valuedouble >= (double)limit ||
        (double)(int64_t)item->valuedouble != item->valuedouble) {
        return -1;
    }
    return (int64_t)item->valuedouble;
}

static int parse_token(const cJSON *item, uint64_t *token) {
    const char *s = cJSON_GetStringValue(item);
    if (s == NULL || strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16) {
        return -1;
    }
    *token = strtoull(s, NULL, 16);
    return 0;
}

static const char *parse_fields(const cJSON *root, struct zk_lease_data *d) {
    const cJSON *reserved = cJSON_GetObjectItemCaseSensitive(root, "reserved");
    const cJSON *ip = cJSON_GetObjectItemCaseSensitive(root, "ip");
    const cJSON *port = cJSON_GetObjectItemCaseSensitive(root, "port");
    const cJSON *token = cJSON_GetObjectItemCaseSensitive(root, "token");
    if (reserved == NULL) {
        return "no \"reserved\"";
    }
    if ((d->reserved = json_int(reserved, ZK_LEASE_MS_LIMIT)) < 0) {
        return "\"reserved\" is not an integer in [0, 2^53)";
    }
    if (ip != NULL && (!cJSON_IsString(ip) || strlen(ip->valuestring) >= sizeof(d->ip))) {
        return "\"ip\" is not a string of at most 63 bytes";
    }
    if (ip != NULL) {
        memcpy(d->ip, ip->valuestring, strlen(ip->valuestring) + 1);
    }
    if (port != NULL && (d->port = (int)json_int(port, 65536)) < 0) {
        return "\"port\" is not an integer in [0, 65535]";
    }
    if (token != NULL && parse_token(token, &d->token) != 0) {
        return "\"token\" is not 16 lower-case hex digits";
    }
    return NULL;
}

leaf_status_t zk_lease_parse_data(const char *buf, size_t len, struct zk_lease_data *d,
                                  const char **why) {
    memset(d, 0, sizeof(*d));
    cJSON *root = cJSON_ParseWithLength(buf, len);
    const char *fault = cJSON_IsObject(root) ? parse_fields(root, d) : "not a JSON object";
    cJSON_Delete(root);
    if (why != NULL) {
        *why = fault;
    }
    if (fault != NULL) {
        memset(d, 0, sizeof(*d));
        d->reserved = -1;
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

static leaf_status_t slot_path(const struct zk_layout *l, int64_t slot, const char *suffix,
                               char *out, size_t cap) {
    if (slot < 0 || slot > 9999999999LL) {
        return LEAF_EINVAL;
    }
    int n = snprintf(out, cap, "%s/%010" PRId64 "%s", l->lease, slot, suffix);
    return n > 0 && (size_t)n < cap ? LEAF_OK : LEAF_EINVAL;
}

leaf_status_t zk_lease_slot_path(const struct zk_layout *l, int64_t slot, char *out, size_t cap) {
    return slot_path(l, slot, "", out, cap);
}

leaf_status_t zk_lease_owner_path(const struct zk_layout *l, int64_t slot, char *out, size_t cap) {
    return slot_path(l, slot, "/" ZK_LEASE_OWNER, out, cap);
}

leaf_status_t zk_lease_slot_number(const char *name_or_path, int64_t nslots, int64_t *slot) {
    const char *slash = strrchr(name_or_path, '/');
    const char *name = slash ? slash + 1 : name_or_path;
    if (strlen(name) != ZK_LEASE_SLOT_DIGITS ||
        strspn(name, "0123456789") != ZK_LEASE_SLOT_DIGITS ||
        num_parse_i64(name, ZK_LEASE_SLOT_DIGITS, slot) != LEAF_OK || *slot >= nslots) {
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* ----- slot choice ----- */

/* A free slot on the way to the candidate list; key breaks ties at random. */
struct pick {
    struct zk_lease_candidate c;
    uint64_t key;
};

static int pick_cmp(const void *a, const void *b) {
    const struct pick *x = a, *y = b;
    if (x->c.floor_ms != y->c.floor_ms) {
        return x->c.floor_ms < y->c.floor_ms ? -1 : 1;
    }
    return x->key < y->key ? -1 : x->key > y->key;
}

static int slot_cmp(const void *a, const void *b) {
    int64_t x = ((const struct zk_lease_slot *)a)->slot,
            y = ((const struct zk_lease_slot *)b)->slot;
    return x < y ? -1 : x > y;
}

static int usable(const struct zk_lease_choice *c, int64_t floor_ms) {
    return floor_ms - c->now_ms < c->max_wait_ms; /* floor + 1 - now <= max_wait */
}

static uint64_t draw(const struct zk_lease_choice *c) {
    return c->rand(c->rand_ctx);
}

/* Adds slot as a candidate if it is free, usable and not excluded. */
static void consider(const struct zk_lease_choice *c, const struct zk_lease_slot *s, struct pick *p,
                     int *n) {
    int64_t known = s->slot == c->cache_slot ? c->cache_ms : -1;
    int64_t floor_ms = zk_lease_floor(s->exists ? s->reserved : -1, s->forever_ms, known);
    if (s->held || s->bad || s->slot == c->exclude || !usable(c, floor_ms)) {
        return;
    }
    p[*n].c = (struct zk_lease_candidate){s->slot, floor_ms, s->exists};
    p[*n].key = draw(c);
    (*n)++;
}

/* Adds up to want never-created slots, scanning from a random slot on. */
static void add_unlisted(const struct zk_lease_choice *c, const struct zk_lease_slot *sorted,
                         int want, struct pick *p, int *n) {
    int64_t start = (int64_t)(draw(c) % (uint64_t)c->nslots);
    for (int64_t i = 0; i < c->nslots && want > 0; i++) {
        struct zk_lease_slot s = {(start + i) % c->nslots, 0, 0, 0, -1, -1};
        if (s.slot != c->cache_slot &&
            bsearch(&s, sorted, (size_t)c->nslots_listed, sizeof(s), slot_cmp) == NULL) {
            int before = *n;
            consider(c, &s, p, n);
            want -= *n - before;
        }
    }
}

static int check_choice(const struct zk_lease_choice *c, const struct zk_lease_slot *sorted) {
    if (c->nslots < 1 || c->nslots > ZK_LEASE_MAX_SLOTS || c->nslots_listed < 0 ||
        c->rand == NULL || c->nslots_listed > c->nslots) {
        return -1;
    }
    for (int i = 0; i < c->nslots_listed; i++) {
        if (sorted[i].slot < 0 || sorted[i].slot >= c->nslots ||
            (i > 0 && sorted[i].slot == sorted[i - 1].slot)) {
            return -1;
        }
    }
    return 0;
}

/* Sorts the picks oldest first, then draws each position among the
 * ZK_LEASE_SPREAD oldest left. The cached slot, if present, stays first. */
static int order(const struct zk_lease_choice *c, struct pick *p, int n,
                 struct zk_lease_candidate *out, int cap) {
    int first = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].c.slot == c->cache_slot) {
            struct pick t = p[0];
            p[0] = p[i];
            p[i] = t;
            first = 1;
            break;
        }
    }
    qsort(p + first, (size_t)(n - first), sizeof(*p), pick_cmp);
    int k = n < cap ? n : cap;
    for (int i = first; i < k; i++) {
        int window = n - i < ZK_LEASE_SPREAD ? n - i : ZK_LEASE_SPREAD;
        int j = i + (int)(draw(c) % (uint64_t)window);
        struct pick t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    for (int i = 0; i < k; i++) {
        out[i] = p[i].c;
    }
    return k;
}

int zk_lease_choose(const struct zk_lease_choice *c, struct zk_lease_candidate *out, int cap) {
    if (cap < 0 || c->nslots_listed < 0 || (c->nslots_listed > 0 && c->slots == NULL)) {
        return LEAF_EINVAL;
    }
    size_t listed = (size_t)c->nslots_listed;
    /* Room for every listed slot, the cached one and cap + SPREAD unlisted. */
    struct zk_lease_slot *sorted = malloc((listed + 1) * sizeof(*sorted));
    struct pick *p = malloc((listed + (size_t)cap + ZK_LEASE_SPREAD + 1) * sizeof(*p));
    int n = 0, rc = LEAF_ENOMEM;
    if (sorted == NULL || p == NULL) {
        goto done;
    }
    if (listed > 0) {
        memcpy(sorted, c->slots, listed * sizeof(*sorted));
    }
    qsort(sorted, listed, sizeof(*sorted), slot_cmp);
    rc = LEAF_EINVAL;
    if (check_choice(c, sorted) != 0) {
        goto done;
    }
    for (size_t i = 0; i < listed; i++) {
        consider(c, &sorted[i], p, &n);
    }
    struct zk_lease_slot key = {c->cache_slot, 0, 0, 0, -1, -1};
    if (c->cache_slot >= 0 && c->cache_slot < c->nslots &&
        bsearch(&key, sorted, listed, sizeof(key), slot_cmp) == NULL) {
        consider(c, &key, p, &n); /* the cached slot, never created (or deleted) */
    }
    add_unlisted(c, sorted, cap + ZK_LEASE_SPREAD, p, &n);
    rc = order(c, p, n, out, cap);
done:
    free(p);
    free(sorted);
    return rc;
}

/* ----- fence arithmetic ----- */

leaf_status_t zk_lease_begin(struct zk_lease_hold *h, int64_t slot, uint64_t token, int32_t version,
                             const struct zk_lease_data *read, int64_t forever_ms, int64_t known_ms,
                             int64_t now_ms, int64_t max_wait_ms) {
    int64_t floor_ms = zk_lease_floor(read->reserved, forever_ms, known_ms);
    if (floor_ms - now_ms >= max_wait_ms) {
        return LEAF_ECLOCK;
    }
    *h = (struct zk_lease_hold){ZK_LEASE_HELD, slot, token, version, floor_ms, floor_ms, -1};
    return LEAF_OK;
}

int zk_lease_should_write(const struct zk_lease_hold *h, int64_t now_ms, int64_t reserve_ms) {
    if (h->state != ZK_LEASE_HELD || h->pending_ms >= 0) {
        return 0;
    }
    return h->acked_ms == h->floor_ms || h->acked_ms - now_ms < reserve_ms / 2;
}

int64_t zk_lease_next_reserved(const struct zk_lease_hold *h, int64_t now_ms, int64_t reserve_ms) {
    int64_t want = now_ms + reserve_ms;
    return want > h->acked_ms ? want : h->acked_ms;
}

void zk_lease_write_sent(struct zk_lease_hold *h, int64_t reserved) {
    h->pending_ms = reserved;
}

enum zk_lease_action zk_lease_write_done(struct zk_lease_hold *h, enum zk_lease_write_rc rc,
                                         int32_t new_version) {
    if (h->state != ZK_LEASE_HELD || h->pending_ms < 0) {
        return h->state == ZK_LEASE_LOST ? ZK_LEASE_LOST_SLOT : ZK_LEASE_KEEP;
    }
    switch (rc) {
    case ZK_LEASE_WRITE_OK:
        h->version = new_version;
        h->acked_ms = h->pending_ms;
        h->pending_ms = -1;
        return ZK_LEASE_RAISE_CEILING;
    case ZK_LEASE_WRITE_UNKNOWN:
        h->state = ZK_LEASE_RESYNC; /* pending_ms kept: resync compares with it */
        return ZK_LEASE_RESYNC_NEEDED;
    case ZK_LEASE_WRITE_BADVERSION:
    case ZK_LEASE_WRITE_NONODE: break;
    }
    zk_lease_lose(h);
    return ZK_LEASE_LOST_SLOT;
}

enum zk_lease_action zk_lease_resync(struct zk_lease_hold *h, int32_t version,
                                     const struct zk_lease_data *read) {
    if (h->state != ZK_LEASE_RESYNC) {
        return h->state == ZK_LEASE_LOST ? ZK_LEASE_LOST_SLOT : ZK_LEASE_KEEP;
    }
    if (read != NULL && version == h->version) {
        h->state = ZK_LEASE_HELD; /* not applied: nobody wrote since */
        h->pending_ms = -1;
        return ZK_LEASE_KEEP;
    }
    if (read != NULL && version == h->version + 1 && read->token == h->token &&
        read->reserved == h->pending_ms) {
        h->state = ZK_LEASE_HELD;
        h->version = version;
        h->acked_ms = h->pending_ms;
        h->pending_ms = -1;
        return ZK_LEASE_RAISE_CEILING;
    }
    zk_lease_lose(h);
    return ZK_LEASE_LOST_SLOT;
}

void zk_lease_lose(struct zk_lease_hold *h) {
    if (h->state != ZK_LEASE_NONE) {
        h->state = ZK_LEASE_LOST;
    }
    h->pending_ms = -1;
}

/* ----- clock step ----- */

enum zk_lease_step zk_lease_step_classify(int64_t now_ms, int64_t high_ms,
                                          int64_t switch_after_ms) {
    int64_t behind = high_ms - now_ms;
    if (behind <= 0) {
        return ZK_LEASE_STEP_NONE;
    }
    if (behind <= ZK_LEASE_STEP_WAIT_MS) {
        return ZK_LEASE_STEP_WAIT;
    }
    return behind <= switch_after_ms ? ZK_LEASE_STEP_REFUSE : ZK_LEASE_STEP_SWITCH;
}

int zk_lease_switch_choose(const struct zk_lease_choice *c, int64_t high_ms,
                           int64_t switch_after_ms, struct zk_lease_candidate *out, int cap,
                           int *n) {
    enum zk_lease_step step = zk_lease_step_classify(c->now_ms, high_ms, switch_after_ms);
    *n = 0;
    if (step != ZK_LEASE_STEP_SWITCH) {
        return (int)step;
    }
    struct zk_lease_choice now_only = *c;
    now_only.max_wait_ms = 0; /* floor < now: issue at once */
    int k = zk_lease_choose(&now_only, out, cap);
    if (k < 0) {
        return k;
    }
    *n = k;
    return (int)step;
}

int zk_lease_forever_blocks(const char *name, const char *own_identity) {
    return !zk_layout_is_own_child(name, own_identity);
}
