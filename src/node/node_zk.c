/*
 * The process's one ZooKeeper session, its membership record and the stage
 * of the cluster's trees: see node_zk.h.
 * Layer: the node (src/node), beneath the services, which subscribe to it;
 * over zk/zk_session.c and zk/'s pure ACL and member rules.
 */
#include "node_zk.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "node_ip.h"
#include "version.h"
#include "zk_acl.h"
#include "zk_member.h"

/* Without credentials, how long the start waits for ZooKeeper before the checks. */
#define NODE_ZK_START_WAIT_MS 1000

/* The first release that understands staged credentials and the member records. */
#define NODE_ZK_STAGED_SINCE "1.0.0"

static void node_zk_on_async(uv_async_t *a) {
    struct node_zk *z = a->data;
    if (z->open) {
        zk_session_dispatch(&z->session);
    }
}

/* ZooKeeper threads: wake the control loop. */
static void node_zk_notify(void *arg) {
    uv_async_send(arg);
}

/* ---- the membership record ---------------------------------------------- */

static leaf_status_t member_init(struct node_zk *z) {
    const struct leaf_config *cfg = z->cfg;
    char ip[48];
    if (node_advertise_ip(cfg, ip, sizeof(ip)) != LEAF_OK) {
        return LEAF_ERR;
    }
    struct zk_member m = {.auth = cfg->zk_auth[0] != '\0',
                          .sharding = cfg->sequence_enable && cfg->sequence_sharding};
    snprintf(m.version, sizeof(m.version), "%s", leafd_version());
    snprintf(m.http, sizeof(m.http), "%s:%d", ip, cfg->listen_port);
    snprintf(z->member_path, sizeof(z->member_path), "/leafd/%s/members/%s:%d", cfg->name, ip,
             cfg->identity_port);
    return zk_member_format(&m, z->member_data, sizeof(z->member_data)) > 0 ? LEAF_OK : LEAF_ERR;
}

/* Keeper thread (or start): the record exists, held by this session. */
static void member_ensure(struct node_zk *z) {
    struct zk_session *s = &z->session;
    char root[300], dir[320];
    snprintf(root, sizeof(root), "/leafd/%s", z->cfg->name);
    snprintf(dir, sizeof(dir), "%s/members", root);
    const char *parents[] = {"/leafd", root, dir};
    struct zk_stat st;
    for (int i = 0; i < 3; i++) {
        if (zk_session_stat(s, parents[i], &st) == LEAF_OK) {
            continue; /* a create would be refused where the parent is another's */
        }
        leaf_status_t made = zk_session_create(s, parents[i], NULL, 0, ZK_MODE_PERSISTENT, NULL, 0);
        if (made != LEAF_OK && made != LEAF_EEXIST) {
            return; /* logged; next round */
        }
    }
    if (zk_session_stat(s, z->member_path, &st) == LEAF_OK) {
        if (st.owner == zk_session_id(s)) {
            /* Ours, or the previous process's of an in-place upgrade (the session was
             * adopted): a newer binary says its own version and features. */
            char data[sizeof(z->member_data)];
            size_t got = 0;
            size_t len = strlen(z->member_data);
            if (zk_session_get(s, z->member_path, data, sizeof(data), &got) == LEAF_OK &&
                (got != len || memcmp(data, z->member_data, len) != 0) &&
                zk_session_set(s, z->member_path, z->member_data, len) == LEAF_OK) {
                log_info("zk", "member record %s: %s (was %.*s)", z->member_path, z->member_data,
                         (int)got, data);
            }
            return;
        }
        /* A previous process of this node (killed) or a previous session:
         * its record goes with it, ours replaces it. */
        zk_session_delete(s, z->member_path, -1);
    }
    size_t len = strlen(z->member_data);
    if (zk_session_create(s, z->member_path, z->member_data, len, ZK_MODE_EPHEMERAL, NULL, 0) ==
        LEAF_OK) {
        log_info("zk", "member record %s: %s", z->member_path, z->member_data);
    }
}

/* ---- the stage of the trees ---------------------------------------------- */

/* Names who once: a live node found in several places (a member without the
 * credentials that also holds a lease slot) is one node holding closing back. */
