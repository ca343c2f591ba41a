/* Request parsing edge cases: the protocol layer driven without sockets. */
#include <stdlib.h>

#include "api.h"
#include "http_proto.h"
#include "stub_daemon.h"
#include "unit.h"

static struct http_loop *loop;
static struct http_proto proto;
static char outbuf[1 << 20];

static int client_loopback = 1;

/* Feeds text in chunks of `chunk` bytes; returns all output as a string. */
static const char *feed_chunked(const char *text, size_t chunk) {
    http_proto_free(&proto);
    http_proto_init(&proto, loop, client_loopback);
    size_t len = strlen(text), pos = 0;
    while (pos < len && !proto.close_after) {
        size_t n = len - pos < chunk ? len - pos : chunk;
        size_t used = 0;
        while (used < n && !proto.close_after) {
            used += http_proto_execute(&proto, text + pos + used, n - used);
            while (proto.waiting) {
                stub_daemon_advance(proto.req.retry_ms);
                http_proto_retry(&proto);
            }
        }
        pos += n;
    }
    size_t olen = proto.out.len < sizeof(outbuf) - 1 ? proto.out.len : sizeof(outbuf) - 1;
    memcpy(outbuf, proto.out.data ? proto.out.data : "", olen);
    outbuf[olen] = '\0';
    return outbuf;
}

static const char *feed(const char *text) {
    return feed_chunked(text, 1 << 20);
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) {
        n++;
    }
    return n;
}

static int starts(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_simple_get(void) {
    const char *out = feed("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 200 OK\r\n"));
    CHECK(strstr(out, "Content-Length: 15\r\n") != NULL);
    CHECK(strstr(out, "{\"status\":\"ok\"}") != NULL);
    CHECK(!proto.close_after);
}

static void test_pipelined_in_order(void) {
    const char *req = "GET /health HTTP/1.1\r\n\r\n"
                      "GET /nope HTTP/1.1\r\n\r\n"
                      "GET /api/snowflake/get/a?count=2 HTTP/1.1\r\n\r\n"
                      "POST /health HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
    for (size_t chunk = 1; chunk <= 64; chunk *= 4) {
        const char *out = feed_chunked(req, chunk);
        const char *a = strstr(out, "200 OK"), *b = strstr(out, "404 Not Found");
        const char *c = a ? strstr(a + 1, "200 OK") : NULL;
        const char *d = strstr(out, "405 Method Not Allowed");
        CHECK(a && b && c && d);
        CHECK(a < b && b < c && c < d);
        CHECK_EQ_INT(count_of(out, "HTTP/1.1 "), 4);
    }
}

static void test_limits(void) {
    char big[12000];
    snprintf(big, sizeof(big), "GET /%03000d HTTP/1.1\r\n\r\n", 0);
    CHECK(starts(feed(big), "HTTP/1.1 414 "));
    CHECK(proto.close_after);

    size_t pos = (size_t)snprintf(big, sizeof(big), "GET /health HTTP/1.1\r\n");
    for (int i = 0; i < 100; i++) {
        pos += (size_t)snprintf(big + pos, sizeof(big) - pos, "X-H%02d: %090d\r\n", i, 0);
    }
    snprintf(big + pos, sizeof(big) - pos, "\r\n");
    CHECK(starts(feed(big), "HTTP/1.1 431 "));

    CHECK(starts(feed("POST /api/leaf HTTP/1.1\r\nContent-Length: 20000\r\n\r\n"), "HTTP/1.1 413 "));
    CHECK(strstr(outbuf, "\"code\":\"body_too_large\"") != NULL);
}

static void test_malformed(void) {
    const char *bad[] = {"GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "GET /health HTTP/1.1\r\nBad Header\r\n\r\n",
                         "GET /health HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "\x01\x02\x03\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *out = feed(bad[i]);
        CHECK(starts(out, "HTTP/1.1 400 "));
        CHECK(strstr(out, "\"code\":\"bad_request\"") != NULL);
        CHECK(strstr(out, "Connection: close") != NULL);
        CHECK(proto.close_after);
    }
}

