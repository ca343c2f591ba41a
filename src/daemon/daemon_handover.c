/*
 * In-place binary upgrade, the old process's side (see daemon_handover.h): it
 * starts the new binary, copies its stderr and reads its control socket, and
 * hands the ZooKeeper session over. It runs on the control thread (its handles
 * are on the control loop).
 */
#include "daemon_handover.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "notify.h"

extern char **environ;

void daemon_handover_init(struct daemon_handover *r, uv_loop_t *loop, char **argv,
                          void (*on_adopted)(void *), void *arg) {
    memset(r, 0, sizeof(*r));
    r->loop = loop;
    r->argv = argv;
    r->on_adopted = on_adopted;
    r->arg = arg;
    r->ctl_fd = -1;
    r->err_copy = -1;
    ssize_t n = readlink("/proc/self/exe", r->exe, sizeof(r->exe) - 1);
    if (n <= 0 || (size_t)n >= sizeof(r->exe) - 1) {
        /* No /proc: argv[0] as it was at start (an absolute path, or relative to the cwd). */
        if (realpath(argv[0], r->exe) == NULL) {
            snprintf(r->exe, sizeof(r->exe), "%s", argv[0]);
        }
    } else {
        r->exe[n] = '\0';
    }
}

/* ---- the old process ------------------------------------------------------ */

static void on_handle_closed(uv_handle_t *h) {
    struct daemon_handover *r = h->data;
    if (--r->nopen == 0) {
        r->busy = 0;
        r->adopted = 0;
        r->ctl_fd = -1;
    }
}

static void close_all(struct daemon_handover *r) {
    uv_handle_t *hs[] = {(uv_handle_t *)&r->proc, (uv_handle_t *)&r->ctl, (uv_handle_t *)&r->err};
    for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
        if (!uv_is_closing(hs[i])) {
            uv_close(hs[i], on_handle_closed);
        }
    }
}

static void tail_add(struct daemon_handover *r, const char *p, size_t n) {
    if (n >= DAEMON_HANDOVER_TAIL) {
        p += n - DAEMON_HANDOVER_TAIL;
        n = DAEMON_HANDOVER_TAIL;
    }
    if (r->tail_len + n > DAEMON_HANDOVER_TAIL) {
        size_t drop = r->tail_len + n - DAEMON_HANDOVER_TAIL;
        memmove(r->tail, r->tail + drop, r->tail_len - drop);
        r->tail_len -= drop;
    }
    memcpy(r->tail + r->tail_len, p, n);
    r->tail_len += n;
}

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *buf) {
    static char mem[4096]; /* the control thread's; one read at a time */
    (void)h;
    (void)want;
    *buf = uv_buf_init(mem, sizeof(mem));
}

/* The new process's stderr: copied to ours, the tail kept for a failure. */
static void on_err_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
    struct daemon_handover *r = st->data;
    if (n < 0) {
        uv_read_stop(st);
        return;
    }
    ssize_t w = write(STDERR_FILENO, buf->base, (size_t)n);
    (void)w;
    tail_add(r, buf->base, (size_t)n);
}

static void on_ctl_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
    struct daemon_handover *r = st->data;
    if (n < 0) {
        uv_read_stop(st); /* EOF: the new process is gone (its exit callback says why) */
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        char ch = buf->base[i];
        if (ch != '\n') {
            if (r->line_len < sizeof(r->line) - 1) {
                r->line[r->line_len++] = ch;
            }
            continue;
        }
        r->line[r->line_len] = '\0';
        r->line_len = 0;
        if (strcmp(r->line, "ADOPTED") == 0 && !r->adopted) {
            r->adopted = 1;
            r->stopped_ms = clock_wall_ms();
            r->stopped_mono_ms = clock_mono_ms();
            log_info("reload",
                     "in-place upgrade: the new process (pid %d) adopted the listeners; this one "
                     "stops accepting, answers what it received and hands over",
                     r->pid);
            r->on_adopted(r->arg);
        }
    }
}

/* The tail's last lines, on one line, for the log. */
static const char *tail_reason(struct daemon_handover *r, char *out, size_t cap) {
    size_t n = r->tail_len;
    while (n > 0 && (r->tail[n - 1] == '\n' || r->tail[n - 1] == ' ')) {
        n--;
    }
    size_t start = n > 600 ? n - 600 : 0;
    size_t o = 0;
    for (size_t i = start; i < n && o + 1 < cap; i++) {
        out[o] = r->tail[i];
        if (out[o] == '\n') {
            out[o] = '|';
        }
        o++;
    }
    out[o] = '\0';
    return o > 0 ? out : "(it wrote nothing)";
}