static void held_add(char *held, size_t cap, const char *who, const char *why) {
    size_t pos = strlen(held);
    size_t wlen = strlen(who);
    for (const char *p = held; (p = strstr(p, who)) != NULL; p += wlen) {
        if ((p == held || p[-1] == ' ') && strncmp(p + wlen, " (", 2) == 0) {
            return;
        }
    }
    if (pos + 1 < cap) {
        snprintf(held + pos, cap - pos, "%s%s (%s)", pos ? ", " : "", who, why);
    }
}

static int member_get(struct node_zk *z, const char *dir, const char *name, struct zk_member *m) {
    char path[512], data[512];
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (zk_session_get(&z->session, path, data, sizeof(data) - 1, &len) != LEAF_OK) {
        return 0;
    }
    data[len] = '\0';
    return zk_member_parse(data, len, m) == LEAF_OK;
}

/*
 * Lease mode's live nodes: each held slot's EPHEMERAL owner child names its
 * holder (ip:port); one without a member record runs 0.2.0 or older.
 */
static void stage_held_leases(struct node_zk *z, char **mem, int nmem, char *held, size_t cap) {
    char dir[320];
    char **slots = NULL;
    int nslots = 0;
    snprintf(dir, sizeof(dir), "/snowflake/%s/leaf_lease", z->cfg->name);
    if (zk_session_children(&z->session, dir, &slots, &nslots) != LEAF_OK) {
        return;
    }
    for (int i = 0; i < nslots; i++) {
        char path[600], holder[128];
        size_t len = 0;
        snprintf(path, sizeof(path), "%s/%s/owner", dir, slots[i]);
        if (zk_session_get(&z->session, path, holder, sizeof(holder) - 1, &len) != LEAF_OK) {
            continue; /* a free slot */
        }
        holder[len] = '\0';
        holder[strcspn(holder, " \r\n")] = '\0';
        int known = 0;
        for (int j = 0; j < nmem && !known; j++) {
            known = strcmp(holder, mem[j]) == 0;
        }
        if (!known && holder[0] != '\0') {
            held_add(held, cap, holder, "0.2.0 or older, holding a lease slot");
        }
    }
    zk_names_free(slots, nslots);
}

/*
 * The live nodes that may not see closed trees yet, into held: members that
 * do not authenticate or run an older release, and live nodes without a
 * member record (leaf_temporary, the sequence line: 0.2.0 or older).
 * Returns -1 when ZooKeeper could not be read.
 */
static int stage_held_back(struct node_zk *z, char *held, size_t cap) {
    const char *name = z->cfg->name;
    char dir[320], path[320];
    char **mem = NULL, **kids = NULL;
    int nmem = 0, nkids = 0;
    held[0] = '\0';
    snprintf(dir, sizeof(dir), "/leafd/%s/members", name);
    if (zk_session_children(&z->session, dir, &mem, &nmem) == LEAF_ERR) {
        return -1;
    }
    struct zk_member *ms = calloc((size_t)nmem + 1, sizeof(*ms));
    for (int i = 0; ms != NULL && i < nmem; i++) {
        if (!member_get(z, dir, mem[i], &ms[i])) {
            continue; /* gone since the listing */
        }
        if (zk_member_version_cmp(ms[i].version, NODE_ZK_STAGED_SINCE) < 0) {
            held_add(held, cap, mem[i], ms[i].version);
        } else if (!ms[i].auth) {
            held_add(held, cap, mem[i], "no leafd.zk.auth");
        }
    }
    snprintf(path, sizeof(path), "/snowflake/%s/leaf_temporary", name);
    if (zk_session_children(&z->session, path, &kids, &nkids) == LEAF_OK) {
        for (int i = 0; i < nkids; i++) {
            int known = 0;
            for (int j = 0; j < nmem && !known; j++) {
                known = strcmp(kids[i], mem[j]) == 0;
            }
            if (!known) {
                held_add(held, cap, kids[i], "0.2.0 or older");
            }
        }
        zk_names_free(kids, nkids);
    }
    stage_held_leases(z, mem, nmem, held, cap);
    snprintf(path, sizeof(path), "/leafd/%s/primary", name);
    kids = NULL, nkids = 0;
    if (zk_session_children(&z->session, path, &kids, &nkids) == LEAF_OK) {
        for (int i = 0; i < nkids; i++) {
            char data[256], id[64] = "";
            size_t len = 0;
            char one[600];
            snprintf(one, sizeof(one), "%s/%s", path, kids[i]);
            if (zk_session_get(&z->session, one, data, sizeof(data) - 1, &len) != LEAF_OK) {
                continue;
            }
            data[len] = '\0';
            const char *h = strstr(data, "http=");
            if (h == NULL || sscanf(h + 5, "%63[0-9.:]", id) != 1) {
                continue;
            }
            int known = 0;
            for (int j = 0; ms != NULL && j < nmem && !known; j++) {
                known = strcmp(ms[j].http, id) == 0;
            }
            if (!known) {
                held_add(held, cap, id, "0.2.0 or older, in the sequence line");
            }
        }
        zk_names_free(kids, nkids);
    }
    free(ms);
    zk_names_free(mem, nmem);
    return 0;
}

