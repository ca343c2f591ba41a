/*
 * In-place binary upgrade, the new process's side (see daemon_handover.h): it
 * reads what the previous process handed over, says ADOPTED and takes the
 * ZooKeeper session. It runs on the main thread before any other thread starts.
 */
#include "daemon_handover.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* The new process waits this long for the old one's drain and stop. */
#define RELOAD_SESSION_WAIT_MS 60000
/* ... and this long for the old process to be gone after it. */
#define RELOAD_EXIT_WAIT_MS 10000

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

static int handed(const struct daemon_handover_child *c, int fd) {
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
static void close_strays(const struct daemon_handover_child *c) {
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

int daemon_handover_child_pending(void) {
    return getenv(DAEMON_HANDOVER_ENV) != NULL;
}

int daemon_handover_child_parse(struct daemon_handover_child *c, char *err, size_t errlen) {
    memset(c, 0, sizeof(*c));
    c->ctl = c->err = c->lock = -1;
    const char *v = getenv(DAEMON_HANDOVER_ENV);
    if (v == NULL) {
        return 0;
    }
    c->on = 1;
    c->parent = (long)getppid();
    char *copy = strdup(v);
    unsetenv(DAEMON_HANDOVER_ENV); /* not for a process this one starts */
    if (copy == NULL) {
        snprintf(err, errlen, "%s: out of memory", DAEMON_HANDOVER_ENV);
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
        struct daemon_handover_listener *l = &c->ls[c->nls];
        l->what = c->names[c->nls++];
        while (*val != '\0' && !bad) {
            size_t n = strcspn(val, ",");
            if (l->nfds >= DAEMON_HANDOVER_MAX_FDS || parse_int(val, n, &l->fds[l->nfds++]) != 0) {
                bad = 1;
            }
            val += n + (val[n] == ',');
        }
    }
    free(copy);
    if (bad || c->ctl < 0 || c->err < 0 || c->lock < 0) {
        snprintf(err, errlen, "%s is malformed (set only by leafd's in-place upgrade)",
                 DAEMON_HANDOVER_ENV);
        return -1;
    }
    close_strays(c);
    fcntl(c->ctl, F_SETFD, FD_CLOEXEC);
    fcntl(c->err, F_SETFD, FD_CLOEXEC);
    fcntl(c->lock, F_SETFD, FD_CLOEXEC);
    return 0;
}

const int *daemon_handover_child_fds(struct daemon_handover_child *c, const char *what, int *n) {
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

int daemon_handover_child_check_addr(const int *fds, int n, const char *host, int port, char *got,
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

void daemon_handover_child_close_unused(struct daemon_handover_child *c) {
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
static void take_stderr(struct daemon_handover_child *c) {
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
static leaf_status_t take_alone(struct daemon_handover_child *c) {
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

leaf_status_t daemon_handover_child_take(struct daemon_handover_child *c, struct zk_client_id *zk) {
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