static void on_child_exit(uv_process_t *p, int64_t status, int term_signal) {
    struct daemon_handover *r = p->data;
    char why[700];
    r->exited = 1;
    r->exit_status = status;
    r->exit_signal = term_signal;
    if (!r->adopted) {
        log_error(
            "reload",
            "in-place upgrade failed: the new process (pid %d, %s) exited with status %" PRId64
            "%s%s before taking over; still serving from this one (pid %ld). Its last "
            "output: %s",
            r->pid, r->exe, status, term_signal ? ", signal " : "",
            term_signal ? strsignal(term_signal) : "", (long)getpid(),
            tail_reason(r, why, sizeof(why)));
        (void)notify_send("READY=1");
    }
    /* After ADOPTED the caller logs it, once it knows what it does about it: it serves on while
     * it drains (daemon_handover_new_gone), it exits once its services have stopped
     * (daemon_handover_session). */
    close_all(r);
}

int daemon_handover_new_gone(struct daemon_handover *r) {
    siginfo_t si;
    if (r->exited) {
        return 1;
    }
    if (!r->busy || r->pid <= 0) {
        return 0;
    }
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)r->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0) {
        return 0;
    }
    r->exited = 1;
    r->exit_status = si.si_code == CLD_EXITED ? si.si_status : 0;
    r->exit_signal = si.si_code == CLD_EXITED ? 0 : si.si_status;
    return 1;
}

const char *daemon_handover_exit_text(const struct daemon_handover *r, char *out, size_t cap) {
    if (!r->exited) {
        snprintf(out, cap, "is gone");
    } else if (r->exit_signal != 0) {
        snprintf(out, cap, "was killed by signal %d (%s)", r->exit_signal,
                 strsignal(r->exit_signal));
    } else {
        snprintf(out, cap, "exited with status %" PRId64, r->exit_status);
    }
    return out;
}

/* LEAFD_INHERIT_FDS=ctl=K;err=E;lock=L;leafd.listen=5,6;... into buf. */
static int inherit_value(char *buf, size_t cap, int ctl, int err, int lock,
                         const struct daemon_handover_listener *ls, int nls) {
    int o = snprintf(buf, cap, "%s=ctl=%d;err=%d;lock=%d", DAEMON_HANDOVER_ENV, ctl, err, lock);
    for (int i = 0; i < nls && o > 0 && (size_t)o < cap; i++) {
        o += snprintf(buf + o, cap - (size_t)o, ";%s=", ls[i].what);
        for (int j = 0; j < ls[i].nfds && (size_t)o < cap; j++) {
            o += snprintf(buf + o, cap - (size_t)o, "%s%d", j ? "," : "", ls[i].fds[j]);
        }
    }
    return o > 0 && (size_t)o < cap ? 0 : -1;
}

