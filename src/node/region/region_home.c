/*
 * The homes of sequences, keyed spaces and numberings across regions: see
 * region_home.h. Layer: the region room (src/node/region), over
 * zk/zk_session.c and the pure rules of zk/zk_region.c.
 */
#include "region_home.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hash.h"
#include "log.h"
#include "validate.h"
#include "zk_session.h"

/* One home: (kind, name) issued by region (""; a claim asked for and not answered yet). */
struct home_row {
    enum zk_region_kind kind;
    size_t len;
    char name[VALIDATE_TAG_MAX + 1];
    char region[ZK_REGION_NAME_MAX];
};

/* A home switched to this region (docs/regions.md, "Moving a home"): asked by a request, done by
 * the region thread. */
enum home_switch_state { SWITCH_NONE = 0, SWITCH_ASKED, SWITCH_DONE };
struct home_switch {
    enum home_switch_state state;
    enum zk_region_kind kind;
    size_t len;
    char name[VALIDATE_TAG_MAX + 1];
    char from[ZK_REGION_NAME_MAX];
    leaf_status_t result; /* SWITCH_DONE: LEAF_OK, LEAF_EEXIST (a third region), LEAF_ENOTFOUND */
    char holder[ZK_REGION_NAME_MAX]; /* LEAF_EEXIST: the region the registry names */
};

/* The index over the rows: open addressing, twice the rows' room, so a probe run stays short. */
#define HOME_SLOTS ((size_t)2 * REGION_HOME_MAX)

/*
 * cfg, peers, npeers: set at create, read-only. mu guards rows and nrows; up[i] is peer i's
 * last probe (an atomic any thread reads). last_read, dir_version, dir_read, bump_due: the
 * region thread's. down_said: the peers' thread's. prober, prober_on: the control thread's;
 * stop: an atomic the peers' thread reads. sw: under mu.
 */
struct region_home {
    const struct leaf_config *cfg;
    struct zk_region_peer peers[ZK_REGION_PEERS_MAX];
    int npeers;
    atomic_int up[ZK_REGION_PEERS_MAX];
    int down_said[ZK_REGION_PEERS_MAX];
    pthread_mutex_t mu;
    struct home_row *rows;
    int nrows;
    int full_said;            /* the table's being full was logged */
    int pending;              /* rows whose claim is not answered yet (region "") */
    int32_t slot[HOME_SLOTS]; /* row index + 1; 0: empty */
    int64_t last_read;
    pthread_t prober;
    int prober_on;
    atomic_int stop;
    int32_t dir_version;   /* the homes' directory's version when every home was last read */
    int dir_read;          /* dir_version is known */
    struct home_switch sw; /* under mu: the one switch asked for (region_home_switch) */
    int bump_due;          /* the region thread's: a switch's bump of the directory is owed */
};

leaf_status_t region_home_create(struct region_home **out, const struct leaf_config *cfg) {
    struct region_home *h = calloc(1, sizeof(*h));
    if (h == NULL || (h->rows = calloc(REGION_HOME_MAX, sizeof(*h->rows))) == NULL) {
        log_error("region", "calloc(region homes) failed");
        free(h);
        return LEAF_ENOMEM;
    }
    h->cfg = cfg;
    char err[256];
    if (zk_region_peers_parse(cfg->region_peers, cfg->region, h->peers, &h->npeers, err,
                              sizeof(err)) != LEAF_OK) {
        log_error("region", "leafd.region.peers: %s", err);
        free(h->rows);
        free(h);
        return LEAF_EINVAL;
    }
    for (int i = 0; i < ZK_REGION_PEERS_MAX; i++) {
        atomic_init(&h->up[i], 0); /* until the first probe answers */
    }
    atomic_init(&h->stop, 0);
    pthread_mutex_init(&h->mu, NULL);
    *out = h;
    return LEAF_OK;
}

void region_home_free(struct region_home *h) {
    if (h == NULL) {
        return;
    }
    region_home_stop(h);
    pthread_mutex_destroy(&h->mu);
    free(h->rows);
    free(h);
}

/* ---- the table (any thread, under mu) --------------------------------------- */

