/*
 * In-place binary upgrade: both sides of the hand-over (see reload.h).
 * The old side runs on the control thread (its handles are on the control
 * loop); the new side runs in main() before any thread starts.
 */
#include "reload.h"

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

#define RELOAD_ENV "LEAFD_INHERIT_FDS"
/* The new process waits this long for the old one's drain and stop. */
#define RELOAD_SESSION_WAIT_MS 60000
/* ... and this long for the old process to be gone after it. */
#define RELOAD_EXIT_WAIT_MS 10000

extern char **environ;

void reload_init(struct reload *r, uv_loop_t *loop, char **argv, void (*on_adopted)(void *),
                 void *arg) {
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
    struct reload *r = h->data;
    if (--r->nopen == 0) {
        r->busy = 0;
        r->adopted = 0;
        r->ctl_fd = -1;
    }
}

static void close_all(struct reload *r) {
    uv_handle_t *hs[] = {(uv_handle_t *)&r->proc, (uv_handle_t *)&r->ctl, (uv_handle_t *)&r->err};
    for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
        if (!uv_is_closing(hs[i])) {
            uv_close(hs[i], on_handle_closed);
        }
    }
}

static void tail_add(struct reload *r, const char *p, size_t n) {
    if (n >= RELOAD_TAIL) {
        p += n - RELOAD_TAIL;
        n = RELOAD_TAIL;
    }
    if (r->tail_len + n > RELOAD_TAIL) {
        size_t drop = r->tail_len + n - RELOAD_TAIL;
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
    struct reload *r = st->data;
    if (n < 0) {
        uv_read_stop(st);
        return;
    }
    ssize_t w = write(STDERR_FILENO, buf->base, (size_t)n);
    (void)w;
    tail_add(r, buf->base, (size_t)n);
}

static void on_ctl_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
    struct reload *r = st->data;
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
static const char *tail_reason(struct reload *r, char *out, size_t cap) {
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
    struct reload *r = p->data;
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
     * it drains (reload_new_gone), it exits once its services have stopped (reload_handover). */
    close_all(r);
}

int reload_new_gone(struct reload *r) {
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

const char *reload_exit_text(const struct reload *r, char *out, size_t cap) {
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
                         const struct reload_listener *ls, int nls) {
    int o = snprintf(buf, cap, "%s=ctl=%d;err=%d;lock=%d", RELOAD_ENV, ctl, err, lock);
    for (int i = 0; i < nls && o > 0 && (size_t)o < cap; i++) {
        o += snprintf(buf + o, cap - (size_t)o, ";%s=", ls[i].what);
        for (int j = 0; j < ls[i].nfds && (size_t)o < cap; j++) {
            o += snprintf(buf + o, cap - (size_t)o, "%s%d", j ? "," : "", ls[i].fds[j]);
        }
    }
    return o > 0 && (size_t)o < cap ? 0 : -1;
}

void reload_start(struct reload *r, const struct reload_listener *ls, int nls, int lock_fd) {
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
        if (strncmp(environ[i], RELOAD_ENV "=", sizeof(RELOAD_ENV)) != 0) {
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

leaf_status_t reload_handover(struct reload *r, const struct zk_client_id *zk) {
    char msg[160];
    if (reload_new_gone(r) || !r->busy || !r->adopted || r->ctl_fd < 0) {
        log_error("reload",
                  "in-place upgrade: the new process (pid %d) %s after this one had stopped "
                  "its services for the hand-over (too late to serve on); nobody serves now: "
                  "exiting 1, a supervisor starts the node again",
                  r->pid, reload_exit_text(r, msg, sizeof(msg)));
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

/* ---- the new process ------------------------------------------------------ */

static int parse_int(const char *s, size_t n, int *out) {
    char tmp[16];
    char *end;
    if (n == 0 || n >= sizeof(tmp)) {
        return -1;
    }
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    long v = strtol(tmp, &end, 10);
    if (*end != '\0' || v < 0 || v > 65535) {
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int handed(const struct reload_child *c, int fd) {
    if (fd == c->ctl || fd == c->err || fd == c->lock) {
        return 1;
    }
    for (int i = 0; i < c->nls; i++) {
        for (int j = 0; j < c->ls[i].nfds; j++) {
            if (c->ls[i].fds[j] == fd) {
                return 1;
            }
        }
    }
    return 0;
}

/*
 * Sockets and pipes the previous process let slip through exec (the ZooKeeper
 * client opens its socket and wake-up pipe without O_CLOEXEC): closed, or every
 * upgrade would leak them and keep the old ZooKeeper connection open.
 */
static void close_strays(const struct reload_child *c) {
    int fds[256], n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) {
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 256;) {
        int fd = atoi(e->d_name);
        struct stat st;
        if (e->d_name[0] == '.' || fd <= STDERR_FILENO || fd == dirfd(d) || handed(c, fd) ||
            fstat(fd, &st) != 0 || !(S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))) {
            continue;
        }
        fds[n++] = fd;
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        close(fds[i]);
    }
}

int reload_child_pending(void) {
    return getenv(RELOAD_ENV) != NULL;
}

int reload_child_parse(struct reload_child *c, char *err, size_t errlen) {
    memset(c, 0, sizeof(*c));
    c->ctl = c->err = c->lock = -1;
    const char *v = getenv(RELOAD_ENV);
    if (v == NULL) {
        return 0;
    }
    c->on = 1;
    c->parent = (long)getppid();
    char *copy = strdup(v);
    unsetenv(RELOAD_ENV); /* not for a process this one starts */
    if (copy == NULL) {
        snprintf(err, errlen, "%s: out of memory", RELOAD_ENV);
        return -1;
    }
    int bad = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ";", &save); item != NULL && !bad;
         item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        if (eq == NULL) {
            bad = 1;
            break;
        }
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(item, "ctl") == 0 || strcmp(item, "err") == 0 || strcmp(item, "lock") == 0) {
            int *dst = item[0] == 'c' ? &c->ctl : item[0] == 'e' ? &c->err : &c->lock;
            bad = parse_int(val, strlen(val), dst);
            continue;
        }
        if (c->nls >= NET_MAX_LISTENERS) {
            bad = 1;
            break;
        }
        snprintf(c->names[c->nls], sizeof(c->names[c->nls]), "%s", item);
        struct reload_listener *l = &c->ls[c->nls];
        l->what = c->names[c->nls++];
        while (*val != '\0' && !bad) {
            size_t n = strcspn(val, ",");
            if (l->nfds >= RELOAD_MAX_FDS || parse_int(val, n, &l->fds[l->nfds++]) != 0) {
                bad = 1;
            }
            val += n + (val[n] == ',');
        }
    }
    free(copy);
    if (bad || c->ctl < 0 || c->err < 0 || c->lock < 0) {
        snprintf(err, errlen, "%s is malformed (set only by leafd's in-place upgrade)", RELOAD_ENV);
        return -1;
    }
    close_strays(c);
    fcntl(c->ctl, F_SETFD, FD_CLOEXEC);
    fcntl(c->err, F_SETFD, FD_CLOEXEC);
    fcntl(c->lock, F_SETFD, FD_CLOEXEC);
    return 0;
}

const int *reload_child_fds(struct reload_child *c, const char *what, int *n) {
    *n = 0;
    for (int i = 0; i < c->nls; i++) {
        if (!c->taken[i] && strcmp(c->ls[i].what, what) == 0 && c->ls[i].nfds > 0) {
            c->taken[i] = 1;
            *n = c->ls[i].nfds;
            return c->ls[i].fds;
        }
    }
    return NULL;
}

int reload_child_check_addr(const int *fds, int n, const char *host, int port, char *got,
                            size_t cap) {
    for (int i = 0; i < n; i++) {
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        socklen_t len = sizeof(a);
        char ip[INET_ADDRSTRLEN] = "?";
        if (getsockname(fds[i], (struct sockaddr *)&a, &len) != 0 || a.sin_family != AF_INET) {
            snprintf(got, cap, "descriptor %d is not an IPv4 socket", fds[i]);
            return -1;
        }
        inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
        if (ntohs(a.sin_port) != port || strcmp(ip, host) != 0) {
            snprintf(got, cap, "%s:%d", ip, ntohs(a.sin_port));
            return -1;
        }
    }
    return 0;
}

void reload_child_close_unused(struct reload_child *c) {
    for (int i = 0; i < c->nls; i++) {
        if (!c->taken[i]) {
            log_warn("reload", "%s is no longer configured: closing its %d inherited socket(s)",
                     c->ls[i].what, c->ls[i].nfds);
            for (int j = 0; j < c->ls[i].nfds; j++) {
                close(c->ls[i].fds[j]);
            }
        }
    }
}

/* Reads one line from fd within ms; 0 with the line, -1 on timeout, -2 on EOF or error. */
static int read_line(int fd, char *buf, size_t cap, int ms) {
    size_t n = 0;
    int64_t deadline = clock_mono_ms() + ms;
    while (n + 1 < cap) {
        int64_t left = deadline - clock_mono_ms();
        struct pollfd p = {fd, POLLIN, 0};
        int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR) {
            continue; /* a signal (a second SIGUSR2, held until this process serves) */
        }
        if (ready <= 0) {
            return ready == 0 ? -1 : -2;
        }
        ssize_t r = read(fd, buf + n, 1);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) {
                continue;
            }
            return -2;
        }
        if (buf[n] == '\n') {
            buf[n] = '\0';
            return 0;
        }
        n++;
    }
    return -1;
}

