/*
 * The HTTP protocol module alone, without sockets and without the daemon:
 * framing, limits, malformed input, keep-alive, HEAD, absolute form, and
 * parked requests resumed in order. A small handler table in this file
 * stands in for the route table; the real route table is tested in test_api.c.
 */
#include <stdlib.h>

#include "http_check.h"
#include "http_feed.h"
#include "llhttp.h"
#include "unit.h"

static struct session *conn;
static int parks_left; /* /park answers after being parked this many times */
static int done_calls;

static leaf_status_t handler(struct http_request *req) {
    const char *p = req->path;
    size_t n = req->path_len;
    if (n == 7 && memcmp(p, "/health", 7) == 0) {
        if (req->method != HTTP_GET && req->method != HTTP_HEAD) {
            http_respond_ex(req, 405, "application/json", "Allow: GET, HEAD\r\n", "{}", 2);
            return LEAF_OK;
        }
        static const char body[] = "{\"status\":\"ok\"}";
        http_respond(req, 200, "application/json", body, sizeof(body) - 1);
        return LEAF_OK;
    }
    if (n == 5 && memcmp(p, "/park", 5) == 0) {
        if (req->retries < parks_left) {
            req->retry_ms = 1;
            return LEAF_EAGAIN;
        }
        char body[64];
        int len = snprintf(body, sizeof(body), "parked %d", req->retries);
        http_respond(req, 200, "text/plain", body, (size_t)len);
        return LEAF_OK;
    }
    if (n == 5 && memcmp(p, "/kept", 5) == 0) { /* Host|Origin|Content-Type|Sec-Fetch-Site */
        char body[1200];
        int len = snprintf(body, sizeof(body), "%.*s|%.*s|%.*s|%.*s",
                           req->host ? (int)req->host_len : 1, req->host ? req->host : "-",
                           req->origin ? (int)req->origin_len : 1, req->origin ? req->origin : "-",
                           req->content_type ? (int)req->content_type_len : 1,
                           req->content_type ? req->content_type : "-",
                           req->fetch_site ? (int)req->fetch_site_len : 1,
                           req->fetch_site ? req->fetch_site : "-");
        http_respond(req, 200, "text/plain", body, (size_t)len);
        return LEAF_OK;
    }
    if (n == 5 && memcmp(p, "/echo", 5) == 0) {
        http_respond(req, 200, "text/plain", req->body, req->body_len);
        return LEAF_OK;
    }
    if (n == 5 && memcmp(p, "/auth", 5) == 0) {
        http_respond(req, 200, "text/plain", req->auth, req->auth_len);
        return LEAF_OK;
    }
    if (n == 6 && memcmp(p, "/query", 6) == 0) {
        http_respond(req, 200, "text/plain", req->query, req->query_len);
        return LEAF_OK;
    }
    if (n == 4 && memcmp(p, "/err", 4) == 0) { /* an error whose message quotes the body */
        char msg[128];
        snprintf(msg, sizeof(msg), "unknown field '%.*s'", (int)req->body_len, req->body);
        http_respond_error(req, 400, "unknown_field", msg);
        return LEAF_OK;
    }
    http_respond_error(req, 404, "not_found", "no such endpoint");
    return LEAF_OK;
}

static void done(const struct http_request *req) {
    done_calls++;
}

static struct http_conn_config cfg = {handler, done, NULL};
static int client_loopback = 1;

static const char *feed_chunked(const char *text, size_t chunk) {
    if (conn != NULL) {
        http_proto_ops.close(conn);
    }
    conn = http_proto_ops.open(&cfg, client_loopback, 0);
    conn->now_ms = 1;
    return http_feed(conn, text, strlen(text), chunk);
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

/* An error's message that quotes the client's text is JSON-escaped. */
static void test_error_escaped(void) {
    const char *out = feed("POST /err HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n"
                           "a\"b\\c\x01\",\"x");
    CHECK(strstr(out, "{\"code\":\"unknown_field\",\"message\":\"unknown field "
                      "'a\\\"b\\\\c\\u0001\\\",\\\"x'\"}") != NULL);
}

static void test_simple_get(void) {
    const char *out = feed("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 200 OK\r\n"));
    CHECK(strstr(out, "Content-Length: 15\r\n") != NULL);
    CHECK(strstr(out, "{\"status\":\"ok\"}") != NULL);
    CHECK(!conn->close_after);
}

