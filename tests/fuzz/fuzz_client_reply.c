/*
 * libFuzzer harness for what libleafd-client reads from a node (src/client, pure code, linked
 * alone as leaf_client_core): the head of an answer (client_head.c) and its body as a range, a
 * batch of IDs or an error code (client_reply.c). A node, or whatever answers in its place,
 * writes these bytes; the library must never read past them nor take IDs they do not hold.
 *
 * The first input byte is the count asked (1..64); the rest is an answer, head and body, read as
 * client_http.c reads one. Checked, besides crashes and sanitizer reports (the body is copied
 * into a buffer of its exact size, so a read past it is reported):
 * - a head taken has a status 100..599 and a length within the bound it was given;
 * - a range taken is 1 <= start <= end with at most the count asked;
 * - a batch taken is 1 to the count asked IDs, each positive and above the one before;
 * - an error code is a terminated string within its buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client_head.h"
#include "client_reply.h"

/* The most a connection buffers (client_http.c). */
#define ANSWER_MAX ((size_t)1024 * 1024)

static void check_body(const char *body, size_t len, int64_t want) {
    int64_t start, end, ids[64];
    if (client_reply_range(body, len, want, &start, &end) == 0 &&
        (start < 1 || end < start || end - start >= want)) {
        __builtin_trap();
    }
    int64_t n = client_reply_list(body, len, ids, want);
    if (n != -1 && (n < 1 || n > want)) {
        __builtin_trap();
    }
    for (int64_t i = 0; i < n; i++) {
        if (ids[i] < 1 || (i > 0 && ids[i] <= ids[i - 1])) {
            __builtin_trap();
        }
    }
    char code[16];
    client_reply_code(body, len, code, sizeof(code));
    if (memchr(code, '\0', sizeof(code)) == NULL) {
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    int64_t want = 1 + data[0] % 64;
    const char *answer = (const char *)data + 1;
    size_t len = size - 1;
    const char *end = memmem(answer, len, "\r\n\r\n", 4);
    if (end == NULL) {
        check_body(answer, len, want); /* a body alone, as if its head were fine */
        return 0;
    }
    size_t head_len = (size_t)(end - answer) + 4;
    char *head = malloc(head_len - 2);
    memcpy(head, answer, head_len - 2);
    struct client_head h;
    /* A small bound too: the length check must hold for any bound, not only the library's. */
    size_t bound = data[0] & 1 ? ANSWER_MAX - head_len : len - head_len;
    int rc = client_head_parse(head, head_len - 2, bound, &h);
    free(head);
    if (rc != 0) {
        return 0;
    }
    /* A redirect's Location, when there is one, lies inside the head. */
    if (h.status < 100 || h.status > 599 || h.body_len > bound ||
        h.location_off + h.location_len > head_len - 2) {
        __builtin_trap();
    }
    if (len - head_len != h.body_len) {
        return 0; /* a cut answer, or bytes past it: client_http.c refuses both */
    }
    char *body = malloc(h.body_len ? h.body_len : 1);
    memcpy(body, answer + head_len, h.body_len);
    check_body(body, h.body_len, want);
    free(body);
    return 0;
}
