/*
 * libFuzzer harness for the RESP protocol module and the command table:
 * arbitrary bytes are fed to one connection (src/resp/resp_conn.c) in chunks
 * whose sizes come from the input, with the real command handlers behind
 * it on a real API context (static-worker snowflake, segment off;
 * tests/support/api_fixture.c). Any crash, sanitizer report or reply that
 * does not start with a RESP type byte is a bug.
 */
#include <stdint.h>
#include <string.h>

#include "api_fixture.h"
#include "resp_conn.h"

static int resp_type_byte(char c) {
    return c != '\0' && strchr("+-:$*%~=_#,(!|>", c) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    api_fixture_init();
    if (size < 1) {
        return 0;
    }
    size_t chunk = (size_t)data[0] % 64 + 1;
    data++;
    size--;
    struct session *s = api_fixture_resp_conn(chunk & 1);
    size_t pos = 0;
    int retries = 0;
    while (pos < size && !s->close_after && retries < 100) {
        size_t n = size - pos < chunk ? size - pos : chunk;
        pos += resp_proto_ops.input(s, (const char *)data + pos, n);
        while (s->waiting && retries++ < 100) {
            s->now_ms += s->resume_after_ms + 1;
            resp_proto_ops.resume(s);
        }
        if (s->out.len > 0 && !resp_type_byte(s->out.data[0])) {
            __builtin_trap(); /* every reply starts with its type */
        }
        if (s->out.len > (1u << 20)) {
            sbuf_reset(&s->out);
        }
    }
    api_fixture_resp_close(s);
    return 0;
}
