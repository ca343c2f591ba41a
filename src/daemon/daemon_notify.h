#ifndef LEAF_DAEMON_NOTIFY_H
#define LEAF_DAEMON_NOTIFY_H

/*
 * Telling systemd (Type=notify, conf/leafd.service) how the node is: READY=1
 * the first time /ready would answer 200, a STATUS= line with the reasons
 * whenever readiness changes (systemctl status shows it), and STOPPING=1 at
 * a drain. A timer on the control loop evaluates readiness (src/door/door_ready.h)
 * four times a second and sends only changes. Without $NOTIFY_SOCKET
 * nothing starts.
 *
 * Ownership: struct daemon (daemon.h) embeds it; control loop thread only.
 */
#include <uv.h>

struct door_ctx;

struct daemon_notify {
    uv_timer_t timer;
    const struct door_ctx *ctx;
    int begun;      /* the timer was set up ($NOTIFY_SOCKET) */
    int on;         /* the timer runs */
    int ready_sent; /* READY=1 went out */
    int mainpid;    /* READY=1 says MAINPID= too (the new process of an in-place upgrade) */
    char last[512]; /* the STATUS= text last sent */
};

/* Sends the first state at once and starts the timer; a no-op without $NOTIFY_SOCKET. */
void daemon_notify_start(struct daemon_notify *n, uv_loop_t *loop, const struct door_ctx *ctx);

/* The same for the new process of an in-place upgrade: READY=1 comes with MAINPID=<pid>. */
void daemon_notify_start_main(struct daemon_notify *n, uv_loop_t *loop, const struct door_ctx *ctx);

/* An in-place upgrade's drain began: the timer stops, no STOPPING=1 (the service goes on). */
void daemon_notify_handover(struct daemon_notify *n);

/* That drain called off (the new process failed before the hand-over): the timer runs again. */
void daemon_notify_resume(struct daemon_notify *n);

/* The drain began: STOPPING=1 and a STATUS= saying so; the timer stops. */
void daemon_notify_stopping(struct daemon_notify *n);

#endif
