/*
 * The process's signals (docs/OPERATIONS.md; docs/UPGRADING.md, "Signals during a
 * hand-over"): the raw handlers of start-up and of the stop, which may call no log
 * function, and the control loop's signal handles, whose callbacks are the
 * state machine's (daemon.c). The raw handlers' flags are the only state here;
 * the control loop's handles are struct daemon's (control thread).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "daemon_handover.h"
#include "daemon_signals.h"

/* The drain is bounded: a client that never finishes cannot hold the exit. */
#define LEAFD_DRAIN_MAX_S 15

/* leafd.log.format = json, for the signal handler (which may call no log function). */
static volatile sig_atomic_t drain_log_json;

static void on_drain_timeout(int signum) {
    /* A signal handler: no formatting, so no time field either. */
    static const char msg[] = "level=error component=main msg=\"drain took longer than 15 s, "
                              "exiting with requests unanswered\"\n";
    static const char json[] = "{\"level\":\"error\",\"component\":\"main\",\"msg\":\"drain "
                               "took longer than 15 s, exiting with requests unanswered\"}\n";
    (void)signum;
    ssize_t rc = drain_log_json ? write(STDERR_FILENO, json, sizeof(json) - 1)
                                : write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)rc;
    _exit(1);
}

void daemon_signals_log_json(int on) {
    drain_log_json = on;
}

void daemon_signals_drain_bound(int on) {
    if (on) {
        signal(SIGALRM, on_drain_timeout);
        alarm(LEAFD_DRAIN_MAX_S);
    } else {
        alarm(0);
        signal(SIGALRM, SIG_DFL);
    }
}

/*
 * SIGUSR2 outside the control loop's handler: before it is installed (start-up)
 * the signal is remembered and the upgrade runs once the process serves; while
 * the process stops (after a hand-over, the new process is the one to upgrade)
 * it is logged and ignored. Signal handlers: no formatting, no log function.
 */
static volatile sig_atomic_t usr2_early;

static void on_usr2_early(int signum) {
    (void)signum;
    usr2_early = 1;
}

int daemon_signals_usr2_early(void) {
    int was = usr2_early;
    usr2_early = 0;
    return was;
}

/*
 * The new process of an in-place upgrade, until the control loop catches its signals
 * (docs/UPGRADING.md, "Signals during a hand-over"): SIGTERM and SIGINT are remembered and the
 * process stops cleanly before it accepts (it takes the session over first, so the previous
 * process's hand-over is not wasted); SIGHUP is ignored (the certificate is loaded at start).
 */
static volatile sig_atomic_t stop_early;

static void on_stop_early(int signum) {
    stop_early = signum;
}

int daemon_signals_stop_early(void) {
    return stop_early;
}

void daemon_signals_early(void) {
    /* First: an upgrade asked for before the control loop runs is remembered, not fatal
     * (SIGUSR2's default action ends the process; systemd sends it to MAINPID, which the
     * previous process of an upgrade names once this one runs). */
    signal(SIGUSR2, on_usr2_early);
    if (daemon_handover_child_pending()) {
        signal(SIGTERM, on_stop_early);
        signal(SIGINT, on_stop_early);
        signal(SIGHUP, SIG_IGN);
    }
}

static void on_usr2_stopping(int signum) {
    static const char msg[] = "level=warn component=reload msg=\"received SIGUSR2 while "
                              "stopping: ignored (after an in-place upgrade the new process "
                              "takes the next one)\"\n";
    static const char json[] = "{\"level\":\"warn\",\"component\":\"reload\",\"msg\":"
                               "\"received SIGUSR2 while stopping: ignored (after an in-place "
                               "upgrade the new process takes the next one)\"}\n";
    (void)signum;
    ssize_t rc = drain_log_json ? write(STDERR_FILENO, json, sizeof(json) - 1)
                                : write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)rc;
}

void daemon_signals_usr2_stopping(void) {
    signal(SIGUSR2, on_usr2_stopping); /* a second upgrade while this one stops: logged */
}

/*
 * After an upgrade's point of no return the process only hands over and exits: a stop or a
 * SIGHUP then changes nothing, and their default action would lose the hand-over.
 */
void daemon_signals_ignore_stopping(void) {
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    daemon_signals_usr2_stopping();
}

/*
 * The control loop's signals. They are caught before anyone can connect: a client that saw
 * /ready and sent SIGTERM at once must get a drain, not the default action.
 */
void daemon_signals_start(struct daemon *d, uv_signal_cb on_stop, uv_signal_cb on_hup,
                          uv_signal_cb on_usr2) {
    uv_signal_t *hs[] = {&d->sig_term, &d->sig_int, &d->sig_hup, &d->sig_usr2};
    uv_signal_cb cbs[] = {on_stop, on_stop, on_hup, on_usr2};
    int nums[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR2};
    for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
        uv_signal_init(&d->control, hs[i]);
        hs[i]->data = d;
        uv_signal_start(hs[i], cbs[i], nums[i]);
    }
}

static void on_signal_closed(uv_handle_t *h) {
    struct daemon *d = h->data;
    d->signals_closing--;
}

/* A stop: the loop must run empty. A close may take a turn or more (a signal still queued). */
void daemon_signals_stop(struct daemon *d) {
    uv_signal_t *hs[] = {&d->sig_term, &d->sig_int, &d->sig_hup, &d->sig_usr2};
    for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
        d->signals_closing++;
        uv_close((uv_handle_t *)hs[i], on_signal_closed);
    }
}