static size_t row_slot(enum zk_region_kind k, const char *name, size_t len) {
    return (size_t)((leaf_hash(name, len) ^ (uint64_t)k) % HOME_SLOTS);
}

static struct home_row *row_find(struct region_home *h, enum zk_region_kind k, const char *name,
                                 size_t len) {
    for (size_t i = row_slot(k, name, len);; i = (i + 1) % HOME_SLOTS) {
        if (h->slot[i] == 0) {
            return NULL;
        }
        struct home_row *r = &h->rows[h->slot[i] - 1];
        if (r->kind == k && r->len == len && memcmp(r->name, name, len) == 0) {
            return r;
        }
    }
}

/* The row of (k, name), added when missing (NULL: the table is full or the name too long). */
static struct home_row *row_get(struct region_home *h, enum zk_region_kind k, const char *name,
                                size_t len) {
    struct home_row *r = row_find(h, k, name, len);
    if (r != NULL || len > VALIDATE_TAG_MAX) {
        return r;
    }
    if (h->nrows == REGION_HOME_MAX) {
        if (!h->full_said) {
            h->full_said = 1;
            log_error("region",
                      "the table of homes holds %d names, the most: %s %.*s and later names "
                      "get no home (their creates answer 503)",
                      REGION_HOME_MAX, zk_region_kind_name(k), (int)len, name);
        }
        return NULL;
    }
    r = &h->rows[h->nrows++];
    *r = (struct home_row){.kind = k, .len = len};
    h->pending++; /* until home_store() names its region */
    memcpy(r->name, name, len);
    size_t i = row_slot(k, name, len);
    while (h->slot[i] != 0) {
        i = (i + 1) % HOME_SLOTS;
    }
    h->slot[i] = (int32_t)h->nrows;
    return r;
}

static int peer_index(const struct region_home *h, const char *region) {
    for (int i = 0; i < h->npeers; i++) {
        if (strcmp(h->peers[i].name, region) == 0) {
            return i;
        }
    }
    return -1;
}

int region_home_peer(struct region_home *h, const char *region, struct region_service_home *out) {
    int i = peer_index(h, region);
    if (i < 0) {
        return 0;
    }
    snprintf(out->region, sizeof(out->region), "%s", h->peers[i].name);
    snprintf(out->http, sizeof(out->http), "%s", h->peers[i].http);
    snprintf(out->resp, sizeof(out->resp), "%s", h->peers[i].resp);
    return 1;
}

enum region_service_where region_home_find(struct region_home *h, enum zk_region_kind k,
                                           const char *name, size_t len, int claim,
                                           struct region_service_home *out) {
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&h->mu);
    struct home_row *r = claim ? row_get(h, k, name, len) : row_find(h, k, name, len);
    if (r != NULL) {
        snprintf(out->region, sizeof(out->region), "%s", r->region);
    }
    pthread_mutex_unlock(&h->mu);
    if (out->region[0] == '\0') {
        /* Unknown: served here as with one region, or claimed for this region first. A full
         * table cannot claim: the caller's wait runs out (docs/regions.md, "Homes"). */
        return claim ? REGION_HOME_PENDING : REGION_HOME_HERE;
    }
    if (strcmp(out->region, h->cfg->region) == 0) {
        return REGION_HOME_HERE;
    }
    int i = peer_index(h, out->region);
    if (i < 0 || !atomic_load(&h->up[i])) {
        return REGION_HOME_UNREACHABLE;
    }
    region_home_peer(h, out->region, out);
    return REGION_HOME_AWAY;
}

/* ---- the registry (the region thread) --------------------------------------- */

/* The home's region as the registry holds it: "" when not read. */
static void home_read(struct zk_session *s, const char *path, char *region, size_t cap) {
    char data[ZK_REGION_NAME_MAX];
    size_t len = 0;
    region[0] = '\0';
    if (zk_session_get(s, path, data, sizeof(data) - 1, &len) == LEAF_OK &&
        zk_region_name_ok(data, len)) {
        snprintf(region, cap, "%.*s", (int)len, data);
    }
}

