#ifndef LEAF_DAEMON_H
#define LEAF_DAEMON_H

/*
 * The daemon: the process's one state machine (docs/design.md, "The code:
 * floors, rooms and names"). src/main.c reads the command line and the
 * configuration, then hands the process to daemon_main():
 *
 *   STARTING ---> SERVING ---> STOPPING ---> STOPPED
 *       |            |  ^          ^
 *       |            v  |          |
 *       |       HANDING_OVER ------+   (an in-place upgrade's drain: docs/UPGRADING.md)
 *       +------------------------->+   (a signal while starting)
 *
 * STARTING builds every object from one table (daemon_objects.c) and starts it;
 * SERVING runs the control loop; HANDING_OVER drains for the new process of an
 * in-place upgrade, and goes back to SERVING should that process end first
 * (daemon_resume); STOPPING drains and stops the services backward. The
 * hand-over's mechanics are daemon_handover*.c, the signals daemon_signals.c,
 * systemd's notification daemon_notify.c.
 *
 * Ownership: struct daemon (daemon_state.h).
 */
#include "daemon_state.h"

/* Before anything else in main(): an empty daemon that runs with argv (an upgrade reruns it). */
void daemon_init(struct daemon *d, char **argv);

/*
 * Runs the process with d->cfg loaded: starts, serves until a signal or a hand-over, and
 * stops. Returns the exit code (an upgrade that handed over exits 0 inside).
 */
int daemon_main(struct daemon *d);

#endif
