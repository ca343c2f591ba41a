/*
 * The cluster survey: see node_survey.h. The thread owns its working
 * snapshot and reads ZooKeeper with the process's one session's
 * synchronous calls (they block this thread only); `mu` guards the
 * published snapshot, the poke time and `stop`.
 * Layer: the node (src/node), beside the services; over zk/zk_peer.c and
 * zk/zk_session.c.
 */
#include "node_survey.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "validate.h"
#include "zk_peer.h"
#include "zk_record.h"
#include "zk_session.h"

#define SURVEY_HTTP_TIMEOUT_MS 700
#define SURVEY_CONNECT_WAIT_MS 3000

struct node_survey {
    const struct leaf_config *cfg;
    pthread_t thread;
    int started; /* the thread runs (set once, under mu) */

    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    int64_t poked_ms; /* monotonic: the page was last asked for */
    struct cluster_snapshot *pub;

    struct zk_session *zk; /* the process's one session (node_zk), NULL without ZooKeeper */

    /* survey thread only */
    struct cluster_snapshot *work;
    struct zk_peer_answer answer;
};

/* The peer for identity id ("ip:port"), added when new; NULL when the table is full. */
static struct cluster_peer *survey_peer(struct cluster_snapshot *w, const char *id) {
    for (int i = 0; i < w->npeers; i++) {
        if (strcmp(w->peers[i].id, id) == 0) {
            return &w->peers[i];
        }
    }
    if (w->npeers == CLUSTER_MAX_PEERS) {
        return NULL;
    }
    struct cluster_peer *p = &w->peers[w->npeers++];
    memset(p, 0, sizeof(*p));
    snprintf(p->id, sizeof(p->id), "%s", id);
    p->worker_id = -1;
    p->report_age_ms = -1;
    p->lead_ms = -1;
    p->sequences = -1;
    return p;
}

/* The session is connected, or becomes so soon (the control thread reconnects it). */
static leaf_status_t survey_zk(struct node_survey *s) {
    return zk_session_wait_connected(s->zk, SURVEY_CONNECT_WAIT_MS);
}

/* Children of path, each passed to fn; a missing path is an empty list. */
static void survey_list(struct node_survey *s, const char *path,
                        void (*fn)(struct node_survey *s, const char *dir, const char *name)) {
    char **names = NULL;
    int n = 0;
    if (zk_session_children(s->zk, path, &names, &n) != LEAF_OK) {
        return;
    }
    for (int i = 0; i < n; i++) {
        fn(s, path, names[i]);
    }
    zk_names_free(names, n);
}

/* A leaf_temporary child: ip:port, or a named identity whose data says its ip and port. */
static void survey_temporary(struct node_survey *s, const char *dir, const char *name) {
    char id[64], path[512], data[256];
    size_t len = 0;
    struct zk_node_data d;
    snprintf(id, sizeof(id), "%s", name);
    if (strchr(name, ':') == NULL) {
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (zk_session_get(s->zk, path, data, sizeof(data), &len) == LEAF_OK &&
            zk_record_parse_node(data, len, &d) == LEAF_OK && d.ip[0] != '\0' && d.port > 0) {
            snprintf(id, sizeof(id), "%.40s:%d", d.ip, d.port);
        }
    }
    struct cluster_peer *p = survey_peer(s->work, id);
    if (p != NULL) {
        p->temporary = 1;
        if (strchr(name, ':') == NULL) { /* a named identity: /cluster shows the name */
            snprintf(p->name, sizeof(p->name), "%s", name);
        }
    }
}

/* An election node holds "http=ip:port resp=ip:port". */
static void survey_line(struct node_survey *s, const char *dir, const char *name) {
    char path[512], data[256], id[64];
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (zk_session_get(s->zk, path, data, sizeof(data) - 1, &len) != LEAF_OK) {
        return;
    }
    data[len] = '\0';
    const char *h = strstr(data, "http=");
    if (h == NULL || sscanf(h + 5, "%63[0-9.:]", id) != 1) {
        return;
    }
    struct cluster_peer *p = survey_peer(s->work, id);
    if (p != NULL) {
        p->in_line = 1;
    }
}

static const cJSON *json_at(const cJSON *o, const char *a, const char *b) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    return b != NULL ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

static int json_true(const cJSON *o, const char *a, const char *b) {
    return cJSON_IsTrue(json_at(o, a, b));
}

/* What a node's /ready says about it. */
static void survey_ready(struct cluster_peer *p, const char *body) {
    cJSON *r = cJSON_Parse(body);
    if (r == NULL) {
        snprintf(p->error, sizeof(p->error), "/ready is not JSON");
        return;
    }
    const cJSON *st = json_at(r, "status", NULL);
    p->ready = cJSON_IsString(st) && strcmp(st->valuestring, "ready") == 0;
    p->snowflake = json_true(r, "snowflake", "enabled");
    p->segment = json_true(r, "segment", "enabled");
    p->sequence = json_true(r, "sequence", "enabled");
    const cJSON *ident = json_at(r, "snowflake", "identity");
    if (cJSON_IsString(ident) && strchr(ident->valuestring, ':') == NULL) {
        snprintf(p->name, sizeof(p->name), "%s", ident->valuestring);
    }
    const cJSON *w = json_at(r, "snowflake", "worker_id");
    if (cJSON_IsNumber(w)) {
        p->worker_id = w->valueint;
    }
    const cJSON *lead = json_at(r, "snowflake", "clock_lead_ms");
    if (cJSON_IsNumber(lead)) {
        p->lead_ms = (int64_t)lead->valuedouble;
    }
    const cJSON *zk = json_at(r, "snowflake", "zookeeper");
    const cJSON *age = cJSON_GetObjectItemCaseSensitive(zk, "last_report_age_ms");
    if (cJSON_IsNumber(age)) {
        p->report_age_ms = (int64_t)age->valuedouble;
    }
    const cJSON *nseq = json_at(r, "sequence", "sequences");
    p->sequences = cJSON_IsNumber(nseq) ? (int64_t)nseq->valuedouble : -1;
    const cJSON *role = json_at(r, "sequence", "role");
    if (cJSON_IsString(role)) {
        snprintf(p->role, sizeof(p->role), "%s", role->valuestring);
    }
    const cJSON *v = json_at(r, "version", NULL);
    if (cJSON_IsString(v)) {
        snprintf(p->version, sizeof(p->version), "%s", v->valuestring);
    }
    cJSON_Delete(r);
}