static void home_store(struct region_home *h, enum zk_region_kind k, const char *name, size_t len,
                       const char *region) {
    pthread_mutex_lock(&h->mu);
    struct home_row *r = row_get(h, k, name, len);
    if (r != NULL) {
        h->pending -= r->region[0] == '\0';
        snprintf(r->region, sizeof(r->region), "%s", region);
    }
    pthread_mutex_unlock(&h->mu);
}

/* The claims asked for: each created for this region, or read back when another holds it. */
static void homes_claim(struct region_home *h, struct zk_session *s, const char *dir) {
    for (int i = 0;; i++) {
        struct home_row want;
        pthread_mutex_lock(&h->mu);
        int more = i < h->nrows && h->pending > 0;
        if (more) {
            want = h->rows[i];
        }
        pthread_mutex_unlock(&h->mu);
        if (!more) {
            return;
        }
        if (want.region[0] != '\0') {
            continue;
        }
        char child[VALIDATE_TAG_MAX + 16], path[512], region[ZK_REGION_NAME_MAX];
        const char *ours = h->cfg->region;
        if (zk_region_home_child(child, sizeof(child), want.kind, want.name, want.len) != LEAF_OK ||
            snprintf(path, sizeof(path), "%s/%s", dir, child) >= (int)sizeof(path)) {
            continue;
        }
        leaf_status_t rc =
            zk_session_create(s, path, ours, strlen(ours), ZK_MODE_PERSISTENT, NULL, 0);
        if (rc == LEAF_OK) {
            log_info("region", "%s %s homed in region %s (%s)", zk_region_kind_name(want.kind),
                     want.name, ours, path);
            home_store(h, want.kind, want.name, want.len, ours);
        } else if (rc == LEAF_EEXIST) {
            home_read(s, path, region, sizeof(region));
            if (region[0] != '\0') {
                home_store(h, want.kind, want.name, want.len, region);
            }
        }
    }
}

/* Every home of the registry into the table (homes are never rewritten: only new ones read). */
static void homes_read(struct region_home *h, struct zk_session *s, const char *dir) {
    char **kids = NULL;
    int nkids = 0;
    struct zk_stat st;
    /* A moved home bumps the directory's version (home_switch_run): then every home is read
     * again, not only the new names. */
    if (zk_session_stat(s, dir, &st) != LEAF_OK) {
        return;
    }
    int all = h->dir_read && st.version != h->dir_version, missed = 0;
    if (zk_session_children(s, dir, &kids, &nkids) != LEAF_OK) {
        return;
    }
    for (int i = 0; i < nkids; i++) {
        enum zk_region_kind k;
        const char *name;
        size_t len;
        if (zk_region_home_parse(kids[i], &k, &name, &len) != LEAF_OK) {
            continue;
        }
        pthread_mutex_lock(&h->mu);
        struct home_row *r = row_find(h, k, name, len);
        int known = r != NULL && r->region[0] != '\0';
        pthread_mutex_unlock(&h->mu);
        if (!known || all) {
            char path[512], region[ZK_REGION_NAME_MAX];
            snprintf(path, sizeof(path), "%s/%s", dir, kids[i]);
            home_read(s, path, region, sizeof(region));
            if (region[0] != '\0') {
                home_store(h, k, name, len, region);
            } else {
                missed = 1;
            }
        }
    }
    zk_names_free(kids, nkids);
    if (!missed) { /* else every home is read again on the next round */
        h->dir_version = st.version;
        h->dir_read = 1;
    }
}

/* The directory's version bumped after a switch, so that every node reads its homes again;
 * tried again on the next round until it lands. */
static void home_bump(struct region_home *h, struct zk_session *s, const char *dir) {
    if (h->bump_due && zk_session_set(s, dir, "", 0) == LEAF_OK) {
        h->bump_due = 0;
    }
}

/*
 * The switch asked for: the home's znode rewritten from `from` to this region with a
 * conditional write (of two moves at once one wins), then the directory's version bumped so
 * that every node reads its homes again (homes_read). Already this region's: done.
 */
