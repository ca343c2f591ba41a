#ifndef LEAF_NODE_SURVEY_H
#define LEAF_NODE_SURVEY_H

/*
 * The cluster as the /cluster page shows it: every live node registered in
 * ZooKeeper (the EPHEMERAL nodes under /snowflake/{leaf.name}/leaf_temporary
 * and the sequence election line under /leafd/{leaf.name}/primary), each
 * asked over HTTP for its time (the clock offset from this node) and its
 * /ready (worker ID, modes, version, readiness, age of its last report).
 *
 * The survey runs on its own thread with its own ZooKeeper session, started
 * when the page is first asked for, and repeats every CLUSTER_SURVEY_EVERY_MS
 * while the page was asked for in the last CLUSTER_SURVEY_IDLE_MS; then it
 * sleeps until the next request. A page shows the latest snapshot and its
 * age, never waiting for the survey.
 *
 * Thread use: node_survey_snapshot() from any thread; the snapshot is
 * guarded by the survey's lock. Created and freed by main().
 */
#include <stdint.h>

#include "config.h"
#include "status.h"

#define CLUSTER_MAX_PEERS 1024
#define CLUSTER_SURVEY_EVERY_MS 5000
#define CLUSTER_SURVEY_IDLE_MS 60000

struct cluster_peer {
    char id[64];   /* ip:port as registered (the address peers are asked at) */
    char name[64]; /* its named identity (leafd.snowflake.identity, its /ready), "" none */
    int temporary; /* listed under leaf_temporary */
    int in_line;   /* in the sequence election line */
    int reachable; /* answered both questions */
    char error[96];
    int64_t offset_ms; /* its clock minus ours, at the midpoint of the exchange */
    int64_t rtt_ms;
    int worker_id; /* -1: none or unknown */
    int ready;
    int snowflake, segment, sequence;
    char role[16];         /* sequence role, "" when off */
    char version[24];      /* "" when the node does not say */
    int64_t report_age_ms; /* its last report to ZooKeeper, by its own count; -1 unknown */
    int64_t lead_ms;       /* how far its snowflake IDs run ahead of its clock; -1 unknown */
    int64_t sequences;     /* the sequences it serves (its /ready); -1 unknown */
};

struct cluster_snapshot {
    int64_t taken_ms; /* wall clock of the survey; 0 = none yet */
    int64_t took_ms;  /* how long it took */
    char error[160];  /* why the survey could not list the nodes ("" = fine) */
    int npeers;
    struct cluster_peer peers[CLUSTER_MAX_PEERS];
};

struct node_survey;
struct zk_session;

/* zk: the process's ZooKeeper session (NULL without ZooKeeper); free the
 * survey (which joins its thread) before closing the session. */
leaf_status_t node_survey_create(struct node_survey **out, const struct leaf_config *cfg,
                                 struct zk_session *zk);

/*
 * Copies the latest snapshot (any thread) and asks for fresh ones for the
 * next minute. Without ZooKeeper the snapshot's error says so.
 */
void node_survey_snapshot(struct node_survey *s, struct cluster_snapshot *out);

/* Stops the thread and closes its session. */
void node_survey_free(struct node_survey *s);

#endif
