#ifndef LEAF_DAEMON_ADOPT_H
#define LEAF_DAEMON_ADOPT_H

/*
 * The new process of an in-place upgrade, the daemon's side (docs/UPGRADING.md,
 * "In place, without a restart"): what the table's lock and ZooKeeper rows run
 * when this process takes over from a previous one (daemon_handover_child.c
 * holds the mechanics). Main thread, before any other thread starts.
 */
#include "daemon_state.h"

/* The lock and the sockets of the previous process, checked against the configuration. */
leaf_status_t daemon_adopt_sockets(struct daemon *d);

/* The pid file names this process; ADOPTED, and the previous process's session taken. */
leaf_status_t daemon_adopt_session(struct daemon *d);

/* Waits (bounded) for ZooKeeper to resume the adopted session; a no-op on a fresh start. */
void daemon_adopt_wait_session(struct daemon *d);

#endif