static void test_pipelined_in_order(void) {
    const char *req = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /park HTTP/1.1\r\nHost: x\r\n\r\n"
                      "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
    parks_left = 3;
    for (size_t chunk = 1; chunk <= 64; chunk *= 4) {
        const char *out = feed_chunked(req, chunk);
        const char *a = strstr(out, "200 OK"), *b = strstr(out, "404 Not Found");
        const char *c = a ? strstr(a + 1, "200 OK") : NULL;
        const char *d = strstr(out, "405 Method Not Allowed");
        CHECK(a && b && c && d);
        CHECK(a < b && b < c && c < d);
        CHECK(strstr(out, "parked 3") != NULL);
        CHECK_EQ_INT(count_of(out, "HTTP/1.1 "), 4);
    }
    parks_left = 0;
}

static void test_limits(void) {
    char big[24000];
    snprintf(big, sizeof(big), "GET /%03000d HTTP/1.1\r\nHost: x\r\n\r\n", 0);
    CHECK(starts(feed(big), "HTTP/1.1 414 "));
    CHECK(conn->close_after);

    size_t pos = (size_t)snprintf(big, sizeof(big), "GET /health HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 200; i++) {
        pos += (size_t)snprintf(big + pos, sizeof(big) - pos, "X-H%03d: %090d\r\n", i, 0);
    }
    snprintf(big + pos, sizeof(big) - pos, "\r\n");
    CHECK(starts(feed(big), "HTTP/1.1 431 "));

    CHECK(starts(feed("POST /api/leaf HTTP/1.1\r\nHost: x\r\nContent-Length: 20000\r\n\r\n"),
                 "HTTP/1.1 413 "));
    CHECK(strstr(http_feed_out, "\"code\":\"body_too_large\"") != NULL);
}

static void test_malformed(void) {
    const char *bad[] = {"GARBAGE\r\n\r\n", "GET / HTTP/1.1x\r\n\r\n",
                         "GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
                         "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
                         "\x01\x02\x03\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int before = done_calls;
        const char *out = feed(bad[i]);
        CHECK(starts(out, "HTTP/1.1 400 "));
        CHECK(strstr(out, "\"code\":\"bad_request\"") != NULL);
        CHECK(strstr(out, "Connection: close") != NULL);
        CHECK(conn->close_after);
        CHECK_EQ_INT(done_calls, before + 1); /* the completion hook hears of it */
    }
}

