/*
 * libFuzzer harness for the HTTP protocol and the route table: arbitrary bytes
 * are fed to one connection's protocol state in chunks whose sizes come from
 * the input, with the real route table and handlers behind it on a real API
 * context (static-worker snowflake; tests/support/api_fixture.c). Any crash,
 * sanitizer report or broken response framing is a bug.
 */
#include <stdint.h>
#include <string.h>

#include "api_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    api_fixture_init();
    if (size < 1) {
        return 0;
    }
    size_t chunk = (size_t)data[0] % 64 + 1;
    data++;
    size--;
    struct session *s = api_fixture_conn(chunk & 1);
    size_t pos = 0;
    int retries = 0;
    while (pos < size && !s->close_after && retries < 100) {
        size_t n = size - pos < chunk ? size - pos : chunk;
        pos += http_proto_ops.input(s, (const char *)data + pos, n);
        while (s->waiting && retries++ < 100) {
            s->now_ms += s->resume_after_ms + 1;
            http_proto_ops.resume(s);
        }
        if (s->out.len > 0 && memcmp(s->out.data, "HTTP/1.1 ", 9) != 0) {
            __builtin_trap(); /* every response starts with a status line */
        }
        if (s->out.len > (1u << 20)) {
            sbuf_reset(&s->out);
        }
    }
    api_fixture_close(s);
    return 0;
}
