/*
 * Value syntax for the configuration: numbers, addresses, JDBC URLs,
 * ZooKeeper lists and names, one checker per config_type. Pure code (libc
 * only), used by config.c, which owns the key table.
 */
#include "config_value.h"
#include "ids_mode.h"
#include "num.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/*
 * Renders untrusted bytes (a key or value from the file) for a message:
 * cut to CONFIG_VALUE_QUOTE_MAX bytes and control or non-ASCII bytes shown as '?',
 * so a stray binary file cannot garble the terminal or the log line.
 */
void config_value_show(char *dst, size_t dstlen, const char *s, size_t n, int quoted) {
    size_t i, o = 0, shown = n > CONFIG_VALUE_QUOTE_MAX ? CONFIG_VALUE_QUOTE_MAX : n;

    if (quoted) {
        dst[o++] = '"';
    }
    for (i = 0; i < shown && o + 5 < dstlen; i++) {
        char ch = s[i];
        if ((unsigned char)ch < 0x20 || (unsigned char)ch >= 0x7f) {
            ch = '?';
        }
        dst[o++] = ch;
    }
    if (i < n) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    if (quoted) {
        dst[o++] = '"';
    }
    dst[o] = '\0';
}

static int config_is_digit(char ch) {
    return ch >= '0' && ch <= '9';
}

static int config_is_alnum(char ch) {
    return config_is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* ---- numbers and addresses --------------------------------------------- */

/* A TCP port: 1 to 5 digits, 1..65535, no sign. */
static int config_port_ok(const char *s, size_t n, int *port) {
    int64_t v;

    if (n == 0 || n > 5 || s[0] == '-' || num_parse_i64(s, n, &v) != LEAF_OK || v < 1 ||
        v > 65535) {
        return 0;
    }
    *port = (int)v;
    return 1;
}

static int config_ipv4_ok(const char *s, size_t n) {
    char buf[16];
    struct in_addr a;

    if (n == 0 || n >= sizeof(buf)) {
        return 0;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    return inet_pton(AF_INET, buf, &a) == 1;
}

/*
 * A host name or IPv4 address. Something made only of digits and dots must
 * be a valid address, so "10.0.0.300" fails here and not at connect time.
 */
static int config_host_ok(const char *s, size_t n) {
    size_t i;
    int numeric = 1;

    if (n == 0 || n > 255) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (!config_is_alnum(s[i]) && s[i] != '.' && s[i] != '-' && s[i] != '_') {
            return 0;
        }
        numeric = numeric && (config_is_digit(s[i]) || s[i] == '.');
    }
    return !numeric || config_ipv4_ok(s, n);
}

/* Splits "a.b.c.d:port"; host must have room for 16 bytes. */
leaf_status_t config_value_addr_split(const char *v, char *host, int *port, char *why,
                                      size_t whylen) {
    const char *colon = strrchr(v, ':');
    char q[CONFIG_VALUE_SHOW_MAX];

    config_value_show(q, sizeof(q), v, strlen(v), 1);
    if (colon == NULL || !config_ipv4_ok(v, (size_t)(colon - v))) {
        snprintf(why, whylen, "expected IPv4:port (e.g. 0.0.0.0:8080), got %s", q);
        return LEAF_EINVAL;
    }
    if (!config_port_ok(colon + 1, strlen(colon + 1), port)) {
        snprintf(why, whylen, "port must be between 1 and 65535, got %s", q);
        return LEAF_EINVAL;
    }
    memcpy(host, v, (size_t)(colon - v));
    host[colon - v] = '\0';
    return LEAF_OK;
}

static const char *config_jdbc_skip_scheme(const char *url) {
    static const char *const schemes[] = {"jdbc:mysql://", "jdbc:mariadb://"};
    size_t i;

    for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
        if (strncmp(url, schemes[i], strlen(schemes[i])) == 0) {
            return url + strlen(schemes[i]);
        }
    }
    return NULL;
}

/*
 * One host[:port] of a JDBC URL's host list into j->hosts[j->nhosts]; *p
 * moves past it. Connector/J's failover syntax lists several, separated by
 * commas (docs/cluster.md).
 */