static void test_http10_and_connection_close(void) {
    const char *out = feed("GET /health HTTP/1.0\r\n\r\nGET /health HTTP/1.0\r\n\r\n");
    CHECK_EQ_INT(count_of(out, "HTTP/1.1 200"), 1); /* closes after the first */
    CHECK(strstr(out, "Connection: close") != NULL);
    out = feed("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    CHECK(strstr(out, "Connection: keep-alive") != NULL);
    CHECK(!conn->close_after);
    out = feed("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(strstr(out, "Connection: close") != NULL);
    CHECK(conn->close_after);
}

static void test_chunked_body_accepted(void) {
    const char *out =
        feed("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
             "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 200 "));
    CHECK(strstr(out, "\r\n\r\nhello world") != NULL);
    CHECK_EQ_INT(count_of(out, "HTTP/1.1 "), 2);
}

static void test_request_parts(void) {
    const char *out = feed("GET /query?a=1&b=2 HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(strstr(out, "\r\n\r\na=1&b=2") != NULL);
    out = feed_chunked("GET /auth HTTP/1.1\r\nHost: x\r\nX-Other: 1\r\nAuthorization: Bearer "
                       "only\r\n\r\n",
                       3);
    CHECK(strstr(out, "\r\n\r\nBearer only") != NULL);
    /* Two credentials: which one counts would be a guess (docs/SECURITY.md). */
    out = feed("GET /auth HTTP/1.1\r\nHost: x\r\nAuthorization: Basic first\r\n"
               "Authorization: Bearer last\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 400 "));
    CHECK(conn->close_after);
    /* The headers of the same-origin rule reach the handler, split across reads too. */
    out = feed_chunked("POST /kept HTTP/1.1\r\nHost: a.example:81\r\nOrigin: http://b\r\n"
                       "Content-Type: application/json\r\nSec-Fetch-Site: cross-site\r\n"
                       "Content-Length: 2\r\n\r\n{}",
                       4);
    CHECK(strstr(out, "\r\n\r\na.example:81|http://b|application/json|cross-site") != NULL);
    out = feed("GET /kept HTTP/1.0\r\n\r\n");
    CHECK(strstr(out, "\r\n\r\n-|-|-|-") != NULL);
    CHECK(starts(feed("GET /kept HTTP/1.1\r\nHost: x\r\nOrigin: a\r\nOrigin: b\r\n\r\n"),
                 "HTTP/1.1 400 "));
}

static void test_same_origin_checks(void) {
    CHECK(http_check_same_origin("http://127.0.0.1:8080", 21, "127.0.0.1:8080", 14));
    CHECK(http_check_same_origin("HTTP://Node.Example", 19, "node.example:80", 15));
    CHECK(http_check_same_origin("https://n", 9, "n:443", 5));
    CHECK(http_check_same_origin("http://[::1]:80", 15, "[::1]", 5));
    CHECK(!http_check_same_origin("http://evil.example", 19, "127.0.0.1:8080", 14));
    CHECK(!http_check_same_origin("http://127.0.0.1:8081", 21, "127.0.0.1:8080", 14));
    CHECK(!http_check_same_origin("https://127.0.0.1:80", 20, "127.0.0.1", 9));
    CHECK(!http_check_same_origin("null", 4, "null", 4));
    CHECK(!http_check_same_origin("http://a/x", 10, "a", 1));
    CHECK(!http_check_same_origin("http://u@a", 10, "a", 1));
    CHECK(!http_check_same_origin("http://a:99999", 14, "a:99999", 7));
    CHECK(http_check_json_type("application/json", 16));
    CHECK(http_check_json_type(" Application/JSON; charset=utf-8", 32));
    CHECK(!http_check_json_type("application/jsonp", 17));
    CHECK(!http_check_json_type("text/plain", 10));
    CHECK(http_check_cross_site("Cross-Site", 10));
    CHECK(!http_check_cross_site("same-origin", 11));
}

static void test_head_and_absolute_form(void) {
    const char *out =
        feed("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 200 OK\r\n"));
    CHECK(strstr(out, "Content-Length: 15\r\n\r\nHTTP/1.1 200") != NULL); /* no HEAD body */
    CHECK_EQ_INT(count_of(out, "{\"status\":\"ok\"}"), 1);
    CHECK(starts(feed("GET http://example.com:8080/health HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 200 "));
}

static void test_timeout_and_idle(void) {
    feed("GET /health HTTP/1.1\r\nHost: x\r\n");
    CHECK(conn->head_started_ms != 0);
    http_proto_ops.timeout(conn);
    CHECK(strstr(conn->out.data, "HTTP/1.1 408 ") != NULL);
    CHECK(conn->close_after);
    feed("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK_EQ_INT(conn->head_started_ms, 0);
    http_proto_ops.idle(conn); /* buffers go; the connection still works */
    sbuf_reset(&conn->out);
    http_feed(conn, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 33, 5);
    CHECK(starts(http_feed_out, "HTTP/1.1 200 OK\r\n"));
}

/* RFC 9112: each refused head gets its status and a close, in any split of the bytes. */
static void test_rfc9112_refusals(void) {
    static const struct {
        const char *req;
        const char *status;
    } cases[] = {
        {"GET /health HTTP/1.1\r\nHost : x\r\n\r\n", "400"},
        {"GET /health HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "400"},
        {"GET /health HTTP/1.1\r\nHost: a b\r\n\r\n", "400"},
        {"POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", "400"},
        {"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", "400"},
        {"GET /health HTTP/1.1\r\nX-A:\r\n\tb\r\nHost: x\r\n\r\n", "400"},
        {"GET /health HTTP/1.1\r\n\r\n", "400"},
        {"GET /health HTTP/2.0\r\nHost: x\r\n\r\n", "505"},
        {"GET /health\r\n\r\n", "400"},
        {"GET /health HTTP/0.9\r\n\r\n", "400"},
        {"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: magic\r\nContent-Length: 1\r\n\r\na", "417"},
        {"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
         "1\r\na\r\n0\r\n\r\n",
         "501"},
        {"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", "400"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (size_t chunk = 1; chunk <= 4096; chunk *= 8) {
            char want[16];
            snprintf(want, sizeof(want), "HTTP/1.1 %s ", cases[i].status);
            const char *out = feed_chunked(cases[i].req, chunk);
            if (!starts(out, want) || !conn->close_after) {
                fprintf(stderr, "case %zu chunk %zu: %.300s\n", i, chunk, out);
            }
            CHECK(starts(out, want));
            CHECK(conn->close_after);
        }
    }
}

/* What RFC 9112 lets through: HTTP/1.2 as 1.1, blanks around Host, values split anywhere. */
static void test_rfc9112_accepted(void) {
    static const char *ok[] = {
        "GET /health HTTP/1.2\r\nHost: x\r\n\r\n",
        "GET /health HTTP/1.1\r\nHost:\t127.0.0.1:8080 \r\nX-A:  a b  c\r\n\r\n",
        "GET /health HTTP/1.1\r\nHost:\r\n\r\n",
        "GET /health HTTP/1.1\r\nHost: [::1]:80\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET /health HTTP/1.0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        for (size_t chunk = 1; chunk <= 4096; chunk *= 2) {
            const char *out = feed_chunked(ok[i], chunk);
            if (!starts(out, "HTTP/1.1 200 ")) {
                fprintf(stderr, "case %zu chunk %zu: %.300s\n", i, chunk, out);
            }
            CHECK(starts(out, "HTTP/1.1 200 "));
        }
    }
}

/* Expect: 100-continue gets its interim answer before the final one (not for HTTP/1.0). */
static void test_expect_continue(void) {
    const char *out = feed("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\n"
                           "Content-Length: 5\r\n\r\nhello");
    CHECK(starts(out, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"));
    CHECK(strstr(out, "\r\n\r\nhello") != NULL);
    CHECK(!conn->close_after);
    out = feed("POST /echo HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello");
    CHECK(starts(out, "HTTP/1.1 200 OK\r\n"));
    out = feed("GET /health HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 200 OK\r\n")); /* no body: nothing to continue */
}

int main(void) {
    TEST(test_simple_get);
    TEST(test_error_escaped);
    TEST(test_pipelined_in_order);
    TEST(test_limits);
    TEST(test_malformed);
    TEST(test_http10_and_connection_close);
    TEST(test_chunked_body_accepted);
    TEST(test_request_parts);
    TEST(test_same_origin_checks);
    TEST(test_head_and_absolute_form);
    TEST(test_timeout_and_idle);
    TEST(test_rfc9112_refusals);
    TEST(test_rfc9112_accepted);
    TEST(test_expect_continue);
    http_proto_ops.close(conn);
    return unit_done();
}
