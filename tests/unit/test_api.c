/*
 * The route table and the handlers behind the HTTP protocol, on a real API
 * context (tests/support/api_fixture.c: static-worker snowflake, segment
 * off), without sockets: route matching, 404/405 with Allow, tag and count
 * validation, the admin loopback rule, IDs.
 */
#include <stdlib.h>

#include "api_fixture.h"
#include "http_feed.h"
#include "unit.h"

static struct session *conn;
static int client_loopback = 1;

static const char *feed_chunked(const char *text, size_t chunk) {
    if (conn != NULL) {
        api_fixture_close(conn);
    }
    conn = api_fixture_conn(client_loopback);
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

static void test_pipelined_in_order(void) {
    const char *req = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /api/snowflake/get/a?count=2 HTTP/1.1\r\nHost: x\r\n\r\n"
                      "POST /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n";
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

static void test_routes_and_inputs(void) {
    CHECK(starts(feed("GET /api/snowflake/get/ HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(strstr(http_feed_out, "\"code\":\"bad_tag\"") != NULL);
    CHECK(
        starts(feed("GET /api/snowflake/get/a%2Fb HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /api/snowflake/get/a/b HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /api/snowflake/get/a?count=0 HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 400 "));
    CHECK(strstr(http_feed_out, "\"code\":\"bad_count\"") != NULL);
    CHECK(starts(feed("GET /api/snowflake/get/a?count=10001 HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /api/snowflake/get/a?x=1&count=3 HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 200 "));
    const char *body = strstr(http_feed_out, "\r\n\r\n") + 4;
    CHECK_EQ_INT(count_of(body, "\n"), 2);
    CHECK(starts(feed("GET /api/snowflake/get/a?count=1000 HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 200 "));
    body = strstr(http_feed_out, "\r\n\r\n") + 4;
    CHECK_EQ_INT(count_of(body, "\n"), 999);
    CHECK(starts(feed("DELETE /health HTTP/1.1\r\nHost: localhost\r\n\r\n"), "HTTP/1.1 405 "));
    /* HEAD on an ID endpoint would spend an ID unseen: 405, Allow: GET. */
    const char *head = feed("HEAD /api/snowflake/get/a HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(starts(head, "HTTP/1.1 405 "));
    CHECK(strstr(head, "\r\nAllow: GET\r\n") != NULL);
    CHECK(starts(feed("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 "));
    CHECK(starts(feed("GET /decodeSnowflakeId?snowflakeId=-5 HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 400 "));
    CHECK(starts(
        feed("GET /decodeSnowflakeId?snowflakeId=99999999999999999999 HTTP/1.1\r\nHost: x\r\n\r\n"),
        "HTTP/1.1 400 "));
}

static void test_allow_and_query_edge_cases(void) {
    const char *out = feed("POST /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 405 "));
    CHECK(strstr(out, "\r\nAllow: GET, HEAD\r\n") != NULL);
    CHECK(starts(feed("GET /api/snowflake/get/a?count HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 400 "));
    CHECK(starts(feed("GET /api/snowflake/get/a?count= HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 400 "));
    CHECK(
        starts(feed("POST /health HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "5\r\nhello\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n"),
               "HTTP/1.1 405 "));
    CHECK_EQ_INT(count_of(http_feed_out, "HTTP/1.1 "), 2);
}

/* Without leafd.admin.token, admin endpoints answer loopback clients only. */
static void test_admin_loopback_rule(void) {
    client_loopback = 0;
    const char *out =
        feed("POST /api/leaf HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
             "Content-Length: 15\r\n\r\n{\"biz_tag\":\"x\"}");
    CHECK(starts(out, "HTTP/1.1 403 "));
    CHECK(strstr(out, "\"code\":\"forbidden\"") != NULL);
    CHECK(starts(feed("GET /db HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 403 "));
    CHECK(starts(feed("PUT /api/leaf/step HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                      "application/json\r\nContent-Length: 2\r\n\r\n{}"),
                 "HTTP/1.1 403 "));
    CHECK(starts(feed("GET /api/snowflake/get/a HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 "));
    client_loopback = 1;
    CHECK(!starts(feed("GET /db HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 403 "));
}

/* State changes: JSON only, same origin only (docs/SECURITY.md), before credentials. */
static void test_state_changes_same_origin(void) {
    client_loopback = 1;
    const char *out = feed("POST /api/cluster/demote HTTP/1.1\r\nHost: localhost\r\n"
                           "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}");
    CHECK(starts(out, "HTTP/1.1 415 "));
    CHECK(strstr(out, "\"code\":\"unsupported_media_type\"") != NULL);
    CHECK(starts(feed("DELETE /api/users/u HTTP/1.1\r\nHost: localhost\r\n\r\n"), "HTTP/1.1 415 "));
    out = feed("POST /api/leaf HTTP/1.1\r\nHost: localhost\r\nOrigin: http://evil.example\r\n"
               "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    CHECK(starts(out, "HTTP/1.1 403 "));
    CHECK(strstr(out, "\"code\":\"cross_origin\"") != NULL);
    CHECK(starts(
        feed("PUT /api/leaf/step HTTP/1.1\r\nHost: localhost\r\nSec-Fetch-Site: cross-site\r\n"
             "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"),
        "HTTP/1.1 403 "));
    /* The node's own origin passes on to the handler (here: 400, an empty biz_tag). */
    out = feed(
        "PUT /api/leaf/step HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: http://localhost:8080\r\n"
        "Sec-Fetch-Site: same-origin\r\nContent-Type: application/json; charset=utf-8\r\n"
        "Content-Length: 2\r\n\r\n{}");
    CHECK(!starts(out, "HTTP/1.1 403 ") && !starts(out, "HTTP/1.1 415 "));
    /* Host must name the node (DNS rebinding): Host and Origin that agree are not enough. */
    out = feed("POST /api/leaf HTTP/1.1\r\nHost: evil.example:8080\r\n"
               "Origin: http://evil.example:8080\r\nContent-Type: application/json\r\n"
               "Content-Length: 2\r\n\r\n{}");
    CHECK(starts(out, "HTTP/1.1 403 "));
    CHECK(strstr(out, "\"code\":\"host_not_allowed\"") != NULL);
    CHECK(!starts(feed("PUT /api/leaf/step HTTP/1.1\r\nHost: 127.1.2.3:8080\r\n"
                       "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"),
                  "HTTP/1.1 403 "));
    /* GETs are not state changes: an Origin is no reason to refuse them. */
    CHECK(starts(feed("GET /health HTTP/1.1\r\nHost: x\r\nOrigin: http://evil\r\n\r\n"),
                 "HTTP/1.1 200 "));
}

/* Every HTML page: no script, no frame, no sniffing. */
static void test_page_headers(void) {
    const char *out = feed("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(starts(out, "HTTP/1.1 200 "));
    CHECK(strstr(out, "\r\nContent-Security-Policy: default-src 'none'; style-src "
                      "'unsafe-inline'\r\n") != NULL);
    CHECK(strstr(out, "\r\nX-Frame-Options: DENY\r\n") != NULL);
    CHECK(strstr(out, "\r\nX-Content-Type-Options: nosniff\r\n") != NULL);
    CHECK(strstr(out, "<script") == NULL && strstr(out, "javascript:") == NULL);
}

/*
 * /ready?mode=: readiness of the modes a Service needs (docs/kubernetes.md, "Probes"). The
 * fixture runs snowflake (static worker) with segment off: a probe that asks for segment is
 * answered 503, one that asks for snowflake or any enabled mode 200, a bad name 400 naming it.
 */
static void test_ready_modes(void) {
    CHECK(starts(feed("GET /ready?mode=snowflake HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 "));
    CHECK(starts(feed("GET /ready?mode=any HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 "));
    CHECK(starts(feed("GET /ready?mode=segment HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 503 "));
    CHECK(strstr(http_feed_out, "segment: disabled") != NULL);
    CHECK(starts(feed("GET /ready?mode=snowflake,segment HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 503 "));
    CHECK(starts(feed("GET /ready?mode=snowflak HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 400 "));
    CHECK(strstr(http_feed_out, "mode") != NULL && strstr(http_feed_out, "snowflak") != NULL);
}

/* A 400 of the shapes' and decoding routes names the parameter it refuses. */
static void test_bad_request_names_field(void) {
    static const struct {
        const char *path, *field;
    } cases[] = {
        {"/decodeSnowflakeId?snowflakeId=x", "snowflakeId"},
        {"/decodeSnowflakeId", "snowflakeId"},
        {"/decodeUuid?uuid=nope", "uuid"},
        {"/decodeUuid", "uuid"},
        {"/api/uuid/get/k?count=0", "count"},
        {"/api/snowflake/get/k?count=x", "count"},
        {"/ready?mode=", "mode"},
    };
    char req[256], want[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", cases[i].path);
        snprintf(want, sizeof(want), "\"message\":\"%s", cases[i].field);
        const char *out = feed(req);
        CHECK(starts(out, "HTTP/1.1 400 "));
        if (strstr(out, want) == NULL) {
            fprintf(stderr, "%s: the 400 does not start its message with %s: %s\n", cases[i].path,
                    cases[i].field, out);
            CHECK(0);
        }
    }
}

static void test_views(void) {
    CHECK(starts(feed("GET /ready HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 "));
    CHECK(strstr(http_feed_out, "\"mode\":\"static\"") != NULL);
    CHECK(starts(feed("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 "));
    CHECK(strstr(http_feed_out, "# TYPE leafd_ids_issued_total counter\n") != NULL);
    CHECK(strstr(http_feed_out, "leafd_http_requests_total{protocol=\"http\",route=\"snowflake_"
                                "get\",status=\"200\"}") != NULL);
    CHECK(strstr(http_feed_out, "leafd_zk_session_connected") == NULL); /* static mode */
    CHECK(starts(feed("GET /cache HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 "));
    CHECK(strstr(http_feed_out, "segment mode is disabled") != NULL);
    /* The pages' query: anything outside the tag alphabet is no filter, numbers are clamped. */
    CHECK(starts(feed("GET /cache?tag=%3Cb%3E&page=-5&per=999999&sort=nope&refresh=x "
                      "HTTP/1.1\r\nHost: x\r\n\r\n"),
                 "HTTP/1.1 200 "));
    CHECK(strstr(http_feed_out, "<b>&lt;") == NULL && strstr(http_feed_out, "%3C") == NULL);
    CHECK(strstr(http_feed_out, "value=\"1000\"") != NULL); /* per capped at 1000 */
    CHECK(starts(feed("GET /cluster HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 "));
    CHECK(strstr(http_feed_out, "no cluster survey in this process") != NULL);
    CHECK(strstr(http_feed_out, "href=\"/cache\"") != NULL);
}

int main(void) {
    api_fixture_init();
    TEST(test_pipelined_in_order);
    TEST(test_routes_and_inputs);
    TEST(test_allow_and_query_edge_cases);
    TEST(test_admin_loopback_rule);
    TEST(test_views);
    TEST(test_ready_modes);
    TEST(test_bad_request_names_field);
    TEST(test_state_changes_same_origin);
    TEST(test_page_headers);
    api_fixture_close(conn);
    api_fixture_done();
    return unit_done();
}
