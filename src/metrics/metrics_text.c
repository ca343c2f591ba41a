#include "metrics_text.h"

#include <inttypes.h>
#include <math.h>

void metrics_header(struct metrics_out *o) {
    if (!o->header_done) {
        sbuf_printf(o->b, "# HELP %s %s\n# TYPE %s %s\n", o->name, o->help, o->name, o->type);
        o->header_done = 1;
    }
}

void metrics_sample_u(struct metrics_out *o, const char *suffix, const char *labels, uint64_t v) {
    metrics_header(o);
    sbuf_printf(o->b, "%s%s%s%s%s %" PRIu64 "\n", o->name, suffix, labels ? "{" : "",
                labels ? labels : "", labels ? "}" : "", v);
}

void metrics_sample_i(struct metrics_out *o, const char *labels, int64_t v) {
    metrics_header(o);
    sbuf_printf(o->b, "%s%s%s%s %" PRId64 "\n", o->name, labels ? "{" : "", labels ? labels : "",
                labels ? "}" : "", v);
}

void metrics_sample_d(struct metrics_out *o, const char *labels, double v) {
    metrics_header(o);
    if (isinf(v)) {
        sbuf_printf(o->b, "%s%s%s%s %s\n", o->name, labels ? "{" : "", labels ? labels : "",
                    labels ? "}" : "", v > 0 ? "+Inf" : "-Inf");
    } else {
        sbuf_printf(o->b, "%s%s%s%s %.3f\n", o->name, labels ? "{" : "", labels ? labels : "",
                    labels ? "}" : "", v);
    }
}

void metrics_reference_row(FILE *out, const char *name, const char *type, const char *help) {
    fprintf(out, "| `%s` | %s | ", name, type);
    for (const char *c = help; *c != '\0'; c++) {
        if (*c == '<' || *c == '>') {
            fputs(*c == '<' ? "&lt;" : "&gt;", out);
            continue;
        }
        if (*c == '|') {
            fputc('\\', out);
        }
        fputc(*c, out);
    }
    fputs(" |\n", out);
}