void daemon_handover_start(struct daemon_handover *r, const struct daemon_handover_listener *ls,
                           int nls, int lock_fd) {
    if (r->busy) {
        log_warn("reload", "received SIGUSR2: an in-place upgrade (pid %d) is under way already",
                 r->pid);
        return;
    }
    log_info("reload", "received SIGUSR2: starting %s for an in-place upgrade", r->exe);
    r->tail_len = 0;
    r->line_len = 0;
    r->adopted = 0;
    r->exited = 0;
    int maxfd = lock_fd > STDERR_FILENO ? lock_fd : STDERR_FILENO;
    for (int i = 0; i < nls; i++) {
        for (int j = 0; j < ls[i].nfds; j++) {
            maxfd = ls[i].fds[j] > maxfd ? ls[i].fds[j] : maxfd;
        }
    }
    r->err_copy = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, maxfd + 1);
    if (r->err_copy < 0) {
        log_error("reload", "in-place upgrade not started: dup(stderr) failed: %s",
                  strerror(errno));
        return;
    }
    int ctl_index = r->err_copy + 1;
    int count = ctl_index + 1;
    uv_stdio_container_t *stdio = calloc((size_t)count, sizeof(*stdio));
    size_t nenv = 0;
    while (environ[nenv] != NULL) {
        nenv++;
    }
    char **env = calloc(nenv + 2, sizeof(*env));
    static char inherit[1024];
    if (stdio == NULL || env == NULL ||
        inherit_value(inherit, sizeof(inherit), ctl_index, r->err_copy, lock_fd, ls, nls) != 0) {
        log_error("reload", "in-place upgrade not started: out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        if (strncmp(environ[i], DAEMON_HANDOVER_ENV "=", sizeof(DAEMON_HANDOVER_ENV)) != 0) {
            env[k++] = environ[i];
        }
    }
    env[k++] = inherit;
    for (int i = 0; i < count; i++) {
        stdio[i].flags = UV_IGNORE;
    }
    stdio[0].flags = UV_INHERIT_FD;
    stdio[0].data.fd = STDIN_FILENO;
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = STDOUT_FILENO;
    uv_pipe_init(r->loop, &r->err, 0);
    uv_pipe_init(r->loop, &r->ctl, 0);
    r->err.data = r->ctl.data = r->proc.data = r;
    stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[2].data.stream = (uv_stream_t *)&r->err;
    stdio[ctl_index].flags = UV_CREATE_PIPE | UV_READABLE_PIPE | UV_WRITABLE_PIPE;
    stdio[ctl_index].data.stream = (uv_stream_t *)&r->ctl;
    stdio[r->err_copy].flags = UV_INHERIT_FD;
    stdio[r->err_copy].data.fd = r->err_copy;
    stdio[lock_fd].flags = UV_INHERIT_FD;
    stdio[lock_fd].data.fd = lock_fd;
    for (int i = 0; i < nls; i++) {
        for (int j = 0; j < ls[i].nfds; j++) {
            stdio[ls[i].fds[j]].flags = UV_INHERIT_FD;
            stdio[ls[i].fds[j]].data.fd = ls[i].fds[j];
        }
    }
    uv_process_options_t opt = {
        .exit_cb = on_child_exit,
        .file = r->exe,
        .args = r->argv,
        .env = env,
        .stdio_count = count,
        .stdio = stdio,
    };
    r->busy = 1;
    r->nopen = 2; /* the pipes; the process handle once spawned */
    int rc = uv_spawn(r->loop, &r->proc, &opt);
    if (rc != 0) {
        log_error("reload", "in-place upgrade not started: cannot run %s: %s; still serving",
                  r->exe, uv_strerror(rc));
        uv_close((uv_handle_t *)&r->err, on_handle_closed);
        uv_close((uv_handle_t *)&r->ctl, on_handle_closed);
        goto out;
    }
    r->nopen = 3;
    r->pid = r->proc.pid;
    uv_fileno((uv_handle_t *)&r->ctl, &r->ctl_fd);
    uv_read_start((uv_stream_t *)&r->err, on_alloc, on_err_read);
    uv_read_start((uv_stream_t *)&r->ctl, on_alloc, on_ctl_read);
    /* The services' stops run the control loop until it is empty: never wait for these. */
    uv_unref((uv_handle_t *)&r->proc);
    uv_unref((uv_handle_t *)&r->ctl);
    uv_unref((uv_handle_t *)&r->err);
    log_info("reload", "in-place upgrade: started pid %d; waiting for it to adopt the listeners",
             r->pid);
out:
    free(stdio);
    free(env);
    /* Closed the way libuv closes the loops' descriptors (a raw syscall): its number
     * may have been a connection of a loop thread, and a close() that ThreadSanitizer
     * sees, after closes it cannot see, reads as a race on the descriptor. */
    uv_fs_t req;
    (void)uv_fs_close(NULL, &req, r->err_copy, NULL);
    uv_fs_req_cleanup(&req);
    r->err_copy = -1;
}

leaf_status_t daemon_handover_session(struct daemon_handover *r, const struct zk_client_id *zk) {
    char msg[160];
    if (daemon_handover_new_gone(r) || !r->busy || !r->adopted || r->ctl_fd < 0) {
        log_error("reload",
                  "in-place upgrade: the new process (pid %d) %s after this one had stopped "
                  "its services for the hand-over (too late to serve on); nobody serves now: "
                  "exiting 1, a supervisor starts the node again",
                  r->pid, daemon_handover_exit_text(r, msg, sizeof(msg)));
        return LEAF_EUNAVAIL;
    }
    int o = snprintf(msg, sizeof(msg), "SESSION %" PRIx64 " ", (uint64_t)zk->id);
    for (size_t i = 0; i < sizeof(zk->passwd); i++) {
        o += snprintf(msg + o, sizeof(msg) - (size_t)o, "%02x", (unsigned char)zk->passwd[i]);
    }
    o += snprintf(msg + o, sizeof(msg) - (size_t)o, " %" PRId64 " %" PRId64 "\n", r->stopped_ms,
                  r->stopped_mono_ms);
    int fl = fcntl(r->ctl_fd, F_GETFL);
    if (fl >= 0) {
        fcntl(r->ctl_fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    if (write(r->ctl_fd, msg, (size_t)o) != o) {
        log_error("reload",
                  "in-place upgrade: handing over to pid %d failed: %s; nobody serves now: "
                  "exiting 1, a supervisor starts the node again",
                  r->pid, strerror(errno));
        return LEAF_ERR;
    }
    memset(msg, 0, sizeof(msg));
    char mainpid[64];
    snprintf(mainpid, sizeof(mainpid), "MAINPID=%d", r->pid);
    (void)notify_send(mainpid);
    log_info("reload",
             "in-place upgrade: handed over to pid %d (ZooKeeper session 0x%" PRIx64
             " kept open); exiting",
             r->pid, (uint64_t)zk->id);
    return LEAF_OK;
}