/* Walks both trees in the stage; -2 with why when a znode is not leafd's. */
static long stage_walk(struct node_zk *z, int closed, char *why, size_t cap) {
    char roots[2][300];
    snprintf(roots[0], sizeof(roots[0]), "/snowflake/%s", z->cfg->name);
    snprintf(roots[1], sizeof(roots[1]), "/leafd/%s", z->cfg->name);
    long total = 0;
    for (int i = 0; i < 2; i++) {
        long n = zk_session_acl_walk(&z->session, roots[i], closed, why, cap);
        if (n < 0) {
            return n;
        }
        total += n;
    }
    return total;
}

static void held_set(struct node_zk *z, const char *held) {
    pthread_mutex_lock(&z->mu);
    int changed = strcmp(z->held_back, held) != 0;
    snprintf(z->held_back, sizeof(z->held_back), "%s", held);
    pthread_mutex_unlock(&z->mu);
    if (changed && held[0] != '\0') {
        log_warn("zk",
                 "leafd.zk.auth: the cluster's trees stay open (as before the credentials) "
                 "until every live node authenticates and runs %s or later; held back by: %s",
                 NODE_ZK_STAGED_SINCE, held);
    }
}

/*
 * Keeper thread (or start): closes the trees once no live node holds them
 * back. LEAF_EINVAL when a znode refuses closing (logged once per reason).
 */
static leaf_status_t stage_round(struct node_zk *z) {
    struct zk_session *s = &z->session;
    char root[300], hold[320], held[512], why[1024];
    snprintf(root, sizeof(root), "/leafd/%s", z->cfg->name);
    snprintf(hold, sizeof(hold), "/leafd/%s/acl", z->cfg->name);
    struct zk_stat st;
    int held_open = zk_session_stat(s, hold, &st) == LEAF_OK;
    int closed = zk_session_acl_root_closed(s, root);
    if (closed < 0) {
        return LEAF_OK;
    }
    if (closed) {
        if (!zk_session_acl_is_closed(s)) {
            log_info("zk", "the cluster's trees are closed (leafd.zk.auth): new znodes closed too");
        }
        zk_session_acl_set_closed(s, 1);
        held_set(z, "");
        return LEAF_OK;
    }
    if (zk_session_acl_is_closed(s)) {
        log_warn("zk", "the cluster's trees were reopened%s: new znodes are created open",
                 held_open ? " (leafctl acl open)" : "");
        zk_session_acl_set_closed(s, 0);
    }
    if (held_open) {
        held_set(z,
                 "held open by an operator: /leafd/{name}/acl exists (leafctl acl close ends it)");
        return LEAF_OK;
    }
    if (stage_held_back(z, held, sizeof(held)) != 0) {
        return LEAF_OK;
    }
    if (held[0] != '\0') {
        held_set(z, held);
        return LEAF_OK;
    }
    int64_t t0 = clock_mono_ms();
    long n = stage_walk(z, 1, why, sizeof(why));
    if (n == -2) {
        snprintf(held, sizeof(held), "closing refused: %.480s", why);
        if (strcmp(held, z->held_back) != 0) {
            log_error("zk", "closing the cluster's trees stopped: %s", why);
        }
        held_set(z, held);
        return LEAF_EINVAL;
    }
    if (n >= 0) {
        zk_session_acl_set_closed(s, 1);
        held_set(z, "");
        log_info(
            "zk",
            "closed %ld znode(s) created open under /snowflake/%s and /leafd/%s (leafd.zk.auth: "
            "all rights to its identity, read to anyone, users unreadable) in %" PRId64 " ms",
            n, z->cfg->name, z->cfg->name, clock_mono_ms() - t0);
    }
    return LEAF_OK;
}

