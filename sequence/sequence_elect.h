#ifndef LEAF_SEQUENCE_ELECT_H
#define LEAF_SEQUENCE_ELECT_H

/*
 * The election decision of the sequence primary, pure code: the standard
 * ZooKeeper recipe over /leafd/{leaf.name}/primary.
 *
 * Every node with leafd.sequence.enable creates one EPHEMERAL_SEQUENTIAL
 * child there (ZooKeeper appends a 10-digit counter to the name, e.g.
 * "n_0000000012") and lists the children. The child with the lowest counter
 * is the primary. Every other node watches its immediate predecessor (the
 * highest counter below its own), so a death other than the primary's wakes
 * one node, not all of them. When the watch fires the node lists the children
 * again and decides again: the predecessor may have died while a node before
 * it is still alive, and then that one is watched. The glue also watches the
 * primary (`primary` below) to redirect to its successor at once: the
 * primary's death wakes every standby once (docs/cluster.md, "Sequences").
 *
 * Children whose name does not end in 10 digits are not candidates and are
 * skipped. A node whose own child is missing from the list has lost it (its
 * session expired, or someone deleted it): it is not primary, must stop
 * whatever it did as primary, and creates a new child.
 *
 * The counter is a signed 32-bit value on the server; it goes negative only
 * after 2^31 creations under one parent, which this code does not handle
 * (such a name is skipped, or refused as one's own).
 */
#include "status.h"

enum sequence_elect_verdict {
    SEQUENCE_ELECT_PRIMARY = 0, /* mine is the lowest: this node is the primary */
    SEQUENCE_ELECT_WATCH,       /* not primary: watch children[watch] */
    SEQUENCE_ELECT_MISSING,     /* my child is not in the list: re-create it */
};

struct sequence_elect {
    enum sequence_elect_verdict verdict;
    int watch;   /* SEQUENCE_ELECT_WATCH: index into children of the predecessor; else -1 */
    int primary; /* index of the lowest candidate (the primary, to redirect to); -1 when none */
    long long mine_seq; /* the counter of my child */
};

/*
 * The counter at the end of a child name ("n_0000000012" -> 12), or -1 when
 * the name does not end in 10 digits. mine may be a full path
 * ("/leafd/x/primary/n_0000000012", as zoo_create returns it); only the last
 * component counts.
 */
long long sequence_elect_seq(const char *name);

/*
 * Decides from the n children names (as zoo_get_children returns them, in any
 * order) and my own child's name. LEAF_EINVAL when mine has no counter.
 */
leaf_status_t sequence_elect_decide(const char *const *children, int n, const char *mine,
                                    struct sequence_elect *out);

#endif
