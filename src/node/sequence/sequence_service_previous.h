#ifndef LEAF_SEQUENCE_SERVICE_PREVIOUS_H
#define LEAF_SEQUENCE_SERVICE_PREVIOUS_H

/*
 * This node's previous process in the sequence line (docs/cluster.md, "A node that
 * restarts"): the ZooKeeper session the node's election ran on is recorded in
 * {leafd.data.dir}/sequence-session; an election node of that session, found at a
 * start on another session, is the previous process's, which has exited (this
 * process holds the data dir's lock, and an exited process issues nothing). It is
 * deleted at once, its owner node says "released" and, when it was the primary,
 * the lease says "released": the line moves on without waiting for the dead
 * session to time out (before, the node redirected its own clients to itself
 * until then). Private to src/node/sequence; control thread, at start-up
 * (synchronous ZooKeeper calls).
 */
struct sequence_service;

/* Forgets the previous process's place in line (logged), then records this session. */
void sequence_service_previous_forget(struct sequence_service *svc);

/* Records the session a new election node belongs to (a new session after an expiry). */
void sequence_service_previous_record(struct sequence_service *svc);

#endif