static void home_switch_run(struct region_home *h, struct zk_session *s, const char *dir) {
    pthread_mutex_lock(&h->mu);
    struct home_switch sw = h->sw;
    pthread_mutex_unlock(&h->mu);
    if (sw.state != SWITCH_ASKED) {
        return;
    }
    char child[VALIDATE_TAG_MAX + 16], path[512], data[ZK_REGION_NAME_MAX];
    const char *ours = h->cfg->region;
    size_t len = 0;
    struct zk_stat st;
    if (zk_region_home_child(child, sizeof(child), sw.kind, sw.name, sw.len) != LEAF_OK ||
        snprintf(path, sizeof(path), "%s/%s", dir, child) >= (int)sizeof(path)) {
        return;
    }
    leaf_status_t rc = zk_session_get_stat(s, path, data, sizeof(data) - 1, &len, &st);
    leaf_status_t result = LEAF_EAGAIN;
    data[rc == LEAF_OK ? len : 0] = '\0';
    if (rc == LEAF_ENOTFOUND) {
        result = LEAF_ENOTFOUND;
    } else if (rc != LEAF_OK) {
        return; /* the registry does not answer: the next tick tries again */
    } else if (strcmp(data, sw.from) == 0 && strcmp(data, ours) != 0) {
        if (zk_session_set_version(s, path, ours, strlen(ours), st.version) != LEAF_OK) {
            return; /* refused or lost: read again on the next tick */
        }
        log_info("region", "%s %s moved home from region %s to region %s (%s)",
                 zk_region_kind_name(sw.kind), sw.name, sw.from, ours, path);
        result = LEAF_OK;
    } else {
        /* Already this region's (this call's write before a lost answer, or another node's),
         * or a third region's. */
        result = strcmp(data, ours) == 0 ? LEAF_OK : LEAF_EEXIST;
    }
    if (result == LEAF_OK) {
        home_store(h, sw.kind, sw.name, sw.len, ours);
        h->bump_due = 1;
    }
    pthread_mutex_lock(&h->mu);
    if (h->sw.state == SWITCH_ASKED && h->sw.kind == sw.kind && h->sw.len == sw.len &&
        memcmp(h->sw.name, sw.name, sw.len) == 0) {
        h->sw.state = SWITCH_DONE;
        h->sw.result = result;
        snprintf(h->sw.holder, sizeof(h->sw.holder), "%s", data);
    }
    pthread_mutex_unlock(&h->mu);
}