static leaf_status_t config_jdbc_host(const char **pp, struct config_value_jdbc *j, const char *q,
                                      char *why, size_t whylen) {
    const char *p = *pp;
    size_t n = strcspn(p, ":/?,");
    struct config_value_dbhost *h = &j->hosts[j->nhosts];

    if (j->nhosts == CONFIG_DB_HOSTS_MAX) {
        snprintf(why, whylen, "at most %d hosts in %s", CONFIG_DB_HOSTS_MAX, q);
        return LEAF_EINVAL;
    }
    if (!config_host_ok(p, n)) {
        snprintf(why, whylen, "bad host name or IPv4 address in %s", q);
        return LEAF_EINVAL;
    }
    memcpy(h->host, p, n);
    h->host[n] = '\0';
    h->port = 3306;
    p += n;
    if (*p == ':') {
        n = strcspn(p + 1, "/?,");
        if (!config_port_ok(p + 1, n, &h->port)) {
            snprintf(why, whylen, "port must be between 1 and 65535 in %s", q);
            return LEAF_EINVAL;
        }
        p += 1 + n;
    }
    j->nhosts++;
    *pp = p;
    return LEAF_OK;
}

/*
 * How a message shows a JDBC URL: only up to '?', because JDBC parameters may
 * carry the password; and not at all when it holds an '@' anywhere, which no
 * host, port or database name has: user:password@ (a password may hold '/' or
 * '?' too, so the cut at '?' is not enough).
 */
static void config_jdbc_quote(char *q, size_t cap, const char *url) {
    if (strchr(url, '@') != NULL) {
        snprintf(q, cap, "a URL with an '@' (not shown: it may hold a password)");
        return;
    }
    config_value_show(q, cap, url, strcspn(url, "?"), 1);
}

/* The TLS parameters seen in a JDBC query string (-1 = not given). */
struct config_jdbc_tls_params {
    int ssl_mode; /* enum config_db_tls */
    int use_ssl, require_ssl, verify_cert;
};

static const char *const config_db_tls_names[] = {
    [CONFIG_DB_TLS_DISABLED] = "DISABLED",
    [CONFIG_DB_TLS_PREFERRED] = "PREFERRED",
    [CONFIG_DB_TLS_REQUIRED] = "REQUIRED",
    [CONFIG_DB_TLS_VERIFY_CA] = "VERIFY_CA",
    [CONFIG_DB_TLS_VERIFY_IDENTITY] = "VERIFY_IDENTITY",
};

/* One name=value pair into t; unknown names are ignored (Leaf's URLs carry many). */
static leaf_status_t config_jdbc_tls_param(struct config_jdbc_tls_params *t, const char *s,
                                           size_t n, char *why, size_t whylen) {
    static const char *const bools[] = {"useSSL", "requireSSL", "verifyServerCertificate"};
    int *const slots[] = {&t->use_ssl, &t->require_ssl, &t->verify_cert};
    size_t eq = strcspn(s, "=&");
    const char *v = s + eq + 1;
    size_t vn = eq < n ? n - eq - 1 : 0, i;
    char q[CONFIG_VALUE_SHOW_MAX];

    config_value_show(q, sizeof(q), v, vn, 1);
    if (eq == 7 && strncasecmp(s, "sslMode", 7) == 0) {
        for (i = 0; i < sizeof(config_db_tls_names) / sizeof(config_db_tls_names[0]); i++) {
            if (strlen(config_db_tls_names[i]) == vn &&
                strncasecmp(v, config_db_tls_names[i], vn) == 0) {
                t->ssl_mode = (int)i;
                return LEAF_OK;
            }
        }
        snprintf(why, whylen,
                 "sslMode must be DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY, "
                 "got %s",
                 q);
        return LEAF_EINVAL;
    }
    for (i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
        if (eq != strlen(bools[i]) || strncasecmp(s, bools[i], eq) != 0) {
            continue;
        }
        if (vn == 4 && strncasecmp(v, "true", 4) == 0) {
            *slots[i] = 1;
        } else if (vn == 5 && strncasecmp(v, "false", 5) == 0) {
            *slots[i] = 0;
        } else {
            snprintf(why, whylen, "%s must be true or false, got %s", bools[i], q);
            return LEAF_EINVAL;
        }
    }
    return LEAF_OK;
}

/*
 * The database TLS mode of a JDBC query string (the text after '?', '&'
 * separated): sslMode=DISABLED|PREFERRED|REQUIRED|VERIFY_CA|VERIFY_IDENTITY
 * wins; otherwise useSSL, requireSSL and verifyServerCertificate map as
 * Connector/J 8 maps them. Values are case-insensitive; a bad one is an
 * error that quotes only that parameter.
 */