/* Our stderr was a pipe to the previous process: take the real one back (before any line
 * that must reach the operator's log: the previous process may be gone). */
static void take_stderr(struct reload_child *c) {
    if (c->err >= 0) {
        dup2(c->err, STDERR_FILENO);
        close(c->err);
        c->err = -1;
    }
}

/*
 * The previous process ended before it handed its session over (killed, or its drain
 * overran): once it is gone this process carries on alone, on a new ZooKeeper session, as
 * a restart after a crash would (the identity and the place in line of a process that has
 * exited are taken over: docs/IDENTITY.md, docs/cluster.md). It has the sockets and the
 * lock already, so the node stays up.
 */
static leaf_status_t take_alone(struct reload_child *c) {
    int64_t until = clock_mono_ms() + RELOAD_EXIT_WAIT_MS;
    while ((long)getppid() == c->parent && clock_mono_ms() < until) {
        struct timespec pause = {0, 10 * 1000000L};
        nanosleep(&pause, NULL);
    }
    if ((long)getppid() == c->parent) {
        log_error("reload",
                  "the previous process (pid %ld) closed the hand-over without "
                  "handing over and has not exited",
                  c->parent);
        return LEAF_ERR;
    }
    close(c->ctl);
    c->ctl = -1;
    log_warn("reload",
             "in-place upgrade: the previous process (pid %ld) exited before it handed over "
             "(killed? its log says why); starting alone on a new ZooKeeper session, as after "
             "a restart",
             c->parent);
    return LEAF_OK;
}

