#ifndef LEAF_RELOAD_H
#define LEAF_RELOAD_H

/*
 * In-place binary upgrade (docs/UPGRADING.md, "In place, without a restart").
 *
 * The old process, on SIGUSR2 (reload_start): starts the binary it was started
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
 *    see reload_new_gone; the services only stop at the drain's end);
 *   new: takes its real stderr back, waits for the old process to be gone, resumes
 *        the ZooKeeper session (ephemeral nodes stay) and starts above the persisted
 *        time; it logs the gap from the old one's stop to its own first accept.
 *
 * Ownership: struct reload belongs to main() and the control thread (its handles
 * live on the control loop); struct reload_child to main() of the new process,
 * before any thread starts.
 */
#include <stdint.h>
#include <uv.h>

#include "net.h"
#include "zk_session.h"

#define RELOAD_TAIL 2048
#define RELOAD_MAX_FDS 16

struct reload {
    uv_loop_t *loop;
    char exe[4096]; /* /proc/self/exe's target at start */
    char **argv;
    void (*on_adopted)(void *arg); /* the new process is about to serve: stop accepting */
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
    char tail[RELOAD_TAIL];
    size_t tail_len;
    int64_t stopped_ms;      /* wall clock when on_adopted ran */
    int64_t stopped_mono_ms; /* CLOCK_MONOTONIC then */
    int exited;              /* the new process has ended: */
    int64_t exit_status;     /* its exit status (0 when a signal ended it) */
    int exit_signal;         /* the signal that ended it, or 0 */
};

/* At start, before anything could have replaced the binary: remembers what to run. */
void reload_init(struct reload *r, uv_loop_t *loop, char **argv, void (*on_adopted)(void *),
                 void *arg);

/* One listener's sockets, as the old process hands them over. */
struct reload_listener {
    const char *what; /* its setting, e.g. "leafd.listen" */
    int fds[RELOAD_MAX_FDS];
    int nfds;
};

/* SIGUSR2: starts the new process (logged). Nothing happens while one is starting already. */
void reload_start(struct reload *r, const struct reload_listener *ls, int nls, int lock_fd);

/*
 * After on_adopted, while the old process drains: 1 when the new process has
 * ended (its exit status or signal in r, reload_exit_text), even if its exit
 * callback has not run yet (waitid with WNOWAIT: libuv still reaps it).
 */
int reload_new_gone(struct reload *r);

/* How the new process ended, e.g. "exited with status 1", "was killed by signal 9 (Killed)". */
const char *reload_exit_text(const struct reload *r, char *out, size_t cap);

/*
 * After the services stopped (on_adopted ran and the drain ended): hands the
 * session over. LEAF_OK: the caller exits at once, without closing the session
 * or releasing the lock. Otherwise (the new process is gone: logged) the caller
 * exits 1: it has stopped its services, and nobody serves.
 */
leaf_status_t reload_handover(struct reload *r, const struct zk_client_id *zk);

/* The new process's side. */
struct reload_child {
    int on;   /* LEAFD_INHERIT_FDS was set */
    int ctl;  /* the control socket */
    int err;  /* the real stderr */
    int lock; /* the data-dir lock's descriptor */
    struct reload_listener ls[NET_MAX_LISTENERS];
    char names[NET_MAX_LISTENERS][64]; /* ls[i].what */
    int taken[NET_MAX_LISTENERS];      /* a configured listener adopted ls[i] */
    int nls;
    int64_t stopped_ms;      /* from SESSION */
    int64_t stopped_mono_ms; /* from SESSION; 0 from a 1.0 process (it sends no such field) */
    long parent;             /* the previous process's pid (its child until it exits) */
};

/* 1 when this process is the new one of an in-place upgrade (LEAFD_INHERIT_FDS is set). */
int reload_child_pending(void);

/* Reads and removes LEAFD_INHERIT_FDS; -1 (message in err) when malformed. */
int reload_child_parse(struct reload_child *c, char *err, size_t errlen);

/* The inherited sockets of listener `what` (NULL, *n = 0: none; it binds its own). */
const int *reload_child_fds(struct reload_child *c, const char *what, int *n);

/*
 * Says ADOPTED, waits for the session (bounded) and for the old process to be
 * gone, takes stderr back. LEAF_OK with the session in zk (id 0: ZooKeeper not used).
 */
leaf_status_t reload_child_take(struct reload_child *c, struct zk_client_id *zk);

/*
 * 0 when every inherited socket in fds is bound to host:port; else -1 with
 * what it is bound to in got (a changed listen address is a restart).
 */
int reload_child_check_addr(const int *fds, int n, const char *host, int port, char *got,
                            size_t cap);

/* Closes inherited sockets no configured listener took (logged). */
void reload_child_close_unused(struct reload_child *c);

#endif
