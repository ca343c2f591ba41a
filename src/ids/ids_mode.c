#include "ids_mode.h"

#include <string.h>
#include <strings.h>

static const struct ids_mode_info ids_modes[IDS_MODE_COUNT] = {
/* The issue and text functions are src/door/door_ids.c's: only their names pass through here. */
#define IDS_MODE_ROW(e, name, http, key, rule, dense, batch, metric, textcmd, what, issue, text,   \
                     prepare)                                                                      \
    [e] = {name, name ":", sizeof(name), http,   sizeof(http) - 1,  key,                           \
           rule, dense,    batch,        metric, (textcmd) != NULL, textcmd},
    IDS_MODES(IDS_MODE_ROW)
#undef IDS_MODE_ROW
};

const struct ids_mode_info *ids_mode_info(enum ids_mode mode) {
    return (int)mode >= 0 && mode < IDS_MODE_COUNT ? &ids_modes[mode] : NULL;
}

const char *ids_mode_name(enum ids_mode mode) {
    const struct ids_mode_info *m = ids_mode_info(mode);
    return m ? m->name : NULL;
}

enum ids_mode ids_mode_find(const char *s, size_t n) {
    for (int m = 0; m < IDS_MODE_COUNT; m++) {
        if (ids_modes[m].key_prefix_len - 1 == n && memcmp(ids_modes[m].name, s, n) == 0) {
            return (enum ids_mode)m;
        }
    }
    return IDS_MODE_NONE;
}

enum ids_mode ids_mode_find_text_command(const char *s, size_t n) {
    for (int m = 0; m < IDS_MODE_COUNT; m++) {
        const char *cmd = ids_modes[m].text_command;
        if (cmd != NULL && strlen(cmd) == n && strncasecmp(cmd, s, n) == 0) {
            return (enum ids_mode)m;
        }
    }
    return IDS_MODE_NONE;
}

/*
 * The key rules, in libc alone (src/ids stands beside src/base, docs/design.md): a tag is
 * src/base/validate.c's validate_tag, 1-128 bytes of [A-Za-z0-9._:-]; a space is the same
 * class without the colon that ends it, 1-64 bytes, not "." or ".." (a ZooKeeper node).
 */
static int ids_chars_ok(const char *s, size_t n, size_t max, int colon) {
    if (s == NULL || n == 0 || n > max) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || (colon && c == ':'))) {
            return 0;
        }
    }
    return 1;
}

static int ids_tag_ok(const char *s, size_t n) {
    return ids_chars_ok(s, n, IDS_TAG_MAX, 1);
}

int ids_space_ok(const char *s, size_t n) {
    return ids_chars_ok(s, n, IDS_SPACE_MAX, 0) && !(n <= 2 && memcmp(s, "..", n) == 0);
}

/* "<space>:<key>": split at the first colon (a space holds none), the key any byte. */
static int ids_spaced_ok(const char *s, size_t n) {
    const char *colon = s != NULL ? memchr(s, ':', n) : NULL;
    size_t space = colon != NULL ? (size_t)(colon - s) : 0;
    return colon != NULL && ids_space_ok(s, space) && n - space - 1 >= 1 &&
           n - space - 1 <= IDS_SPACED_KEY_MAX;
}

/* Each rule of enum ids_key_rule: its check and its words. */
static const struct {
    int (*ok)(const char *s, size_t n);
    const char *text;
} ids_key_rules[] = {
    [IDS_KEY_TAG] = {ids_tag_ok, "1 to 128 bytes of [A-Za-z0-9._:-]"},
    [IDS_KEY_SPACED] = {ids_spaced_ok,
                        "<space>:<key>, a space of 1 to 64 bytes of [A-Za-z0-9._-] and a key of "
                        "1 to 200 bytes"},
};

int ids_mode_key_ok(enum ids_mode mode, const char *s, size_t n) {
    const struct ids_mode_info *m = ids_mode_info(mode);
    return m != NULL && ids_key_rules[m->rule].ok(s, n);
}

const char *ids_mode_key_rule_text(enum ids_mode mode) {
    const struct ids_mode_info *m = ids_mode_info(mode);
    return m != NULL ? ids_key_rules[m->rule].text : "";
}

/* The value of hex digit c, or -1. */
static int ids_hex(char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* "{space}/{key}" into buf as "<space>:<key>", the key's %XX escapes decoded (any byte, '/'
 * only escaped: a raw one is a path's); its length, or 0 when it does not fit or is broken. */
static size_t ids_http_spaced(const char *raw, size_t n, char *buf, size_t cap) {
    const char *slash = memchr(raw, '/', n);
    if (slash == NULL || (size_t)(slash - raw) >= cap) {
        return 0;
    }
    size_t o = (size_t)(slash - raw);
    memcpy(buf, raw, o);
    buf[o++] = ':';
    for (size_t i = (size_t)(slash - raw) + 1; i < n; i++) {
        int hi = i + 2 < n ? ids_hex(raw[i + 1]) : -1, lo = i + 2 < n ? ids_hex(raw[i + 2]) : -1;
        if (o >= cap || raw[i] == '/' || (raw[i] == '%' && (hi < 0 || lo < 0))) {
            return 0;
        }
        if (raw[i] == '%') {
            buf[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            buf[o++] = raw[i];
        }
    }
    return o;
}

int ids_mode_http_key(enum ids_mode mode, const char *raw, size_t n, char *buf, size_t cap,
                      const char **key, size_t *len) {
    const struct ids_mode_info *m = ids_mode_info(mode);
    if (m == NULL) {
        return 0;
    }
    *key = raw;
    *len = n;
    if (m->rule == IDS_KEY_SPACED) {
        *key = buf;
        *len = ids_http_spaced(raw, n, buf, cap);
    }
    return ids_mode_key_ok(mode, *key, *len);
}
