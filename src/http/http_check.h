#ifndef LEAF_HTTP_CHECK_H
#define LEAF_HTTP_CHECK_H

/*
 * The checks of RFC 9112 that llhttp leaves to its user, on the bytes of
 * one header at a time: whitespace in a field name, a Host value that is no
 * uri-host[:port], a transfer coding other than chunked, an expectation
 * other than 100-continue, and folded header lines (obs-fold). Pure
 * functions over byte ranges; http_conn.c decides what to answer.
 */
#include <stddef.h>

/* 1 when a header field name holds a space or a tab ("Host :"), which RFC 9112 5.1 refuses. */
int http_check_name_has_blank(const char *name, size_t len);

/* 1 when a Host value (blanks around it allowed) is a uri-host with an optional port. */
int http_check_host(const char *value, size_t len);

/* 1 when every coding of a Transfer-Encoding list is "chunked" (any case). */
int http_check_te_chunked_only(const char *value, size_t len);

/* 1 when an Expect value is "100-continue" (any case, blanks around it allowed). */
int http_check_expect_continue(const char *value, size_t len);

/*
 * 1 when a header value span starting at `at` continues a folded line: the
 * bytes before it, back to the last non-blank, end in a line feed. Only
 * the bytes from `start` on are readable; before them, `tail_nl` says
 * whether the bytes parsed earlier ended in a line feed and blanks.
 */
int http_check_folded(const char *at, const char *start, int tail_nl);

/* Whether bytes [data, data + len) end in a line feed and blanks; `tail_nl` if all blanks. */
int http_check_tail_nl(const char *data, size_t len, int tail_nl);

/* 1 when a Content-Type value is application/json (any case, parameters such as charset allowed).
 */
int http_check_json_type(const char *value, size_t len);

/*
 * 1 when an Origin value ("http://host[:port]" or "https://...") names the
 * same host (any case) and port as an authority "host[:port]" (a Host
 * value or a listen address; its port defaults by the origin's scheme).
 * "null", another scheme, a path or anything unparsable: 0.
 */
int http_check_same_origin(const char *origin, size_t olen, const char *authority, size_t alen);

/* 1 when a Sec-Fetch-Site value is "cross-site" (any case, blanks around it allowed). */
int http_check_cross_site(const char *value, size_t len);

#endif
