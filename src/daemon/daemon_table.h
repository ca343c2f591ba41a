#ifndef LEAF_DAEMON_TABLE_H
#define LEAF_DAEMON_TABLE_H

/*
 * The walk over the daemon's table of objects (docs/design.md, "The code:
 * floors, rooms and names"): every object the process builds is one row with
 * one signature, built forward and released backward, as nginx's cycle runs
 * its modules' hooks. Pure: no libuv, ZooKeeper or MySQL header, so
 * tests/unit/test_daemon_table.c drives it with fake rows.
 *
 * Ownership: the rows are constant tables; the walk runs on the main thread
 * (create, start) and on the control thread (stop, free), never on both at once.
 */
#include <stddef.h>

#include "status.h"

struct daemon;

/* One object of the process. Any column may be NULL: that step has nothing to do. */
struct daemon_row {
    const char *name;
    /* Builds the object (allocations, handles on the control loop); logs its own error. A
     * create that fails part-way releases its own half: the walk frees only the rows before. */
    leaf_status_t (*create)(struct daemon *d);
    /* Starts its work once every row is built and the listen ports are known to be free. */
    leaf_status_t (*start)(struct daemon *d);
    /* Undoes start; a no-op on an object that never started, and it undoes a start that
     * failed part-way. */
    void (*stop)(struct daemon *d);
    /* Releases what create built; a no-op on an object create never built. */
    void (*free)(struct daemon *d);
};

/*
 * Builds rows 0..n-1 in order. A failure at row k calls failed (unless NULL: while row k's
 * error is still the last one logged), frees exactly rows k-1..0 (in that order) and returns
 * row k's status; LEAF_OK when every row was built.
 */
leaf_status_t daemon_table_create(const struct daemon_row *rows, size_t n, struct daemon *d,
                                  void (*failed)(struct daemon *d));

/*
 * Starts rows 0..n-1 in order. A failure at row k stops rows k..0 (the one that failed too: it
 * may have started part-way) and returns its status.
 */
leaf_status_t daemon_table_start(const struct daemon_row *rows, size_t n, struct daemon *d);

/* Stops rows n-1..0. */
void daemon_table_stop(const struct daemon_row *rows, size_t n, struct daemon *d);

/* Frees rows n-1..0. */
void daemon_table_free(const struct daemon_row *rows, size_t n, struct daemon *d);

#endif
