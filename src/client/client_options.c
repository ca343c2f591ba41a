/* The options string and the endpoints list (client_options.h). */
#include "client_options.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The numeric keys: name, field, default, least, most. One row per key. */
#define CLIENT_OPTIONS_MAP(X)                                                                      \
    X("timeout.ms", timeout_ms, 300, 1, 600000)                                                    \
    X("wait.ms", wait_ms, 1000, 0, 600000)                                                         \
    X("prefetch.min", prefetch_min, 1000, 1, 100000000)                                            \
    X("prefetch.max", prefetch_max, 10000000, 1, 100000000)                                        \
    X("prefetch.window.ms", prefetch_window_ms, 100, 1, 60000)                                     \
    X("retry.min.ms", retry_min_ms, 100, 1, 600000)                                                \
    X("retry.max.ms", retry_max_ms, 5000, 1, 3600000)                                              \
    X("keys.max", keys_max, 1024, 1, 65536)                                                        \
    X("batch.max", batch_max, 1000000, 1, 1000000)                                                 \
    X("log", log, 1, 0, 1)                                                                         \
    X("strict.wait.us", strict_wait_us, 0, 0, 1000000)

/* The text keys: name, field. */
#define CLIENT_OPTIONS_TEXT_MAP(X)                                                                 \
    X("user", user)                                                                                \
    X("secret", secret)                                                                            \
    X("secret.file", secret_file)                                                                  \
    X("token", token)                                                                              \
    X("ca", ca_file)

static int fail(char *err, size_t errlen, const char *fmt, const char *what, size_t len) {
    if (err != NULL && errlen > 0) {
        snprintf(err, errlen, fmt, (int)len, what);
    }
    return -1;
}

static int parse_i64(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out) {
    int64_t v = 0;
    if (len == 0 || len > 18) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i])) {
            return -1;
        }
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

/* A CR or LF in a credential would end the Authorization line and start a header line of the
 * value's own in every request: refused at open (naming the option, never quoting the value). */
static int has_control(const char *v, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) {
            return 1;
        }
    }
    return 0;
}

/* One "key=value" of the options string, the nth. An error names the key, never a value: a piece
 * without '=' may be the end of a secret that held a ';'. */
static int parse_pair(struct client_options *o, const char *s, size_t len, int nth, char *err,
                      size_t errlen) {
    const char *eq = memchr(s, '=', len);
    if (eq == NULL) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen,
                     "option %d of the options string: not key=value (a ';' inside a value? "
                     "give the secret as secret.file=)",
                     nth);
        }
        return -1;
    }
    size_t klen = (size_t)(eq - s), vlen = len - klen - 1;
    const char *v = eq + 1;
#define CLIENT_OPTION_NUM(name, field, def, lo, hi)                                                \
    if (klen == sizeof(name) - 1 && memcmp(s, name, klen) == 0) {                                  \
        if (parse_i64(v, vlen, lo, hi, &o->field) != 0)                                            \
            return fail(err, errlen, "option %.*s: not a whole number from " #lo " to " #hi, s,    \
                        klen);                                                                     \
        return 0;                                                                                  \
    }
    CLIENT_OPTIONS_MAP(CLIENT_OPTION_NUM)
#undef CLIENT_OPTION_NUM
#define CLIENT_OPTION_TEXT(name, field)                                                            \
    if (klen == sizeof(name) - 1 && memcmp(s, name, klen) == 0) {                                  \
        if (vlen >= sizeof(o->field))                                                              \
            return fail(err, errlen, "option %.*s: too long", s, klen);                            \
        if (has_control(v, vlen))                                                                  \
            return fail(err, errlen, "option %.*s: holds a control character (CR, LF, ...)", s,    \
                        klen);                                                                     \
        memcpy(o->field, v, vlen);                                                                 \
        o->field[vlen] = '\0';                                                                     \
        return 0;                                                                                  \
    }
    CLIENT_OPTIONS_TEXT_MAP(CLIENT_OPTION_TEXT)
#undef CLIENT_OPTION_TEXT
    return fail(err, errlen, "unknown option \"%.*s\"", s, klen);
}