static leaf_status_t config_value_jdbc_tls(const char *params, int *tls, char *why, size_t whylen) {
    struct config_jdbc_tls_params t = {-1, -1, -1, -1};
    const char *p = params;

    while (*p != '\0') {
        size_t n = strcspn(p, "&");
        if (n > 0 && config_jdbc_tls_param(&t, p, n, why, whylen) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        p += n + (p[n] == '&');
    }
    if (t.ssl_mode >= 0) {
        *tls = t.ssl_mode;
    } else if (t.use_ssl != 0 && (t.use_ssl == 1 || t.require_ssl == 1)) {
        /* Connector/J 8: useSSL alone prefers TLS; requireSSL requires it;
         * verifyServerCertificate=true checks the chain. */
        *tls = t.verify_cert == 1   ? CONFIG_DB_TLS_VERIFY_CA
               : t.require_ssl == 1 ? CONFIG_DB_TLS_REQUIRED
                                    : CONFIG_DB_TLS_PREFERRED;
    } else {
        *tls = CONFIG_DB_TLS_DISABLED;
    }
    return LEAF_OK;
}

/*
 * jdbc:mysql://host[:port][,host[:port]...]/db[?params]. Messages never show
 * a secret (config_jdbc_quote). Credentials in the authority (user:password@,
 * as Connector/J reads it: up to the first '/', '?' or '#') are refused by
 * name: leaf.jdbc.username and leaf.jdbc.password (or its .file) say them, one
 * place for each. j->host and j->port are the first host's.
 */
leaf_status_t config_value_jdbc_split(const char *url, struct config_value_jdbc *j, char *why,
                                      size_t whylen) {
    const char *p = config_jdbc_skip_scheme(url);
    size_t n, i;
    char q[CONFIG_VALUE_SHOW_MAX];

    config_jdbc_quote(q, sizeof(q), url);
    j->port = 3306;
    j->nhosts = 0;
    if (p == NULL) {
        snprintf(why, whylen, "expected jdbc:mysql://host[:port]/database, got %s", q);
        return LEAF_EINVAL;
    }
    if (memchr(p, '@', strcspn(p, "/?#")) != NULL) {
        snprintf(why, whylen,
                 "user:password@ in the URL is not read: set leaf.jdbc.username and "
                 "leaf.jdbc.password (or leaf.jdbc.password.file) instead (URL not shown: it "
                 "holds a password)");
        return LEAF_EINVAL;
    }
    for (;;) {
        if (config_jdbc_host(&p, j, q, why, whylen) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        if (*p != ',') {
            break;
        }
        p++;
    }
    memcpy(j->host, j->hosts[0].host, sizeof(j->host));
    j->port = j->hosts[0].port;
    n = (*p == '/') ? strcspn(++p, "?") : 0;
    for (i = 0; i < n && (config_is_alnum(p[i]) || p[i] == '_' || p[i] == '$'); i++) {
    }
    if (n == 0 || i < n || n >= sizeof(j->db)) {
        snprintf(why, whylen, "expected /database ([A-Za-z0-9_$]+) after the host in %s", q);
        return LEAF_EINVAL;
    }
    memcpy(j->db, p, n);
    j->db[n] = '\0';
    p += n;
    return config_value_jdbc_tls(*p == '?' ? p + 1 : "", &j->tls, why, whylen);
}

/* ---- per-type checks of text values ------------------------------------ */

static leaf_status_t config_check_name(const char *v, char *why, size_t whylen) {
    size_t i;
    char q[CONFIG_VALUE_SHOW_MAX];

    for (i = 0; v[i] != '\0'; i++) {
        if (!config_is_alnum(v[i]) && v[i] != '.' && v[i] != '_' && v[i] != '-') {
            break;
        }
    }
    if (v[i] != '\0' || strcmp(v, ".") == 0 || strcmp(v, "..") == 0) {
        config_value_show(q, sizeof(q), v, strlen(v), 1);
        snprintf(why, whylen, "expected [A-Za-z0-9._-]+ other than . and .., got %s", q);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

static leaf_status_t config_check_addr(const char *v, char *why, size_t whylen) {
    char host[16];
    int port;

    return config_value_addr_split(v, host, &port, why, whylen);
}

static leaf_status_t config_check_optaddr(const char *v, char *why, size_t whylen) {
    return v[0] == '\0' ? LEAF_OK : config_check_addr(v, why, whylen);
}

static leaf_status_t config_check_ipv4(const char *v, char *why, size_t whylen) {
    char q[CONFIG_VALUE_SHOW_MAX];

    if (v[0] == '\0' || config_ipv4_ok(v, strlen(v))) {
        return LEAF_OK;
    }
    config_value_show(q, sizeof(q), v, strlen(v), 1);
    snprintf(why, whylen, "expected an IPv4 address (or empty), got %s", q);
    return LEAF_EINVAL;
}

static leaf_status_t config_check_jdbc(const char *v, char *why, size_t whylen) {
    struct config_value_jdbc j;

    return v[0] == '\0' ? LEAF_OK : config_value_jdbc_split(v, &j, why, whylen);
}

static leaf_status_t config_check_zk(const char *v, char *why, size_t whylen) {
    const char *p = v;
    char q[CONFIG_VALUE_SHOW_MAX];
    int port;

    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        size_t colon = n;

        while (colon > 0 && p[colon - 1] != ':') {
            colon--;
        }
        if (colon == 0 || !config_host_ok(p, colon - 1) ||
            !config_port_ok(p + colon, n - colon, &port) || (p[n] == ',' && p[n + 1] == '\0')) {
            config_value_show(q, sizeof(q), v, strlen(v), 1);
            snprintf(why, whylen, "expected host:port[,host:port...] (or empty), got %s", q);
            return LEAF_EINVAL;
        }
        p += n + (p[n] == ',');
    }
    return LEAF_OK;
}

/* v is one of the NULL-terminated words (any case); else why says "expected <expect>, got v". */
static leaf_status_t config_check_word(const char *v, const char *const *words, const char *expect,
                                       char *why, size_t whylen) {
    char q[CONFIG_VALUE_SHOW_MAX];

    for (; *words != NULL; words++) {
        if (strcasecmp(v, *words) == 0) {
            return LEAF_OK;
        }
    }
    config_value_show(q, sizeof(q), v, strlen(v), 1);
    snprintf(why, whylen, "expected %s, got %s", expect, q);
    return LEAF_EINVAL;
}

static leaf_status_t config_check_wmode(const char *v, char *why, size_t whylen) {
    static const char *const words[] = {"forever", "lease", NULL};
    return config_check_word(v, words, "forever or lease", why, whylen);
}

static leaf_status_t config_check_tlsauth(const char *v, char *why, size_t whylen) {
    static const char *const words[] = {"none", "optional", "required", NULL};
    return config_check_word(v, words, "none, optional or required", why, whylen);
}

/* digest:<user>:<password>; the value is a secret, so the message never quotes it. */
static leaf_status_t config_check_zkauth(const char *v, char *why, size_t whylen) {
    const char *user = v + 7, *colon;

    if (v[0] == '\0') {
        return LEAF_OK;
    }
    colon = strncmp(v, "digest:", 7) == 0 ? strchr(user, ':') : NULL;
    if (colon == NULL || colon == user || colon[1] == '\0') {
        snprintf(why, whylen, "expected digest:<user>:<password> (value not shown: a secret)");
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

static leaf_status_t config_check_logfmt(const char *v, char *why, size_t whylen) {
    static const char *const words[] = {"logfmt", "json", NULL};
    return config_check_word(v, words, "logfmt or json", why, whylen);
}

static leaf_status_t config_check_rmode(const char *v, char *why, size_t whylen) {
    char q[CONFIG_VALUE_SHOW_MAX];

    if (strcmp(v, "none") == 0 || ids_mode_find(v, strlen(v)) != IDS_MODE_NONE) {
        return LEAF_OK;
    }
    config_value_show(q, sizeof(q), v, strlen(v), 1);
    snprintf(why, whylen, "expected none, snowflake, segment, sequence or opaque, got %s", q);
    return LEAF_EINVAL;
}

static const config_value_check_fn config_value_checks[CONFIG_LEVEL + 1] = {
    [CONFIG_NAME] = config_check_name,     [CONFIG_ADDR] = config_check_addr,
    [CONFIG_IPV4] = config_check_ipv4,     [CONFIG_JDBC] = config_check_jdbc,
    [CONFIG_ZKADDR] = config_check_zk,     [CONFIG_OPTADDR] = config_check_optaddr,
    [CONFIG_WMODE] = config_check_wmode,   [CONFIG_TLSAUTH] = config_check_tlsauth,
    [CONFIG_ZKAUTH] = config_check_zkauth, [CONFIG_LOGFMT] = config_check_logfmt,
    [CONFIG_RMODE] = config_check_rmode,
};

config_value_check_fn config_value_check(enum config_type type) {
    return type <= CONFIG_LEVEL ? config_value_checks[type] : NULL;
}
