#ifndef LEAF_METRICS_TEXT_H
#define LEAF_METRICS_TEXT_H

/*
 * Writing one family of the Prometheus text format (0.0.4) into a growable
 * buffer: its HELP and TYPE header goes out with its first sample, so a
 * family with no sample writes nothing. The lowest floor of the metrics:
 * it knows no registry, no node and no table.
 */
#include <stdint.h>
#include <stdio.h>

#include "sbuf.h"

/* The family being written; its header goes out with its first sample. */
struct metrics_out {
    struct sbuf *b;
    const char *name, *type, *help;
    int header_done;
};

void metrics_header(struct metrics_out *o);
/* name{labels} value, for a counter or integer gauge (suffix: "_bucket", "_count" or ""). */
void metrics_sample_u(struct metrics_out *o, const char *suffix, const char *labels, uint64_t v);
void metrics_sample_i(struct metrics_out *o, const char *labels, int64_t v);
/* With three decimals; +Inf and -Inf as Prometheus writes them. */
void metrics_sample_d(struct metrics_out *o, const char *labels, double v);

/* One family's row of the reference's Markdown table: | `name` | type | help | (escaped). */
void metrics_reference_row(FILE *out, const char *name, const char *type, const char *help);

#endif
