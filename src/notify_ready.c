#include "notify_ready.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "door_ready.h"
#include "log.h"
#include "notify.h"

#define NOTIFY_READY_EVERY_MS 250

/* Sends one message; a failure is logged once per kind of message, never repeated per tick. */
static void notify_ready_send(const char *msg) {
    static int failed_logged;
    if (notify_send(msg) != LEAF_OK && !failed_logged) {
        failed_logged = 1;
        log_warn("main", "sd_notify(%s) to NOTIFY_SOCKET=%s failed: %s", msg,
                 getenv("NOTIFY_SOCKET"), strerror(errno));
    }
}

static void notify_ready_tick(uv_timer_t *t) {
    struct notify_ready *n = t->data;
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
    notify_ready_send(msg);
}

static void notify_ready_begin(struct notify_ready *n, uv_loop_t *loop) {
    if (!notify_enabled()) {
        return;
    }
    uv_timer_init(loop, &n->timer);
    n->timer.data = n;
    n->begun = 1;
    n->on = 1;
    notify_ready_tick(&n->timer);
    uv_timer_start(&n->timer, notify_ready_tick, NOTIFY_READY_EVERY_MS, NOTIFY_READY_EVERY_MS);
}

void notify_ready_start(struct notify_ready *n, uv_loop_t *loop, const struct door_ctx *ctx) {
    memset(n, 0, sizeof(*n));
    n->ctx = ctx;
    notify_ready_begin(n, loop);
}

void notify_ready_start_main(struct notify_ready *n, uv_loop_t *loop, const struct door_ctx *ctx) {
    memset(n, 0, sizeof(*n));
    n->ctx = ctx;
    n->mainpid = 1;
    notify_ready_begin(n, loop);
}

void notify_ready_handover(struct notify_ready *n) {
    if (!n->on) {
        return;
    }
    n->on = 0;
    uv_timer_stop(&n->timer);
    notify_ready_send("STATUS=in-place upgrade: handing over to the new process");
}

void notify_ready_resume(struct notify_ready *n) {
    if (!n->begun || n->on) {
        return;
    }
    n->on = 1;
    n->last[0] = '\0'; /* the next tick says the status again, in place of the hand-over's */
    uv_timer_start(&n->timer, notify_ready_tick, 0, NOTIFY_READY_EVERY_MS);
}

void notify_ready_stopping(struct notify_ready *n) {
    if (!n->on) {
        return;
    }
    n->on = 0;
    uv_timer_stop(&n->timer);
    notify_ready_send("STOPPING=1\nSTATUS=draining in-flight requests, then stopping");
}
