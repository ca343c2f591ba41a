#ifndef LEAF_HTTP_FEED_H
#define LEAF_HTTP_FEED_H

/*
 * Drives one HTTP connection's protocol state as the server would, without
 * sockets: input in chunks of `chunk` bytes, parked requests resumed (after
 * a short real sleep, as their retry_ms may be a clock wait), until the
 * input is used or the connection wants to close. Returns the output.
 */
#include <string.h>
#include <time.h>

#include "http_conn.h"

static char http_feed_out[1 << 20];

static const char *http_feed(struct session *s, const char *text, size_t len, size_t chunk) {
    size_t pos = 0;
    int resumes = 0;
    while (pos < len && !s->close_after) {
        size_t n = len - pos < chunk ? len - pos : chunk;
        size_t used = 0;
        while (used < n && !s->close_after) {
            used += http_proto_ops.input(s, text + pos + used, n - used);
            while (s->waiting && resumes++ < 2000) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
                s->now_ms += 1;
                http_proto_ops.resume(s);
            }
        }
        pos += n;
    }
    size_t olen = s->out.len < sizeof(http_feed_out) - 1 ? s->out.len : sizeof(http_feed_out) - 1;
    memcpy(http_feed_out, s->out.data ? s->out.data : "", olen);
    http_feed_out[olen] = '\0';
    return http_feed_out;
}

#endif
