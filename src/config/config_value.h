#ifndef LEAF_CONFIG_VALUE_H
#define LEAF_CONFIG_VALUE_H

/*
 * The syntax of configuration values (config_value.c): integers, ports,
 * IPv4 addresses, host:port, JDBC URLs, ZooKeeper address lists and names.
 * Pure code. Every "why" written is a human reason that quotes the value
 * safely (cut, control bytes replaced, JDBC parameters left out, a JDBC URL
 * with an '@' not at all) and never a secret's.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "status.h"

/* How much of a bad value an error message quotes, and a buffer that holds it. */
#define CONFIG_VALUE_QUOTE_MAX 64
#define CONFIG_VALUE_SHOW_MAX (CONFIG_VALUE_QUOTE_MAX + 8)

/* The parts of a JDBC URL leafd uses. */
struct config_value_jdbc {
    char host[256]; /* the first host's, as hosts[0] */
    int port;
    char db[129];
    int tls;    /* enum config_db_tls, from the URL's parameters */
    int nhosts; /* 1 .. CONFIG_DB_HOSTS_MAX, in the URL's order */
    struct config_value_dbhost hosts[CONFIG_DB_HOSTS_MAX];
};

/* Renders untrusted bytes for a message (at most CONFIG_VALUE_SHOW_MAX bytes). */
void config_value_show(char *dst, size_t dstlen, const char *s, size_t n, int quoted);

/* "a.b.c.d:port" into host (16 bytes) and port. */
leaf_status_t config_value_addr_split(const char *v, char *host, int *port, char *why,
                                      size_t whylen);

/*
 * jdbc:mysql://host[:port][,host[:port]...]/db[?params] (also jdbc:mariadb://).
 * Of the parameters, only the TLS ones are read, into tls: sslMode=DISABLED|
 * PREFERRED|REQUIRED|VERIFY_CA|VERIFY_IDENTITY wins; otherwise useSSL,
 * requireSSL and verifyServerCertificate map as Connector/J 8 maps them.
 * Values are case-insensitive; a bad one is an error that quotes only that
 * parameter. The rest are ignored.
 */
leaf_status_t config_value_jdbc_split(const char *url, struct config_value_jdbc *j, char *why,
                                      size_t whylen);

/* The syntax check of a text type (NULL for types without one). */
typedef leaf_status_t (*config_value_check_fn)(const char *v, char *why, size_t whylen);
config_value_check_fn config_value_check(enum config_type type);

#endif