static void test_http10_and_connection_close(void) {
    const char *out = feed("GET /health HTTP/1.0\r\n\r\nGET /health HTTP/1.0\r\n\r\n");
    CHECK_EQ_INT(count_of(out, "HTTP/1.1 200"), 1); /* closes after the first */
    CHECK(strstr(out, "Connection: close") != NULL);
    out = feed("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    CHECK(strstr(out, "Connection: keep-alive") != NULL);
    CHECK(!proto.close_after);
    out = feed("GET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
    CHECK(strstr(out, "Connection: close") != NULL);
    CHECK(proto.close_after);
}

static void test_routes_and_inputs(void) {
    CHECK(starts(feed("GET /api/snowflake/get/ HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(strstr(outbuf, "\"code\":\"bad_tag\"") != NULL);
    CHECK(starts(feed("GET /api/snowflake/get/a%2Fb HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /api/snowflake/get/a/b HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /api/snowflake/get/a?count=0 HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(strstr(outbuf, "\"code\":\"bad_count\"") != NULL);
    CHECK(starts(feed("GET /api/snowflake/get/a?count=10001 HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /api/snowflake/get/a?x=1&count=3 HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 "));
    const char *body = strstr(outbuf, "\r\n\r\n") + 4;
    CHECK_EQ_INT(count_of(body, "\n"), 2);
    CHECK(starts(feed("DELETE /health HTTP/1.1\r\n\r\n"), "HTTP/1.1 405 "));
    CHECK(starts(feed("GET /decodeSnowflakeId?snowflakeId=-5 HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /decodeSnowflakeId?snowflakeId=99999999999999999999 HTTP/1.1\r\n\r\n"),
                 "HTTP/1.1 400 "));
}

static void test_chunked_body_accepted(void) {
    const char *out = feed("POST /health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "5\r\nhello\r\n0\r\n\r\nGET /health HTTP/1.1\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 405 "));
    CHECK_EQ_INT(count_of(out, "HTTP/1.1 "), 2);
}

static void test_head_absolute_form_and_allow(void) {
    const char *out = feed("HEAD /health HTTP/1.1\r\n\r\nGET /health HTTP/1.1\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 200 OK\r\n"));
    CHECK(strstr(out, "Content-Length: 15\r\n\r\nHTTP/1.1 200") != NULL); /* no HEAD body */
    CHECK_EQ_INT(count_of(out, "{\"status\":\"ok\"}"), 1);
    CHECK(starts(feed("GET http://example.com:8080/health HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 "));
    out = feed("POST /health HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 405 "));
    CHECK(strstr(out, "\r\nAllow: GET, HEAD\r\n") != NULL);
    CHECK(starts(feed("GET /api/snowflake/get/a?count HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /api/snowflake/get/a?count= HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 "));
}

/* Without leafd.admin.token, admin endpoints answer loopback clients only. */
static void test_admin_loopback_rule(void) {
    client_loopback = 0;
    const char *out = feed("POST /api/leaf HTTP/1.1\r\nContent-Length: 15\r\n\r\n{\"biz_tag\":\"x\"}");
    CHECK(starts(out, "HTTP/1.1 403 "));
    CHECK(strstr(out, "\"code\":\"forbidden\"") != NULL);
    CHECK(starts(feed("GET /db HTTP/1.1\r\n\r\n"), "HTTP/1.1 403 "));
    CHECK(starts(feed("PUT /api/leaf/step HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"), "HTTP/1.1 403 "));
    CHECK(starts(feed("GET /api/snowflake/get/a HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 "));
    client_loopback = 1;
    CHECK(!starts(feed("GET /db HTTP/1.1\r\n\r\n"), "HTTP/1.1 403 "));
}

static void test_format_i64(void) {
    const int64_t vals[] = {0, 7, 10, 99, 100, 101, 12345, 2124417544092667996LL, INT64_MAX, -1, -100};
    char a[32], b[32];
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        a[api_format_i64(a, vals[i])] = '\0';
        snprintf(b, sizeof(b), "%" PRId64, vals[i]);
        CHECK_EQ_STR(a, b);
    }
}

int main(void) {
    loop = stub_daemon_init();
    TEST(test_simple_get);
    TEST(test_pipelined_in_order);
    TEST(test_limits);
    TEST(test_malformed);
    TEST(test_http10_and_connection_close);
    TEST(test_routes_and_inputs);
    TEST(test_chunked_body_accepted);
    TEST(test_head_absolute_form_and_allow);
    TEST(test_admin_loopback_rule);
    TEST(test_format_i64);
    http_proto_free(&proto);
    return unit_done();
}
