#ifndef LEAF_DAEMON_HANDOVER_H
#define LEAF_DAEMON_HANDOVER_H

/*
 * In-place binary upgrade (docs/UPGRADING.md, "In place, without a restart").
 *
 * The mechanics only: the daemon's state machine (daemon.c) decides when, calls
 * down into these functions, and hears back through one callback, on_adopted
 * (the new process is about to serve). daemon_handover.c is the old process's
 * side, daemon_handover_child.c the new one's.
 *
 * The old process, on SIGUSR2 (daemon_handover_start): starts the binary it was started
 * from, with the same arguments, handing it its listening sockets, its data-dir
 * lock and a copy of its stderr as inherited descriptors named in
 * LEAFD_INHERIT_FDS, plus a control socket. The new process's stderr is a pipe
 * to the old one, which copies it to its own stderr and keeps the tail: a new
 * binary that exits before taking over (configuration, a missing library, ...)
 * leaves the old one serving, and the old one logs the reason.
 *
 * The hand-over, over the control socket:
 *   new -> "ADOPTED"   configuration loaded, sockets and lock adopted: about to serve;
 *   old: stops accepting, answers every request it has received, closes its
 *        keep-alive connections, stops its services (the last issued time is
 *        persisted, as at any graceful stop) without closing its ZooKeeper session;
 *   old -> "SESSION <id> <password> <stopped_ms> <stopped_mono_ms>", then exits (no
 *        zookeeper_close); stopped_ms is the wall clock (1.0 sends only that one),
 *        stopped_mono_ms CLOCK_MONOTONIC, which every process of the host shares;
 *   (the new process ending before SESSION: the old one calls its drain off and serves on,
 *    see daemon_handover_new_gone; the services only stop at the drain's end);
 *   new: takes its real stderr back, waits for the old process to be gone, resumes
 *        the ZooKeeper session (ephemeral nodes stay) and starts above the persisted
 *        time; it logs the gap from the old one's stop to its own first accept.
 *
 * Ownership: struct daemon_handover belongs to struct daemon (daemon.h) and the
 * control thread (its handles live on the control loop); struct
 * daemon_handover_child to struct daemon of the new process, main thread,
 * before any other thread starts.
 */
#include <stdint.h>
#include <uv.h>

#include "net.h"
#include "zk_session.h"

/* The variable that names the inherited descriptors (set only by the hand-over). */
#define DAEMON_HANDOVER_ENV "LEAFD_INHERIT_FDS"
#define DAEMON_HANDOVER_TAIL 2048
#define DAEMON_HANDOVER_MAX_FDS 16

struct daemon_handover {
    uv_loop_t *loop;
    char exe[4096]; /* /proc/self/exe's target at start */
    char **argv;
    /* The one report to the state machine: the new process said ADOPTED and is about to
     * serve; the daemon stops accepting and drains (daemon.c). Control thread. */
    void (*on_adopted)(void *arg);
    void *arg;
    int busy;    /* a new process runs (handles open) */
    int nopen;   /* handles still to close */
    int adopted; /* it said ADOPTED */
    int pid;
    int ctl_fd;   /* our end of the control socket (owned by ctl) */
    int err_copy; /* dup of stderr handed over; closed after the spawn */
    uv_process_t proc;
    uv_pipe_t ctl, err;
    char line[256];
    size_t line_len;
    char tail[DAEMON_HANDOVER_TAIL];
    size_t tail_len;
    int64_t stopped_ms;      /* wall clock when on_adopted ran */
    int64_t stopped_mono_ms; /* CLOCK_MONOTONIC then */
    int exited;              /* the new process has ended: */
    int64_t exit_status;     /* its exit status (0 when a signal ended it) */
    int exit_signal;         /* the signal that ended it, or 0 */
};

/* At start, before anything could have replaced the binary: remembers what to run. */
void daemon_handover_init(struct daemon_handover *r, uv_loop_t *loop, char **argv,
                          void (*on_adopted)(void *), void *arg);

/* One listener's sockets, as the old process hands them over. */
struct daemon_handover_listener {
    const char *what; /* its setting, e.g. "leafd.listen" */
    int fds[DAEMON_HANDOVER_MAX_FDS];
    int nfds;
};

/* SIGUSR2: starts the new process (logged). Nothing happens while one is starting already. */
void daemon_handover_start(struct daemon_handover *r, const struct daemon_handover_listener *ls,
                           int nls, int lock_fd);

/*
 * After on_adopted, while the old process drains: 1 when the new process has
 * ended (its exit status or signal in r, daemon_handover_exit_text), even if its exit
 * callback has not run yet (waitid with WNOWAIT: libuv still reaps it).
 */
int daemon_handover_new_gone(struct daemon_handover *r);

/* How the new process ended, e.g. "exited with status 1", "was killed by signal 9 (Killed)". */
const char *daemon_handover_exit_text(const struct daemon_handover *r, char *out, size_t cap);

/*
 * After the services stopped (on_adopted ran and the drain ended): hands the
 * session over. LEAF_OK: the caller exits at once, without closing the session
 * or releasing the lock. Otherwise (the new process is gone: logged) the caller
 * exits 1: it has stopped its services, and nobody serves.
 */
leaf_status_t daemon_handover_session(struct daemon_handover *r, const struct zk_client_id *zk);

/* The new process's side. */
struct daemon_handover_child {
    int on;   /* LEAFD_INHERIT_FDS was set */
    int ctl;  /* the control socket */
    int err;  /* the real stderr */
    int lock; /* the data-dir lock's descriptor */
    struct daemon_handover_listener ls[NET_MAX_LISTENERS];
    char names[NET_MAX_LISTENERS][64]; /* ls[i].what */
    int taken[NET_MAX_LISTENERS];      /* a configured listener adopted ls[i] */
    int nls;
    int64_t stopped_ms;      /* from SESSION */
    int64_t stopped_mono_ms; /* from SESSION; 0 from a 1.0 process (it sends no such field) */
    long parent;             /* the previous process's pid (its child until it exits) */
};

/* 1 when this process is the new one of an in-place upgrade (LEAFD_INHERIT_FDS is set). */
int daemon_handover_child_pending(void);

/* Reads and removes LEAFD_INHERIT_FDS; -1 (message in err) when malformed. */
int daemon_handover_child_parse(struct daemon_handover_child *c, char *err, size_t errlen);

/* The inherited sockets of listener `what` (NULL, *n = 0: none; it binds its own). */
const int *daemon_handover_child_fds(struct daemon_handover_child *c, const char *what, int *n);

/*
 * Says ADOPTED, waits for the session (bounded) and for the old process to be
 * gone, takes stderr back. LEAF_OK with the session in zk (id 0: ZooKeeper not used).
 */
leaf_status_t daemon_handover_child_take(struct daemon_handover_child *c, struct zk_client_id *zk);

/*
 * 0 when every inherited socket in fds is bound to host:port; else -1 with
 * what it is bound to in got (a changed listen address is a restart).
 */
int daemon_handover_child_check_addr(const int *fds, int n, const char *host, int port, char *got,
                                     size_t cap);

/* Closes inherited sockets no configured listener took (logged). */
void daemon_handover_child_close_unused(struct daemon_handover_child *c);

#endif
