/*
 * GET /metrics: every family leafd exports, in the order of the scrape: the
 * process's own (readiness as a gauge, what was built, and the standard
 * process_* families every Prometheus client library exports, read from
 * getrusage, getrlimit and /proc, so Linux only: their rows are here), the
 * request counters' (src/metrics), then the node's (page_metrics_node.c).
 * Each family is a row of its file's table (writer, name, type, help),
 * written into a growable buffer, so a scrape is never cut. Runs on the
 * scraping request's loop thread.
 */
#include "pages.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "door_http.h"
#include "door_http_auth.h"
#include "door_ready.h"
#include "metrics.h"
#include "page_metrics_node.h"
#include "version.h"

/* ---- readiness and build ---- */

/* One series per enabled component, and "all": 1 exactly when /ready answers 200. */
static void f_ready(struct metrics_out *o, const struct door_ctx *ctx) {
    struct door_ready r;
    door_ready_eval(ctx, &r);
    char labels[48];
    for (int c = 0; c < DOOR_READY_COUNT; c++) {
        if (r.enabled[c]) {
            snprintf(labels, sizeof(labels), "component=\"%s\"",
                     door_ready_name((enum door_ready_component)c));
            metrics_sample_i(o, labels, r.ready[c]);
        }
    }
    metrics_sample_i(o, "component=\"all\"", r.all);
}

static void f_build_info(struct metrics_out *o, const struct door_ctx *ctx) {
    char labels[96];
    snprintf(labels, sizeof(labels), "version=\"%s\",revision=\"%s\"", leafd_version(),
             leafd_revision());
    metrics_sample_i(o, labels, 1);
}

/* With several regions only (docs/regions.md): which region this node serves. */
static void f_region_info(struct metrics_out *o, const struct door_ctx *ctx) {
    struct region_service_view v;
    region_service_view(ctx->region, &v);
    if (!v.enabled) {
        return;
    }
    char labels[160];
    snprintf(labels, sizeof(labels),
             "region=\"%s\",region_id=\"%" PRId64 "\",count=\"%" PRId64 "\"", v.name, v.id,
             v.count);
    metrics_sample_i(o, labels, 1);
}

/* ---- process_*, as the Prometheus client libraries define them ---- */

static void f_process_cpu(struct metrics_out *o, const struct door_ctx *ctx) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        double secs = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
        metrics_sample_d(o, NULL, secs);
    }
}

static void f_process_rss(struct metrics_out *o, const struct door_ctx *ctx) {
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
static void f_process_open_fds(struct metrics_out *o, const struct door_ctx *ctx) {
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

static void f_process_max_fds(struct metrics_out *o, const struct door_ctx *ctx) {
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

static void f_process_start(struct metrics_out *o, const struct door_ctx *ctx) {
    long long btime = boot_time_s(), ticks = start_ticks();
    long hz = sysconf(_SC_CLK_TCK);
    if (btime > 0 && ticks >= 0 && hz > 0) {
        metrics_sample_d(o, NULL, (double)btime + (double)ticks / (double)hz);
    } else {
        metrics_sample_d(o, NULL, (double)ctx->started_ms / 1000.0); /* when it began serving */
    }
}

/* The process's families, X(writer, name, type, help), first in the scrape. */
#define PAGE_METRICS_PROCESS_FAMILIES(X)                                                           \
    X(f_ready, "leafd_ready", "gauge",                                                             \
      "1 while a component can issue IDs (as /ready), by component; \"all\": /ready answers 200.") \
    X(f_build_info, "leafd_build_info", "gauge",                                                   \
      "Always 1; the labels say which leafd runs (version, git revision).")                        \
    X(f_region_info, "leafd_region_info", "gauge",                                                 \
      "Always 1, with leafd.region.count > 1 only: the region this node serves (region, "          \
      "region_id, count); whether its claim is confirmed is leafd_ready{component=\"region\"}.")   \
    X(f_process_cpu, "process_cpu_seconds_total", "counter",                                       \
      "User and system CPU time spent, in seconds.")                                               \
    X(f_process_rss, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")   \
    X(f_process_open_fds, "process_open_fds", "gauge", "Open file descriptors.")                   \
    X(f_process_max_fds, "process_max_fds", "gauge", "The limit of open file descriptors.")        \
    X(f_process_start, "process_start_time_seconds", "gauge",                                      \
      "When the process started, in seconds since 1970.")

static const struct {
    void (*write)(struct metrics_out *o, const struct door_ctx *ctx);
    const char *name, *type, *help;
} process_families[] = {
#define PROCESS_ROW(fn, fname, ftype, fhelp) {fn, fname, ftype, fhelp},
    PAGE_METRICS_PROCESS_FAMILIES(PROCESS_ROW)
#undef PROCESS_ROW
};
#define PROCESS_NFAMILIES (sizeof(process_families) / sizeof(process_families[0]))

/* Renders every family (Prometheus text format 0.0.4) into b. */
static void page_metrics_scrape(const struct door_ctx *ctx, struct sbuf *b) {
    for (size_t i = 0; i < PROCESS_NFAMILIES; i++) {
        struct metrics_out o = {b, process_families[i].name, process_families[i].type,
                                process_families[i].help, 0};
        process_families[i].write(&o, ctx);
    }
    metrics_write(ctx->metrics, b);
    page_metrics_node_write(ctx, b);
}

void page_metrics_print_reference(FILE *out) {
    fputs("| name | type | help |\n|---|---|---|\n", out);
    for (size_t i = 0; i < PROCESS_NFAMILIES; i++) {
        metrics_reference_row(out, process_families[i].name, process_families[i].type,
                              process_families[i].help);
    }
    metrics_print_reference(out);
    page_metrics_node_print_reference(out);
}

/* Drops the samples that name a tenant's tag or sequence, or a failure's reason (which tells
 * an unknown user from a wrong secret): what an anonymous scrape may not see. */
static void metrics_node_level_only(struct sbuf *b) {
    static const char *const hidden[] = {"tag=\"", "sequence=\"", "reason=\""};
    size_t out = 0;
    for (size_t at = 0; at < b->len;) {
        const char *line = b->data + at;
        const char *nl = memchr(line, '\n', b->len - at);
        size_t n = nl != NULL ? (size_t)(nl - line) + 1 : b->len - at;
        int keep = 1;
        for (size_t i = 0; keep && line[0] != '#' && i < sizeof(hidden) / sizeof(hidden[0]); i++) {
            keep = memmem(line, n, hidden[i], strlen(hidden[i])) == NULL;
        }
        if (keep) {
            memmove(b->data + out, line, n);
            out += n;
        }
        at += n;
    }
    b->len = out;
}

leaf_status_t page_metrics(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    /* With users on: anonymous scrapes see node-level families; credentials must be right and
     * carry the metrics right on * (or admin) for the rest (docs/SECURITY.md). */
    int full = door_http_auth_metrics_view(req);
    if (full < 0) {
        return LEAF_OK;
    }
    struct sbuf b = SBUF_INIT;
    page_metrics_scrape(ctx, &b);
    if (!full && !b.failed) {
        metrics_node_level_only(&b);
    }
    door_http_respond_sbuf(req, 200, "text/plain; version=0.0.4", &b);
    sbuf_free(&b);
    return LEAF_OK;
}
