#ifndef LEAF_DAEMON_SIGNALS_H
#define LEAF_DAEMON_SIGNALS_H

/*
 * The process's signals (daemon_signals.c): the raw handlers of start-up and of
 * the stop, which may call no log function, and the control loop's signal
 * handles, whose callbacks are the state machine's (daemon.c).
 */
#include "daemon_state.h"

void daemon_signals_early(void);      /* first thing in main() */
void daemon_signals_log_json(int on); /* leafd.log.format, for the handlers' raw lines */

/* The control loop's handles: SIGTERM and SIGINT to on_stop, SIGHUP, SIGUSR2. */
void daemon_signals_start(struct daemon *d, uv_signal_cb on_stop, uv_signal_cb on_hup,
                          uv_signal_cb on_usr2);
void daemon_signals_stop(struct daemon *d);

void daemon_signals_ignore_stopping(void); /* an upgrade's point of no return */
void daemon_signals_usr2_stopping(void);   /* a stop began: a later SIGUSR2 is logged */
void daemon_signals_drain_bound(int on);   /* the drain's bound (15 s, then exit 1), or off */
int daemon_signals_stop_early(void);       /* SIGTERM/SIGINT while an upgrade's new one started */
int daemon_signals_usr2_early(void);       /* SIGUSR2 before the control loop caught it; clears */

#endif