leaf_status_t region_home_switch(struct region_home *h, enum zk_region_kind k, const char *name,
                                 size_t len, const char *from, char *holder, size_t cap) {
    if (len > VALIDATE_TAG_MAX || strlen(from) >= ZK_REGION_NAME_MAX) {
        return LEAF_EINVAL;
    }
    leaf_status_t rc = LEAF_EAGAIN;
    pthread_mutex_lock(&h->mu);
    struct home_switch *sw = &h->sw;
    int same = sw->state != SWITCH_NONE && sw->kind == k && sw->len == len &&
               memcmp(sw->name, name, len) == 0 && strcmp(sw->from, from) == 0;
    if (same && sw->state == SWITCH_DONE) {
        rc = sw->result;
        snprintf(holder, cap, "%s", sw->holder);
        sw->state = SWITCH_NONE;
    } else if (!same && sw->state == SWITCH_ASKED) {
        rc = LEAF_EBUSY; /* one switch at a time */
    } else if (!same) {
        *sw = (struct home_switch){.state = SWITCH_ASKED, .kind = k, .len = len};
        memcpy(sw->name, name, len);
        snprintf(sw->from, sizeof(sw->from), "%s", from);
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

/* ---- the peers (their own thread) ------------------------------------------- */

/* 1 when the node at host:port answers an HTTP request within REGION_HOME_PROBE_WAIT_MS. */
static int probe(const char *addr) {
    char host[ZK_REGION_PEER_ADDR];
    snprintf(host, sizeof(host), "%s", addr);
    char *colon = strrchr(host, ':');
    if (colon == NULL) {
        return 0;
    }
    *colon = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || ai == NULL) {
        return 0;
    }
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int ok = 0;
    if (fd >= 0 && (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS)) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        static const char req[] = "GET /ready HTTP/1.1\r\nHost: leafd\r\nConnection: close\r\n\r\n";
        if (poll(&p, 1, REGION_HOME_PROBE_WAIT_MS) == 1 && (p.revents & POLLOUT) &&
            send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof(req) - 1)) {
            char buf[16];
            p = (struct pollfd){.fd = fd, .events = POLLIN};
            ok = poll(&p, 1, REGION_HOME_PROBE_WAIT_MS) == 1 &&
                 recv(fd, buf, sizeof(buf), 0) >= 7 && memcmp(buf, "HTTP/1.", 7) == 0;
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    freeaddrinfo(ai);
    return ok;
}

static void peers_probe(struct region_home *h) {
    for (int i = 0; i < h->npeers; i++) {
        int up = probe(h->peers[i].http);
        if (up != atomic_load(&h->up[i]) || (!up && !h->down_said[i])) {
            if (up) {
                log_info("region", "region %s answers at %s: its homes are redirected to it",
                         h->peers[i].name, h->peers[i].http);
            } else {
                log_warn("region",
                         "region %s does not answer at %s: its homes answer 503 "
                         "home_region_unreachable",
                         h->peers[i].name, h->peers[i].http);
            }
            h->down_said[i] = !up;
        }
        atomic_store(&h->up[i], up);
    }
}

/* The peers' thread: a probe round every REGION_HOME_PROBE_MS, a stop seen within
 * PROBER_NAP_MS. */
#define PROBER_NAP_MS 50
static void *peers_thread(void *arg) {
    struct region_home *h = arg;
    while (!atomic_load(&h->stop)) {
        int64_t began = clock_mono_ms();
        peers_probe(h);
        while (!atomic_load(&h->stop) && clock_mono_ms() - began < REGION_HOME_PROBE_MS) {
            struct timespec nap = {0, PROBER_NAP_MS * 1000000L};
            nanosleep(&nap, NULL);
        }
    }
    return NULL;
}

leaf_status_t region_home_start(struct region_home *h) {
    if (h->npeers == 0 || h->prober_on) {
        return LEAF_OK;
    }
    atomic_store(&h->stop, 0);
    if (pthread_create(&h->prober, NULL, peers_thread, h) != 0) {
        log_error("region", "pthread_create(region peers thread) failed");
        return LEAF_ERR;
    }
    h->prober_on = 1;
    return LEAF_OK;
}

void region_home_stop(struct region_home *h) {
    if (h == NULL || !h->prober_on) {
        return;
    }
    atomic_store(&h->stop, 1);
    pthread_join(h->prober, NULL);
    h->prober_on = 0;
}

void region_home_tick(struct region_home *h, struct zk_session *s) {
    int64_t now = clock_mono_ms();
    char dir[300];
    if (zk_session_state(s) == ZK_STATE_CONNECTED &&
        zk_region_homes_dir(dir, sizeof(dir), h->cfg->name) == LEAF_OK) {
        leaf_status_t rc =
            zk_session_create(s, ZK_REGION_HOMES_ROOT, NULL, 0, ZK_MODE_PERSISTENT, NULL, 0);
        if (rc == LEAF_OK || rc == LEAF_EEXIST) {
            rc = zk_session_create(s, dir, NULL, 0, ZK_MODE_PERSISTENT, NULL, 0);
        }
        if (rc == LEAF_OK || rc == LEAF_EEXIST) {
            homes_claim(h, s, dir);
            home_switch_run(h, s, dir);
            home_bump(h, s, dir);
            if (now - h->last_read >= REGION_HOME_READ_MS) {
                h->last_read = now;
                homes_read(h, s, dir);
            }
        }
    }
}

void region_home_view(struct region_home *h, struct region_service_view *v) {
    pthread_mutex_lock(&h->mu);
    v->homes = h->nrows - h->pending;
    pthread_mutex_unlock(&h->mu);
    v->npeers = h->npeers;
    for (int i = 0; i < h->npeers; i++) {
        snprintf(v->peers[i].name, sizeof(v->peers[i].name), "%s", h->peers[i].name);
        snprintf(v->peers[i].http, sizeof(v->peers[i].http), "%s", h->peers[i].http);
        v->peers[i].answers = atomic_load(&h->up[i]);
    }
}
