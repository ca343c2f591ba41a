#include "daemon_notify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "door_ready.h"
#include "log.h"
#include "notify.h"

#define DAEMON_NOTIFY_EVERY_MS 250

/* Sends one message; a failure is logged once per kind of message, never repeated per tick. */
static void daemon_notify_send(const char *msg) {
    static int failed_logged;
    if (notify_send(msg) != LEAF_OK && !failed_logged) {
        failed_logged = 1;
        log_warn("main", "sd_notify(%s) to NOTIFY_SOCKET=%s failed: %s", msg,
                 getenv("NOTIFY_SOCKET"), strerror(errno));
    }
}

static void daemon_notify_tick(uv_timer_t *t) {
    struct daemon_notify *n = t->data;
    struct door_ready r;
    char status[sizeof(n->last)], msg[sizeof(n->last) + 64];
    door_ready_eval(n->ctx, &r);
    door_ready_text(&r, status, sizeof(status));
    if (r.all && !n->ready_sent) {
        n->ready_sent = 1;
        if (n->mainpid) {
            snprintf(msg, sizeof(msg), "MAINPID=%ld\nREADY=1\nSTATUS=%s", (long)getpid(), status);
        } else {
            snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", status);
        }
        log_info("main", "told systemd: READY=1");
    } else if (strcmp(status, n->last) != 0) {
        snprintf(msg, sizeof(msg), "STATUS=%s", status);
    } else {
        return;
    }
    snprintf(n->last, sizeof(n->last), "%s", status);
    daemon_notify_send(msg);
}

static void daemon_notify_begin(struct daemon_notify *n, uv_loop_t *loop) {
    if (!notify_enabled()) {
        return;
    }
    uv_timer_init(loop, &n->timer);
    n->timer.data = n;
    n->begun = 1;
    n->on = 1;
    daemon_notify_tick(&n->timer);
    uv_timer_start(&n->timer, daemon_notify_tick, DAEMON_NOTIFY_EVERY_MS, DAEMON_NOTIFY_EVERY_MS);
}

void daemon_notify_start(struct daemon_notify *n, uv_loop_t *loop, const struct door_ctx *ctx) {
    memset(n, 0, sizeof(*n));
    n->ctx = ctx;
    daemon_notify_begin(n, loop);
}

void daemon_notify_start_main(struct daemon_notify *n, uv_loop_t *loop,
                              const struct door_ctx *ctx) {
    memset(n, 0, sizeof(*n));
    n->ctx = ctx;
    n->mainpid = 1;
    daemon_notify_begin(n, loop);
}

void daemon_notify_handover(struct daemon_notify *n) {
    if (!n->on) {
        return;
    }
    n->on = 0;
    uv_timer_stop(&n->timer);
    daemon_notify_send("STATUS=in-place upgrade: handing over to the new process");
}

void daemon_notify_resume(struct daemon_notify *n) {
    if (!n->begun || n->on) {
        return;
    }
    n->on = 1;
    n->last[0] = '\0'; /* the next tick says the status again, in place of the hand-over's */
    uv_timer_start(&n->timer, daemon_notify_tick, 0, DAEMON_NOTIFY_EVERY_MS);
}

void daemon_notify_stopping(struct daemon_notify *n) {
    if (!n->on) {
        return;
    }
    n->on = 0;
    uv_timer_stop(&n->timer);
    daemon_notify_send("STOPPING=1\nSTATUS=draining in-flight requests, then stopping");
}