leaf_status_t reload_child_take(struct reload_child *c, struct zk_client_id *zk) {
    char line[200];
    memset(zk, 0, sizeof(*zk));
    c->stopped_mono_ms = clock_mono_ms(); /* until SESSION says better */
    if (write(c->ctl, "ADOPTED\n", 8) != 8) {
        take_stderr(c);
        return take_alone(c);
    }
    int got = read_line(c->ctl, line, sizeof(line), RELOAD_SESSION_WAIT_MS);
    if (got == -1) {
        take_stderr(c);
        log_error("reload", "the previous process (pid %ld) did not hand over within %d s",
                  c->parent, RELOAD_SESSION_WAIT_MS / 1000);
        return LEAF_ERR;
    }
    if (got != 0) {
        take_stderr(c);
        return take_alone(c);
    }
    uint64_t id = 0;
    char pw[40] = "";
    long long stopped = 0, stopped_mono = 0;
    if (sscanf(line, "SESSION %" SCNx64 " %39s %lld %lld", &id, pw, &stopped, &stopped_mono) < 3 ||
        strlen(pw) != 2 * sizeof(zk->passwd)) {
        take_stderr(c);
        log_error("reload", "the previous process's hand-over is malformed");
        return LEAF_ERR;
    }
    for (size_t i = 0; i < sizeof(zk->passwd); i++) {
        unsigned b;
        sscanf(pw + 2 * i, "%2x", &b);
        zk->passwd[i] = (char)b;
    }
    memset(pw, 0, sizeof(pw));
    memset(line, 0, sizeof(line));
    zk->id = (int64_t)id;
    c->stopped_ms = stopped;
    if (stopped_mono > 0) {
        c->stopped_mono_ms = stopped_mono;
    }
    take_stderr(c);
    /* Two clients of one session steal it from each other: wait until the old one is gone. */
    if (read_line(c->ctl, line, sizeof(line), RELOAD_EXIT_WAIT_MS) == 0) {
        log_warn("reload", "unexpected line from the previous process after the hand-over");
    }
    close(c->ctl);
    c->ctl = -1;
    log_info("reload",
             "in-place upgrade: the previous process handed over (ZooKeeper session 0x%" PRIx64
             "); starting",
             id);
    return LEAF_OK;
}
