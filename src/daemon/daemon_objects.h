#ifndef LEAF_DAEMON_OBJECTS_H
#define LEAF_DAEMON_OBJECTS_H

/*
 * Every object the process builds, one row of one table (daemon_objects.c):
 * built and started forward, stopped and freed backward (daemon_table.h).
 * Main thread while starting, then the control thread.
 */
#include <stdint.h>

#include "daemon_state.h"

/* A failure calls failed (its error still the last logged), then unwinds what was built. */
leaf_status_t daemon_objects_create(struct daemon *d, void (*failed)(struct daemon *d));
/* A failure at row k stops rows k..0. */
leaf_status_t daemon_objects_start(struct daemon *d);
void daemon_objects_stop(struct daemon *d);
/* Frees every row, backward; each row's free is a no-op on what is not built. */
void daemon_objects_free(struct daemon *d);

/* The TLS listeners' certificate and key load (--check-config, an upgrade's new process). */
leaf_status_t daemon_objects_tls_check(const struct leaf_config *cfg);

/* Open connections of a protocol, plain and TLS listeners together. */
uint64_t daemon_objects_connections(void *arg, enum door_proto proto);

#endif
