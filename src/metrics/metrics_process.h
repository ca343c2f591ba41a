#ifndef LEAF_METRICS_PROCESS_H
#define LEAF_METRICS_PROCESS_H

/*
 * The process's own families (metrics_process.c): readiness as a gauge,
 * what was built, and the standard process_* families every Prometheus
 * client library exports (read from getrusage, getrlimit and /proc, so
 * Linux only). Rows of METRICS_FAMILIES (metrics_scrape.c).
 */
#include "metrics_snap.h"

void f_ready(struct metrics_out *o, const struct metrics_snap *s);
void f_build_info(struct metrics_out *o, const struct metrics_snap *s);
void f_process_cpu(struct metrics_out *o, const struct metrics_snap *s);
void f_process_rss(struct metrics_out *o, const struct metrics_snap *s);
void f_process_open_fds(struct metrics_out *o, const struct metrics_snap *s);
void f_process_max_fds(struct metrics_out *o, const struct metrics_snap *s);
void f_process_start(struct metrics_out *o, const struct metrics_snap *s);

#endif
