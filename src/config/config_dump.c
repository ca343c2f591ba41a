/* The dump of a loaded configuration and the reference page of the keys (config.h). */
#include "config.h"
#include "config_secret.h"
#include "config_state.h"
#include "config_value.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---- dump ----------------------------------------------------------------- */

/*
 * A JDBC URL with its secrets masked: the password of "user:password@" in the
 * authority, and the value of any password parameter (Connector/J's
 * "password", "password1"..., any case) in the query.
 */
static void config_mask_jdbc(const char *url, char *out, size_t outlen) {
    size_t o = 0;
    const char *query = strchr(url, '?');
    const char *auth = strstr(url, "://");
    const char *at = auth != NULL ? strchr(auth + 3, '@') : NULL;
    if (at != NULL && query != NULL && at > query) {
        at = NULL;
    }
    const char *colon = at != NULL ? memchr(auth + 3, ':', (size_t)(at - auth - 3)) : NULL;
    for (const char *p = url; *p != '\0' && o + 4 < outlen;) {
        if (colon != NULL && p == colon + 1) {
            memcpy(out + o, "***", 3), o += 3;
            p = at;
            continue;
        }
        int param_start =
            query != NULL && p > query && (p[-1] == '?' || p[-1] == '&' || p[-1] == ';');
        if (param_start && strncasecmp(p, "password", 8) == 0) {
            const char *eq = p + 8;
            while (*eq >= '0' && *eq <= '9') {
                eq++;
            }
            if (*eq == '=') {
                size_t name = (size_t)(eq - p) + 1;
                if (o + name + 4 >= outlen) {
                    break;
                }
                memcpy(out + o, p, name), o += name;
                memcpy(out + o, "***", 3), o += 3;
                p = eq + 1 + strcspn(eq + 1, "&;");
                continue;
            }
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
}

static void config_format(const struct leaf_config *c, const struct config_key *k, char *out,
                          size_t outlen) {
    const char *field = (const char *)c + k->offset;
    int64_t i64;
    int i;

    switch (k->type) {
    case CONFIG_INT:
        memcpy(&i64, field, sizeof(i64));
        snprintf(out, outlen, "%lld", (long long)i64);
        break;
    case CONFIG_BOOL:
        memcpy(&i, field, sizeof(i));
        config_copy(out, outlen, i ? "true" : "false");
        break;
    case CONFIG_LEVEL:
        memcpy(&i, field, sizeof(i));
        config_copy(out, outlen, i >= 0 && i <= LEAF_LOG_ERROR ? config_level_names[i] : "?");
        break;
    case CONFIG_JDBC: config_mask_jdbc(field, out, outlen); break;
    default:
        config_copy(out, outlen, config_is_secret(k) && field[0] != '\0' ? "***" : field);
        break;
    }
}

size_t config_dump(const struct leaf_config *c, char *buf, size_t len) {
    char value[CONFIG_TEXT_MAX], where[512];
    size_t i, used = 0;
    int n;

    if (len == 0) {
        return 0;
    }
    buf[0] = '\0';
    for (i = 0; i < CONFIG_NKEYS && used + 1 < len; i++) {
        config_format(c, &config_keys[i], value, sizeof(value));
        where[0] = '\0';
        if (c->sources[i].file[0] != '\0') {
            config_where(c, i, where, sizeof(where));
        }
        n = snprintf(buf + used, len - used, "%s =%s%s%s%s\n", config_keys[i].key,
                     value[0] ? " " : "", value, where[0] ? "  # from " : "", where);
        used += (n < 0) ? 0 : ((size_t)n < len - used ? (size_t)n : len - used - 1);
    }
    return used;
}

/* What a value of each type looks like, for the reference table. */
static const char *config_type_word(enum config_type t) {
    switch (t) {
    case CONFIG_STR:
    case CONFIG_SECRET: return "string"; /* the description says "a secret" */
    case CONFIG_NAME: return "name `[A-Za-z0-9._-]+`";
    case CONFIG_BOOL: return "`true` \\| `false`";
    case CONFIG_INT: return "integer";
    case CONFIG_ADDR: return "`ip:port`";
    case CONFIG_IPV4: return "IPv4 address";
    case CONFIG_JDBC: return "JDBC URL";
    case CONFIG_ZKADDR: return "`host:port[,host:port...]`";
    case CONFIG_OPTADDR: return "`ip:port` or empty";
    case CONFIG_WMODE: return "`forever` \\| `lease`";
    case CONFIG_TLSAUTH: return "`none` \\| `optional` \\| `required`";
    case CONFIG_ZKAUTH: return "`digest:USER:PASSWORD`";
    case CONFIG_LOGFMT: return "`logfmt` \\| `json`";
    case CONFIG_RMODE: return "`none` or an ID mode";
    case CONFIG_LEVEL: return "`debug` \\| `info` \\| `warn` \\| `error`";
    }
    return "string";
}

/* text as a Markdown table cell: the separator escaped, no <...> taken for HTML */
static void config_put_cell(FILE *out, const char *text) {
    for (; *text != '\0'; text++) {
        if (*text == '<' || *text == '>') {
            fputs(*text == '<' ? "&lt;" : "&gt;", out);
            continue;
        }
        if (*text == '|') {
            fputc('\\', out);
        }
        fputc(*text, out);
    }
}

void config_print_reference(FILE *out) {
    size_t i;

    fputs("| key | type | default | description |\n|---|---|---|---|\n", out);
    for (i = 0; i < CONFIG_NKEYS; i++) {
        const struct config_key *k = &config_keys[i];
        fprintf(out, "| `%s` | %s", k->key, config_type_word(k->type));
        if (k->type == CONFIG_INT) {
            fprintf(out, " %lld..%lld", (long long)k->min, (long long)k->max);
        }
        fputs(" | ", out);
        if (k->def[0] != '\0') {
            fprintf(out, "`%s`", k->def);
        } else {
            fputs("empty", out);
        }
        fputs(" | ", out);
        config_put_cell(out, k->help);
        fputs(config_is_secret(k) ? " (a secret: masked in `--print-config`) |\n" : " |\n", out);
    }
}