/* Asks one node for its time and its /ready. */
static void survey_ask(struct node_survey *s, struct cluster_peer *p) {
    char ip[64];
    int port = 0;
    /* Only what is an IPv4 address and a port is asked: a name in ZooKeeper is not a target. */
    if (validate_ipv4_port(p->id, strlen(p->id), ip, &port) != LEAF_OK) {
        snprintf(p->error, sizeof(p->error), "not an ip:port");
        return;
    }
    struct zk_peer_answer *a = &s->answer;
    if (zk_peer_get(ip, port, "/api/snowflake/time", SURVEY_HTTP_TIMEOUT_MS, a) != LEAF_OK) {
        snprintf(p->error, sizeof(p->error), "%.90s", a->error);
        return;
    }
    const char *ts = strstr(a->body, "\"timestamp\":");
    if (a->status != 200 || ts == NULL) {
        snprintf(p->error, sizeof(p->error), "GET /api/snowflake/time: status %d", a->status);
        return;
    }
    int64_t peer = strtoll(ts + 12, NULL, 10);
    p->rtt_ms = a->recv_ms - a->sent_ms;
    p->offset_ms = peer - (a->sent_ms + a->recv_ms) / 2;
    if (zk_peer_get(ip, port, "/ready", SURVEY_HTTP_TIMEOUT_MS, a) != LEAF_OK) {
        snprintf(p->error, sizeof(p->error), "/ready: %.80s", a->error);
        return;
    }
    p->reachable = 1;
    survey_ready(p, a->body);
}

static void survey_once(struct node_survey *s) {
    struct cluster_snapshot *w = s->work;
    int64_t t0 = clock_mono_ms();
    w->npeers = 0;
    w->error[0] = '\0';
    if (survey_zk(s) != LEAF_OK) {
        snprintf(w->error, sizeof(w->error), "ZooKeeper %.100s is not reachable from this node",
                 s->cfg->zk_address);
    } else {
        char path[256];
        snprintf(path, sizeof(path), "/snowflake/%s/leaf_temporary", s->cfg->name);
        survey_list(s, path, survey_temporary);
        snprintf(path, sizeof(path), "/leafd/%s/primary", s->cfg->name);
        survey_list(s, path, survey_line);
        for (int i = 0; i < w->npeers; i++) {
            survey_ask(s, &w->peers[i]);
        }
    }
    w->taken_ms = clock_wall_ms();
    w->took_ms = clock_mono_ms() - t0;
    pthread_mutex_lock(&s->mu);
    struct cluster_snapshot *t = s->pub;
    s->pub = w;
    s->work = t;
    pthread_mutex_unlock(&s->mu);
}

static void *survey_main(void *arg) {
    struct node_survey *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        if (clock_mono_ms() - s->poked_ms > CLUSTER_SURVEY_IDLE_MS) {
            pthread_cond_wait(&s->cv, &s->mu); /* nobody looks: sleep until asked */
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        survey_once(s);
        pthread_mutex_lock(&s->mu);
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_sec += CLUSTER_SURVEY_EVERY_MS / 1000;
        while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &dl) == 0) {
        }
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

leaf_status_t node_survey_create(struct node_survey **out, const struct leaf_config *cfg,
                                 struct zk_session *zk) {
    struct node_survey *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return LEAF_ENOMEM;
    }
    s->pub = calloc(1, sizeof(*s->pub));
    s->work = calloc(1, sizeof(*s->work));
    if (s->pub == NULL || s->work == NULL) {
        free(s->pub);
        free(s->work);
        free(s);
        return LEAF_ENOMEM;
    }
    s->cfg = cfg;
    s->zk = zk;
    s->poked_ms = -CLUSTER_SURVEY_IDLE_MS - 1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (zk == NULL) {
        snprintf(s->pub->error, sizeof(s->pub->error),
                 "no ZooKeeper (leaf.snowflake.zk.address is empty): this node knows no peers");
    }
    *out = s;
    return LEAF_OK;
}

void node_survey_snapshot(struct node_survey *s, struct cluster_snapshot *out) {
    pthread_mutex_lock(&s->mu);
    if (s->zk != NULL && !s->started && !s->stop) {
        int err = pthread_create(&s->thread, NULL, survey_main, s);
        if (err != 0) {
            log_error("node", "pthread_create(cluster survey) failed: %s", strerror(err));
        }
        s->started = err == 0;
    }
    s->poked_ms = clock_mono_ms();
    pthread_cond_signal(&s->cv);
    memcpy(out, s->pub, sizeof(*out));
    pthread_mutex_unlock(&s->mu);
}

void node_survey_free(struct node_survey *s) {
    if (s == NULL) {
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    int started = s->started;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (started) {
        pthread_join(s->thread, NULL);
    }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->pub);
    free(s->work);
    free(s);
}