int client_options_endpoint(struct client_endpoint *e, const char *s, size_t len, char *err,
                            size_t errlen) {
    const char *p = s, *end = s + len, *host, *host_end;
    if (len > 7 && memcmp(p, "http://", 7) == 0) {
        e->tls = 0;
        p += 7;
    } else if (len > 8 && memcmp(p, "https://", 8) == 0) {
        e->tls = 1;
        p += 8;
    } else {
        return fail(err, errlen, "endpoint \"%.*s\": not http:// or https://", s, len);
    }
    if (p < end && *p == '[') {
        host = p + 1;
        host_end = memchr(host, ']', (size_t)(end - host));
        if (host_end == NULL) {
            return fail(err, errlen, "endpoint \"%.*s\": no ] after the address", s, len);
        }
        p = host_end + 1;
    } else {
        host = p;
        while (p < end && *p != ':' && *p != '/') {
            p++;
        }
        host_end = p;
    }
    if (end > p && end[-1] == '/') {
        end--;
    }
    int64_t port = e->tls ? 443 : 80;
    if (p < end && *p == ':') {
        if (parse_i64(p + 1, (size_t)(end - p - 1), 1, 65535, &port) != 0) {
            return fail(err, errlen, "endpoint \"%.*s\": bad port", s, len);
        }
        p = end;
    }
    if (p != end || host_end == host || (size_t)(host_end - host) >= sizeof(e->host)) {
        return fail(err, errlen, "endpoint \"%.*s\": want scheme://host[:port]", s, len);
    }
    memcpy(e->host, host, (size_t)(host_end - host));
    e->host[host_end - host] = '\0';
    e->port = (int)port;
    return 0;
}

/* The next piece of s up to sep, blanks around it trimmed; *rest: what follows sep. */
static const char *next_piece(const char *s, char sep, size_t *len, const char **rest) {
    while (*s == ' ') {
        s++;
    }
    const char *e = strchr(s, sep);
    if (e == NULL) {
        e = s + strlen(s);
    }
    *rest = *e ? e + 1 : e;
    while (e > s && e[-1] == ' ') {
        e--;
    }
    *len = (size_t)(e - s);
    return s;
}

static int check(const struct client_options *o, char *err, size_t errlen) {
    if (o->n_nodes == 0) {
        return fail(err, errlen, "no endpoint%.*s", "", 0);
    }
    if (o->prefetch_min > o->prefetch_max) {
        return fail(err, errlen, "prefetch.min is above prefetch.max%.*s", "", 0);
    }
    if (o->retry_min_ms > o->retry_max_ms) {
        return fail(err, errlen, "retry.min.ms is above retry.max.ms%.*s", "", 0);
    }
    if (o->secret[0] != '\0' && o->secret_file[0] != '\0') {
        return fail(err, errlen, "secret= or secret.file=, not both%.*s", "", 0);
    }
    if ((o->user[0] != '\0') != (o->secret[0] != '\0' || o->secret_file[0] != '\0')) {
        return fail(err, errlen, "user= and secret= (or secret.file=) go together%.*s", "", 0);
    }
    if (o->user[0] != '\0' && o->token[0] != '\0') {
        return fail(err, errlen, "user= or token=, not both%.*s", "", 0);
    }
    if (strchr(o->user, ':') != NULL) {
        return fail(err, errlen, "user= holds a colon%.*s", "", 0);
    }
    return 0;
}

int client_options_parse(struct client_options *o, const char *endpoints, const char *options,
                         char *err, size_t errlen) {
    memset(o, 0, sizeof(*o));
#define CLIENT_OPTION_DEFAULT(name, field, def, lo, hi) o->field = (def);
    CLIENT_OPTIONS_MAP(CLIENT_OPTION_DEFAULT)
#undef CLIENT_OPTION_DEFAULT
    if (endpoints == NULL) {
        return fail(err, errlen, "no endpoint%.*s", "", 0);
    }
    const char *s = endpoints, *rest;
    size_t len;
    while (*s != '\0') {
        const char *piece = next_piece(s, ',', &len, &rest);
        if (len > 0) {
            if (o->n_nodes == CLIENT_NODES_MAX) {
                return fail(err, errlen, "more than %.*s endpoints", "16", 2);
            }
            if (client_options_endpoint(&o->nodes[o->n_nodes], piece, len, err, errlen) != 0) {
                return -1;
            }
            o->n_nodes++;
        }
        s = rest;
    }
    int nth = 0;
    for (s = options ? options : ""; *s != '\0'; s = rest) {
        const char *piece = next_piece(s, ';', &len, &rest);
        if (len > 0 && parse_pair(o, piece, len, ++nth, err, errlen) != 0) {
            return -1;
        }
    }
    return check(o, err, errlen);
}
