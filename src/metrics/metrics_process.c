#include "metrics_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "api_ctx.h"
#include "readiness.h"
#include "version.h"

/* ---- readiness and build ---- */

/* One series per enabled component, and "all": 1 exactly when /ready answers 200. */
void f_ready(struct metrics_out *o, const struct metrics_snap *s) {
    struct readiness r;
    readiness_eval(s->ctx, &r);
    char labels[48];
    for (int c = 0; c < READINESS_COUNT; c++) {
        if (r.enabled[c]) {
            snprintf(labels, sizeof(labels), "component=\"%s\"",
                     readiness_name((enum readiness_component)c));
            metrics_sample_i(o, labels, r.ready[c]);
        }
    }
    metrics_sample_i(o, "component=\"all\"", r.all);
}

void f_build_info(struct metrics_out *o, const struct metrics_snap *s) {
    char labels[96];
    snprintf(labels, sizeof(labels), "version=\"%s\",revision=\"%s\"", leafd_version(),
             leafd_revision());
    metrics_sample_i(o, labels, 1);
}

/* ---- process_*, as the Prometheus client libraries define them ---- */

void f_process_cpu(struct metrics_out *o, const struct metrics_snap *s) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        double secs = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
        metrics_sample_d(o, NULL, secs);
    }
}

void f_process_rss(struct metrics_out *o, const struct metrics_snap *s) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (f == NULL) {
        return;
    }
    int n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    if (n == 2) {
        metrics_sample_u(o, "", NULL, resident * (unsigned long long)sysconf(_SC_PAGESIZE));
    }
}

/*
 * /proc/self/fd counted with raw system calls, the way libuv opens and closes the loops'
 * descriptors: a descriptor number this thread reuses may have been another loop's
 * connection, closed by a syscall ThreadSanitizer cannot see, and opendir's hidden openat
 * then closedir's close() read to it as a race on that descriptor (seen in a TSan run).
 */
void f_process_open_fds(struct metrics_out *o, const struct metrics_snap *s) {
    long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    uint64_t n = 0;
    if (fd < 0) {
        return;
    }
    char buf[4096];
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buf, sizeof(buf));
        if (got <= 0) {
            break;
        }
        for (long off = 0; off < got;) {
            const struct dirent64 *e = (const struct dirent64 *)(buf + off);
            n += e->d_name[0] != '.';
            off += e->d_reclen;
        }
    }
    (void)syscall(SYS_close, fd);
    metrics_sample_u(o, "", NULL, n > 0 ? n - 1 : 0); /* not the one counting them */
}

void f_process_max_fds(struct metrics_out *o, const struct metrics_snap *s) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        metrics_sample_u(o, "", NULL, rl.rlim_cur == RLIM_INFINITY ? 0 : (uint64_t)rl.rlim_cur);
    }
}

/* The boot time (btime of /proc/stat), in seconds since 1970; -1 when unknown. */
static long long boot_time_s(void) {
    FILE *f = fopen("/proc/stat", "r");
    char line[256];
    long long btime = -1;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "btime %lld", &btime) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return btime;
}

/* Field 22 of /proc/self/stat (starttime, clock ticks after boot), read past the
 * command name, which may hold spaces and parentheses; -1 when unknown. */
static long long start_ticks(void) {
    FILE *f = fopen("/proc/self/stat", "r");
    char buf[1024];
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p != NULL && field < 22; field++) {
        p = strchr(p + 1, ' ');
    }
    return p ? strtoll(p + 1, NULL, 10) : -1;
}

void f_process_start(struct metrics_out *o, const struct metrics_snap *s) {
    long long btime = boot_time_s(), ticks = start_ticks();
    long hz = sysconf(_SC_CLK_TCK);
    if (btime > 0 && ticks >= 0 && hz > 0) {
        metrics_sample_d(o, NULL, (double)btime + (double)ticks / (double)hz);
    } else {
        metrics_sample_d(o, NULL, (double)s->ctx->started_ms / 1000.0); /* when it began serving */
    }
}