static void *keeper_main(void *arg) {
    struct node_zk *z = arg;
    pthread_mutex_lock(&z->mu);
    while (!z->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += NODE_ZK_KEEP_MS / 1000;
        pthread_cond_timedwait(&z->cv, &z->mu, &until);
        if (z->stop) {
            break;
        }
        pthread_mutex_unlock(&z->mu);
        if (zk_session_state(&z->session) == ZK_STATE_CONNECTED) {
            member_ensure(z);
            if (z->cfg->zk_auth[0] != '\0') {
                (void)stage_round(z); /* a refusal is logged and named in /ready */
            }
        }
        pthread_mutex_lock(&z->mu);
    }
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

/*
 * Start: the shared parents stay open to other clusters, a node without the
 * cluster's credentials is refused by name, a squatted znode is reset or
 * refused, and the trees are closed at once when nothing holds them back.
 */
static leaf_status_t node_zk_start_checks(struct node_zk *z) {
    const struct leaf_config *cfg = z->cfg;
    struct zk_session *s = &z->session;
    char why[1024], acl[512], roots[2][300];
    const char *parents[2] = {"/snowflake", "/leafd"};
    snprintf(roots[0], sizeof(roots[0]), "/snowflake/%s", cfg->name);
    snprintf(roots[1], sizeof(roots[1]), "/leafd/%s", cfg->name);
    for (int i = 0; i < 2; i++) {
        long r = zk_session_acl_parent(s, parents[i], roots[i], why, sizeof(why));
        if (r == -2) {
            log_error("zk", "%s", why);
            return LEAF_EINVAL;
        }
        if (r == 1) {
            log_info("zk",
                     "reopened the shared parent %s to other clusters (an older leafd had "
                     "closed it)",
                     parents[i]);
        }
        if (cfg->zk_auth[0] == '\0' &&
            zk_session_acl_world_writes(s, roots[i], acl, sizeof(acl)) == 0) {
            log_error("zk",
                      "the cluster's tree %s is closed with ZooKeeper credentials (ACL %s): set "
                      "leafd.zk.auth to the cluster's digest:<user>:<password>",
                      roots[i], acl);
            return LEAF_EINVAL;
        }
    }
    if (cfg->zk_auth[0] == '\0') {
        return LEAF_OK;
    }
    int closed = zk_session_acl_root_closed(s, roots[1]);
    zk_session_acl_set_closed(s, closed == 1);
    long n = stage_walk(z, closed == 1, why, sizeof(why));
    if (n == -2) {
        log_error("zk", "%s", why);
        return LEAF_EINVAL;
    }
    if (n > 0) {
        log_info("zk", "reset the ACL of %ld znode(s) that another identity could write", n);
    }
    return LEAF_OK;
}

leaf_status_t node_zk_open(struct node_zk *z, const struct leaf_config *cfg, uv_loop_t *loop) {
    if (cfg->zk_address[0] == '\0') {
        return LEAF_OK;
    }
    z->cfg = cfg;
    pthread_mutex_init(&z->mu, NULL);
    pthread_cond_init(&z->cv, NULL);
    if (uv_async_init(loop, &z->async, node_zk_on_async) != 0) {
        log_error("zk", "uv_async_init(ZooKeeper session) failed");
        return LEAF_ERR;
    }
    z->async.data = z;
    /* The control loop ends with the signals, not with the session. */
    uv_unref((uv_handle_t *)&z->async);
    if (zk_session_open_adopt(&z->session, cfg->zk_address, (int)cfg->zk_session_timeout_ms,
                              node_zk_notify, &z->async,
                              z->adopt.id != 0 ? &z->adopt : NULL) != LEAF_OK) {
        return LEAF_ERR; /* the async is closed with the control loop's handles */
    }
    z->open = 1;
    if (zk_session_authenticate(&z->session, cfg->zk_auth) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    if (cfg->name[0] == '\0' || member_init(z) != LEAF_OK) {
        return LEAF_OK;
    }
    /* With the credentials the trees are checked before anything is created
     * (leafd waited for that before 1.0 too); without them only a moment:
     * a start with ZooKeeper down is not held up, and the keeper registers
     * the member once ZooKeeper answers. */
    int wait_ms = cfg->zk_auth[0] != '\0' ? (int)cfg->zk_session_timeout_ms : NODE_ZK_START_WAIT_MS;
    if (zk_session_wait_connected(&z->session, wait_ms) == LEAF_OK) {
        if (node_zk_start_checks(z) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        member_ensure(z);
        if (cfg->zk_auth[0] != '\0' && stage_round(z) != LEAF_OK) {
            return LEAF_EINVAL;
        }
    } else if (cfg->zk_auth[0] != '\0') {
        log_warn("zk", "ZooKeeper unreachable at start: the cluster's trees are checked once it "
                       "answers");
    }
    z->keeper_on = pthread_create(&z->keeper, NULL, keeper_main, z) == 0;
    if (!z->keeper_on) {
        log_error("zk", "pthread_create(ZooKeeper keeper) failed: %s", strerror(errno));
        return LEAF_ERR;
    }
    return LEAF_OK;
}

struct zk_session *node_zk_session(struct node_zk *z) {
    return z->open ? &z->session : NULL;
}

const char *node_zk_held_back(struct node_zk *z, char *buf, size_t cap) {
    buf[0] = '\0';
    if (z->keeper_on) {
        pthread_mutex_lock(&z->mu);
        snprintf(buf, cap, "%s", z->held_back);
        pthread_mutex_unlock(&z->mu);
    }
    return buf;
}

/* ---- leafd --zk-acl status|open|close ------------------------------------ */

static void acl_cli_notify(void *arg) {
    (void)arg; /* a one-shot command: nothing waits for events */
}

static int acl_cli_status(struct node_zk *z, const char *root, const char *hold) {
    char held[512];
    struct zk_stat st;
    int closed = zk_session_acl_root_closed(&z->session, root);
    int held_open = zk_session_stat(&z->session, hold, &st) == LEAF_OK;
    if (closed < 0 || stage_held_back(z, held, sizeof(held)) != 0) {
        fprintf(stderr, "leafd: cannot read the cluster's trees in ZooKeeper\n");
        return 1;
    }
    /* Closed trees hold nothing back: the live nodes that cannot see them are locked out. */
    if (closed) {
        printf("trees: closed%s\n",
               held_open ? ", though the hold asks them open (leafd --zk-acl open reopens them)"
                         : "");
        printf("locked out: %s\n", held[0] ? held : "nobody");
    } else {
        printf("trees: open%s\n", held_open ? ", held open (leafd --zk-acl close ends it)" : "");
        printf("held back by: %s\n",
               held[0]     ? held
               : held_open ? "the hold only"
                           : "nobody (a live node with leafd.zk.auth closes them within 3 s)");
    }
    char dir[320];
    char **mem = NULL;
    int nmem = 0;
    snprintf(dir, sizeof(dir), "/leafd/%s/members", z->cfg->name);
    if (zk_session_children(&z->session, dir, &mem, &nmem) == LEAF_OK) {
        for (int i = 0; i < nmem; i++) {
            struct zk_member m;
            if (member_get(z, dir, mem[i], &m)) {
                /* The HTTP address only where it is not the identity's. */
                int same = strcmp(m.http, mem[i]) == 0;
                printf("member %s version %s auth %s%s%s\n", mem[i], m.version,
                       m.auth ? "yes" : "no", same ? "" : " http ", same ? "" : m.http);
            }
        }
        zk_names_free(mem, nmem);
    }
    return 0;
}

static int acl_cli_open(struct node_zk *z, const char *hold) {
    char why[1024];
    leaf_status_t st = zk_session_create(&z->session, hold, "open", 4, ZK_MODE_PERSISTENT, NULL, 0);
    if (st != LEAF_OK && st != LEAF_EEXIST) {
        fprintf(stderr, "leafd: cannot create %s: the trees stay as they are\n", hold);
        return 1;
    }
    long n = stage_walk(z, ZK_ACL_STAGE_REOPEN, why, sizeof(why));
    if (n < 0) {
        fprintf(stderr, "leafd: reopening stopped: %s\n", n == -2 ? why : "ZooKeeper failed");
        return 1;
    }
    printf("reopened %ld znode(s) under /snowflake/%s and /leafd/%s; held open until "
           "`leafd --zk-acl close` (nodes of an older release may now run beside this one)\n",
           n, z->cfg->name, z->cfg->name);
    return 0;
}

static int acl_cli_close(struct node_zk *z, const char *hold) {
    char held[512], why[1024];
    if (stage_held_back(z, held, sizeof(held)) != 0) {
        fprintf(stderr, "leafd: cannot read the cluster's members in ZooKeeper\n");
        return 1;
    }
    if (held[0] != '\0') {
        fprintf(stderr,
                "leafd: refused: closing now would lock out %s; give every node leafd.zk.auth "
                "and leafd 1.0 or later, then run this again\n",
                held);
        return 1;
    }
    leaf_status_t st = zk_session_delete(&z->session, hold, -1);
    if (st != LEAF_OK && st != LEAF_ENOTFOUND) {
        fprintf(stderr, "leafd: cannot delete %s\n", hold);
        return 1;
    }
    long n = stage_walk(z, ZK_ACL_STAGE_CLOSED, why, sizeof(why));
    if (n < 0) {
        fprintf(stderr, "leafd: closing stopped: %s\n", n == -2 ? why : "ZooKeeper failed");
        return 1;
    }
    printf("closed %ld znode(s) under /snowflake/%s and /leafd/%s\n", n, z->cfg->name,
           z->cfg->name);
    return 0;
}

int node_zk_acl_main(const struct leaf_config *cfg, const char *verb) {
    static struct node_zk z; /* large (the session); one per process */
    z.cfg = cfg;
    int known =
        strcmp(verb, "status") == 0 || strcmp(verb, "open") == 0 || strcmp(verb, "close") == 0;
    if (!known) {
        fprintf(stderr, "leafd: --zk-acl: unknown stage '%s': give status, open or close\n", verb);
        return 2;
    }
    if (cfg->zk_address[0] == '\0' || cfg->name[0] == '\0') {
        fprintf(stderr, "leafd: --zk-acl status|open|close needs leaf.snowflake.zk.address and "
                        "leaf.name\n");
        return 2;
    }
    if (strcmp(verb, "status") != 0 && cfg->zk_auth[0] == '\0') {
        fprintf(stderr, "leafd: --zk-acl %s needs leafd.zk.auth (the cluster's credentials)\n",
                verb);
        return 2;
    }
    if (zk_session_open(&z.session, cfg->zk_address, (int)cfg->zk_session_timeout_ms,
                        acl_cli_notify, NULL) != LEAF_OK ||
        zk_session_authenticate(&z.session, cfg->zk_auth) != LEAF_OK ||
        zk_session_wait_connected(&z.session, (int)cfg->zk_session_timeout_ms) != LEAF_OK) {
        fprintf(stderr,
                "leafd: cannot reach ZooKeeper at %s: start the ensemble or correct "
                "leaf.snowflake.zk.address (and leafd.zk.auth)\n",
                cfg->zk_address);
        return 1;
    }
    char root[300], hold[320];
    snprintf(root, sizeof(root), "/leafd/%s", cfg->name);
    snprintf(hold, sizeof(hold), "%s/acl", root);
    int rc = strcmp(verb, "status") == 0 ? acl_cli_status(&z, root, hold)
             : strcmp(verb, "open") == 0 ? acl_cli_open(&z, hold)
                                         : acl_cli_close(&z, hold);
    zk_session_close(&z.session);
    return rc;
}

void node_zk_close(struct node_zk *z) {
    if (z->keeper_on) {
        pthread_mutex_lock(&z->mu);
        z->stop = 1;
        pthread_cond_signal(&z->cv);
        pthread_mutex_unlock(&z->mu);
        pthread_join(z->keeper, NULL);
        z->keeper_on = 0;
    }
    if (!z->open) {
        return;
    }
    zk_session_close(&z->session);
    z->open = 0;
}
