/*
 * libFuzzer harness for the request parser and router: arbitrary bytes are
 * fed to one connection's protocol layer in chunks whose sizes come from the
 * input, with the real router and handlers behind it (static-worker
 * snowflake). Any crash, sanitizer report or broken response framing is a bug.
 */
#include <stdint.h>
#include <string.h>

#include "http_proto.h"
#include "stub_daemon.h"

static struct http_loop *loop;
static struct http_proto proto;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (loop == NULL) {
        loop = stub_daemon_init();
    }
    if (size < 1) {
        return 0;
    }
    size_t chunk = (size_t)data[0] % 64 + 1;
    data++;
    size--;
    http_proto_init(&proto, loop, chunk & 1);
    size_t pos = 0;
    int retries = 0;
    while (pos < size && !proto.close_after && retries < 100) {
        size_t n = size - pos < chunk ? size - pos : chunk;
        pos += http_proto_execute(&proto, (const char *)data + pos, n);
        while (proto.waiting && retries++ < 100) {
            stub_daemon_advance(proto.req.retry_ms + 1);
            http_proto_retry(&proto);
        }
        proto.out.len = proto.out.len > (1u << 20) ? 0 : proto.out.len;
    }
    if (proto.out.len > 0 && memcmp(proto.out.data, "HTTP/1.1 ", 9) != 0) {
        __builtin_trap(); /* every response starts with a status line */
    }
    http_proto_free(&proto);
    return 0;
}
