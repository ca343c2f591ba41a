/*
 * Unit tests of the pure parts of docs/SECURITY.md: the TLS and
 * secret keys of the configuration (src/config), database TLS from
 * leaf.jdbc.url, secrets read from files, the failed-authentication limit
 * (src/auth/auth_limit.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth_limit.h"
#include "config.h"
#include "config_secret.h"
#include "config_value.h"
#include "unit.h"

#define FILE_NAME "leaf.properties"

static struct leaf_config cfg;
static char err[1024];
static char dir[] = "/tmp/test_security.XXXXXX";

/* A static snowflake node (something to serve) plus the given lines. */
static leaf_status_t load(const char *extra) {
    char text[4096];
    snprintf(text, sizeof(text),
             "leaf.name=n\nleaf.snowflake.enable=true\nleafd.snowflake.worker.id=1\n%s", extra);
    config_defaults(&cfg);
    err[0] = '\0';
    leaf_status_t rc = config_parse(&cfg, text, strlen(text), FILE_NAME, err, sizeof(err));
    return rc != LEAF_OK ? rc : config_finish(&cfg, err, sizeof(err));
}

static void write_file(const char *name, const char *text, int mode, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, (mode_t)mode);
}

/* ---- TLS listeners ---------------------------------------------------------- */

static void test_tls_keys(void) {
    CHECK_EQ_INT(load(""), LEAF_OK);
    CHECK_EQ_INT(cfg.tls_port, 0);
    CHECK_EQ_INT(cfg.resp_tls_port, 0);
    CHECK_EQ_INT(cfg.tls_verify, CONFIG_TLS_VERIFY_NONE);
    /* A TLS listener needs the certificate and the key, named with the line. */
    CHECK_EQ_INT(load("leafd.tls.listen=127.0.0.1:8443\n"), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ": leafd.tls.cert.file: required when leafd.tls.listen or "
                                "leafd.resp.tls.listen is set");
    CHECK_EQ_INT(load("leafd.resp.tls.listen=127.0.0.1:6443\nleafd.tls.cert.file=/c\n"),
                 LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ": leafd.tls.key.file: required when leafd.tls.listen or "
                                "leafd.resp.tls.listen is set");
    CHECK_EQ_INT(load("leafd.tls.listen=127.0.0.1:8443\nleafd.resp.tls.listen=127.0.0.1:6443\n"
                      "leafd.tls.cert.file=/c\nleafd.tls.key.file=/k\n"),
                 LEAF_OK);
    CHECK_EQ_STR(cfg.tls_host, "127.0.0.1");
    CHECK_EQ_INT(cfg.tls_port, 8443);
    CHECK_EQ_INT(cfg.resp_tls_port, 6443);
    /* Client certificates need a CA. */
    CHECK_EQ_INT(load("leafd.tls.listen=127.0.0.1:8443\nleafd.tls.cert.file=/c\n"
                      "leafd.tls.key.file=/k\nleafd.tls.client.auth=required\n"),
                 LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ": leafd.tls.ca.file: required when leafd.tls.client.auth is "
                                "optional or required (the CA client certificates must chain to)");
    CHECK_EQ_INT(load("leafd.tls.listen=127.0.0.1:8443\nleafd.tls.cert.file=/c\n"
                      "leafd.tls.key.file=/k\nleafd.tls.client.auth=Optional\n"
                      "leafd.tls.ca.file=/ca\n"),
                 LEAF_OK);
    CHECK_EQ_INT(cfg.tls_verify, CONFIG_TLS_VERIFY_OPTIONAL);
    CHECK_EQ_INT(load("leafd.tls.client.auth=sometimes\n"), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leafd.tls.client.auth: expected none, optional or required, "
                                "got \"sometimes\"");
    /* Four listeners, four ports. */
    CHECK_EQ_INT(load("leafd.listen=127.0.0.1:8080\nleafd.tls.listen=127.0.0.1:8080\n"
                      "leafd.tls.cert.file=/c\nleafd.tls.key.file=/k\n"),
                 LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":5: leafd.tls.listen: must not be the port of leafd.listen");
    CHECK_EQ_INT(load("leafd.resp.listen=127.0.0.1:6380\nleafd.resp.tls.listen=127.0.0.1:6380\n"
                      "leafd.tls.cert.file=/c\nleafd.tls.key.file=/k\n"),
                 LEAF_EINVAL);
    CHECK_EQ_STR(err,
                 FILE_NAME ":5: leafd.resp.tls.listen: must not be the port of leafd.resp.listen");
}

/* ---- database TLS ----------------------------------------------------------- */

/* The TLS mode of a JDBC URL with the query string params: LEAF_OK and *tls, or a reason in why. */
static leaf_status_t url_tls(const char *params, int *tls, char *why, size_t whylen) {
    static struct config_value_jdbc j;
    char url[512];
    snprintf(url, sizeof(url), "jdbc:mysql://db.example:3306/leaf?%s", params);
    leaf_status_t rc = config_value_jdbc_split(url, &j, why, whylen);
    *tls = j.tls;
    return rc;
}

static int jdbc_tls(const char *params) {
    char why[256];
    int tls = -1;
    if (url_tls(params, &tls, why, sizeof(why)) != LEAF_OK) {
        return -2;
    }
    return tls;
}

static void test_jdbc_tls(void) {
    char why[256];
    int tls;
    CHECK_EQ_INT(jdbc_tls(""), CONFIG_DB_TLS_DISABLED);
    CHECK_EQ_INT(jdbc_tls("useUnicode=true&characterEncoding=utf8"), CONFIG_DB_TLS_DISABLED);
    CHECK_EQ_INT(jdbc_tls("sslMode=DISABLED"), CONFIG_DB_TLS_DISABLED);
    CHECK_EQ_INT(jdbc_tls("sslMode=preferred"), CONFIG_DB_TLS_PREFERRED);
    CHECK_EQ_INT(jdbc_tls("a=b&sslMode=REQUIRED&c"), CONFIG_DB_TLS_REQUIRED);
    CHECK_EQ_INT(jdbc_tls("sslMode=VERIFY_CA"), CONFIG_DB_TLS_VERIFY_CA);
    CHECK_EQ_INT(jdbc_tls("sslMode=VERIFY_IDENTITY"), CONFIG_DB_TLS_VERIFY_IDENTITY);
    /* The older parameters, as Connector/J 8 maps them; sslMode wins over them. */
    CHECK_EQ_INT(jdbc_tls("useSSL=true"), CONFIG_DB_TLS_PREFERRED);
    CHECK_EQ_INT(jdbc_tls("useSSL=false"), CONFIG_DB_TLS_DISABLED);
    CHECK_EQ_INT(jdbc_tls("useSSL=false&requireSSL=true"), CONFIG_DB_TLS_DISABLED);
    CHECK_EQ_INT(jdbc_tls("requireSSL=true"), CONFIG_DB_TLS_REQUIRED);
    CHECK_EQ_INT(jdbc_tls("useSSL=true&requireSSL=true"), CONFIG_DB_TLS_REQUIRED);
    CHECK_EQ_INT(jdbc_tls("useSSL=true&verifyServerCertificate=true"), CONFIG_DB_TLS_VERIFY_CA);
    CHECK_EQ_INT(jdbc_tls("useSSL=false&sslMode=REQUIRED"), CONFIG_DB_TLS_REQUIRED);
    /* Bad values quote only the parameter, never the rest of the URL. */
    CHECK_EQ_INT(url_tls("password=x&sslMode=ALWAYS", &tls, why, sizeof(why)), LEAF_EINVAL);
    CHECK_EQ_STR(why, "sslMode must be DISABLED, PREFERRED, REQUIRED, VERIFY_CA or "
                      "VERIFY_IDENTITY, got \"ALWAYS\"");
    CHECK_EQ_INT(url_tls("useSSL=yes", &tls, why, sizeof(why)), LEAF_EINVAL);
    CHECK_EQ_STR(why, "useSSL must be true or false, got \"yes\"");
    /* Through the file: the error names the line and the key; VERIFY_* needs the CA. */
    CHECK_EQ_INT(load("leaf.jdbc.url=jdbc:mysql://h:3306/d?sslMode=maybe\n"), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leaf.jdbc.url: sslMode must be DISABLED, PREFERRED, "
                                "REQUIRED, VERIFY_CA or VERIFY_IDENTITY, got \"maybe\"");
    CHECK_EQ_INT(load("leaf.jdbc.url=jdbc:mysql://h:3306/d?sslMode=VERIFY_CA\n"), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ": leafd.db.tls.ca.file: required when leaf.jdbc.url asks for "
                                "sslMode=VERIFY_CA or VERIFY_IDENTITY (or "
                                "verifyServerCertificate=true)");
    CHECK_EQ_INT(load("leaf.jdbc.url=jdbc:mysql://h:3306/d?sslMode=VERIFY_CA\n"
                      "leafd.db.tls.ca.file=/ca.pem\n"),
                 LEAF_OK);
    CHECK_EQ_INT(cfg.db_tls, CONFIG_DB_TLS_VERIFY_CA);
}

/* ---- secrets from files ------------------------------------------------------- */

static void test_secret_read(void) {
    char path[256], out[32], why[512], want[512];
    int loose = -1;
    write_file("tok", "0123456789abcdef\nsecond line\n", 0600, path, sizeof(path));
    CHECK_EQ_INT(config_secret_read(path, out, sizeof(out), &loose, why, sizeof(why)), LEAF_OK);
    CHECK_EQ_STR(out, "0123456789abcdef");
    CHECK_EQ_INT(loose, 0);
    write_file("crlf", "pw\r\n", 0640, path, sizeof(path));
    CHECK_EQ_INT(config_secret_read(path, out, sizeof(out), &loose, why, sizeof(why)), LEAF_OK);
    CHECK_EQ_STR(out, "pw");
    CHECK_EQ_INT(loose, 0); /* leafd's own group may read it: 640 root:leafd, as packaged */
    if (geteuid() == 0 && chown(path, (uid_t)-1, (gid_t)65534) == 0) {
        CHECK_EQ_INT(config_secret_read(path, out, sizeof(out), &loose, why, sizeof(why)), LEAF_OK);
        CHECK_EQ_INT(loose, 1); /* another group may read it */
    }
    write_file("nonl", "last", 0604, path, sizeof(path));
    CHECK_EQ_INT(config_secret_read(path, out, sizeof(out), &loose, why, sizeof(why)), LEAF_OK);
    CHECK_EQ_STR(out, "last");
    CHECK_EQ_INT(loose, 1); /* others may read it */
    write_file("empty", "\nsecret on line 2\n", 0600, path, sizeof(path));
    CHECK_EQ_INT(config_secret_read(path, out, sizeof(out), &loose, why, sizeof(why)), LEAF_EINVAL);
    snprintf(want, sizeof(want), "the first line of %s is empty", path);
    CHECK_EQ_STR(why, want);
    write_file("long", "0123456789012345678901234567890123456789\n", 0600, path, sizeof(path));
    CHECK_EQ_INT(config_secret_read(path, out, sizeof(out), &loose, why, sizeof(why)), LEAF_EINVAL);
    snprintf(want, sizeof(want), "the first line of %s is too long (max 31 bytes)", path);
    CHECK_EQ_STR(why, want);
    snprintf(path, sizeof(path), "%s/missing", dir);
    CHECK_EQ_INT(config_secret_read(path, out, sizeof(out), &loose, why, sizeof(why)), LEAF_ERR);
}

static void test_secret_keys(void) {
    char tok[256], pw[256], zk[256], text[2048], want[1024];
    write_file("admin", "a-long-enough-admin-token\n", 0600, tok, sizeof(tok));
    write_file("pw", "db pass word\n", 0644, pw, sizeof(pw));
    write_file("zk", "digest:leafd:zk-secret\n", 0600, zk, sizeof(zk));
    snprintf(text, sizeof(text),
             "leafd.admin.token.file=%s\nleaf.jdbc.password.file=%s\nleafd.zk.auth.file=%s\n", tok,
             pw, zk);
    CHECK_EQ_INT(load(text), LEAF_OK);
    CHECK_EQ_STR(cfg.admin_token, "a-long-enough-admin-token");
    CHECK_EQ_STR(cfg.jdbc_password, "db pass word");
    CHECK_EQ_STR(cfg.zk_auth, "digest:leafd:zk-secret");
    /* The password file is readable by others: one line for the warning. */
    snprintf(want, sizeof(want),
             "leaf.jdbc.password.file: %s (" FILE_NAME ":5) is readable by group or others; "
             "make it readable by leafd's user only (chmod 600, or 640 with leafd's group)\n",
             pw);
    CHECK_EQ_STR(cfg.loose_secret_files, want);
    /* The dump masks what came from the files, and leafd.zk.auth too. */
    char dump[16384];
    config_dump(&cfg, dump, sizeof(dump));
    CHECK(strstr(dump, "a-long-enough") == NULL && strstr(dump, "zk-secret") == NULL &&
          strstr(dump, "pass word") == NULL);
    CHECK(strstr(dump, "\nleafd.zk.auth = ***\n") != NULL);
    /* Both the secret and its file: refused. */
    snprintf(text, sizeof(text), "leafd.admin.token=x\nleafd.admin.token.file=%s\n", tok);
    CHECK_EQ_INT(load(text), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":5: leafd.admin.token.file: set either leafd.admin.token or "
                                "leafd.admin.token.file, not both");
    /* A file that does not hold a valid value is refused as the value would be. */
    write_file("zkbad", "leafd:zk-secret\n", 0600, zk, sizeof(zk));
    snprintf(text, sizeof(text), "leafd.zk.auth.file=%s\n", zk);
    CHECK_EQ_INT(load(text), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leafd.zk.auth.file: expected digest:<user>:<password> (value "
                                "not shown: a secret)");
    CHECK_EQ_INT(load("leafd.zk.auth=digest:u:p\n"), LEAF_OK);
    CHECK_EQ_INT(load("leafd.zk.auth=digest:u\n"), LEAF_EINVAL);
    CHECK(strstr(err, "digest:u") == NULL); /* never quoted */
}

static void test_admin_token_length(void) {
    char tok[256], text[1024];
    CHECK_EQ_INT(load("leafd.admin.token=0123456789abcde\n"), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leafd.admin.token: too short: at least 16 characters (a "
                                "long random string); refused since 0.2.0: set a new one, e.g. "
                                "openssl rand -hex 16 (CHANGELOG.md, 0.2.0)");
    CHECK(strstr(err, "0123456789abcde") == NULL);
    CHECK_EQ_INT(load("leafd.admin.token=0123456789abcdef\n"), LEAF_OK);
    CHECK_EQ_INT(load("leafd.admin.token=\n"), LEAF_OK); /* empty: loopback clients only */
    write_file("short", "short\n", 0600, tok, sizeof(tok));
    snprintf(text, sizeof(text), "leafd.admin.token.file=%s\n", tok);
    CHECK_EQ_INT(load(text), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leafd.admin.token.file: too short: at least 16 characters (a "
                                "long random string); refused since 0.2.0: set a new one, e.g. "
                                "openssl rand -hex 16 (CHANGELOG.md, 0.2.0)");
}

/* A configuration file's text, written with mode, loaded and finished (as leafd -c does). */
static leaf_status_t load_file(const char *text, int mode, char *path, size_t cap) {
    write_file("leafd.properties", text, mode, path, cap);
    config_defaults(&cfg);
    err[0] = '\0';
    leaf_status_t rc = config_load_file(&cfg, path, err, sizeof(err));
    return rc != LEAF_OK ? rc : config_finish(&cfg, err, sizeof(err));
}

/*
 * A secret left at the example Secret's value (deploy/kubernetes/base/secret.yaml: "change-me")
 * gets a warn line naming the key, never the value (docs/kubernetes.md, "The Secret").
 */
static void test_example_secret_warned(void) {
    char path[256];
    const char *text = "leaf.name=n\nleaf.snowflake.enable=true\nleafd.snowflake.worker.id=1\n"
                       "leafd.admin.token=change-me-to-a-long-random-string\n"
                       "leafd.zk.auth=digest:leafd:change-me\n";
    CHECK_EQ_INT(load_file(text, 0600, path, sizeof(path)), LEAF_OK);
    CHECK(strstr(cfg.loose_secret_files, "leafd.admin.token: still the example value") != NULL);
    CHECK(strstr(cfg.loose_secret_files, "leafd.zk.auth: still the example value") != NULL);
    CHECK(strstr(cfg.loose_secret_files, "digest:leafd") == NULL);
    CHECK_EQ_INT(load_file("leaf.name=n\nleaf.snowflake.enable=true\nleafd.snowflake.worker.id=1\n"
                           "leafd.admin.token=0123456789abcdef0123\n",
                           0600, path, sizeof(path)),
                 LEAF_OK);
    CHECK_EQ_STR(cfg.loose_secret_files, "");
}

/*
 * A secret set inline in a configuration that others (or another group) may read gets a warn
 * line naming the key and the line, never the value (docs/SECURITY.md, "Files and permissions").
 */
static void test_inline_secret_loose(void) {
    char path[256], want[1024];
    const char *text = "leaf.name=n\nleaf.snowflake.enable=true\nleafd.snowflake.worker.id=1\n"
                       "leafd.admin.token=inline-admin-token-0123\n";
    CHECK_EQ_INT(load_file(text, 0644, path, sizeof(path)), LEAF_OK);
    snprintf(want, sizeof(want),
             "leafd.admin.token: inline in %s:4, a file readable by group or others; move the "
             "secret to leafd.admin.token.file (chmod 600), or chmod 600 %s (640 with leafd's "
             "group)\n",
             path, path);
    CHECK_EQ_STR(cfg.loose_secret_files, want);
    CHECK(strstr(cfg.loose_secret_files, "inline-admin-token") == NULL);
    CHECK_EQ_INT(load_file(text, 0600, path, sizeof(path)), LEAF_OK);
    CHECK_EQ_STR(cfg.loose_secret_files, "");
    CHECK_EQ_INT(load_file(text, 0640, path, sizeof(path)), LEAF_OK); /* leafd's own group */
    CHECK_EQ_STR(cfg.loose_secret_files, "");
    /* No inline secret: nothing to say about a file everyone may read. */
    CHECK_EQ_INT(load_file("leaf.name=n\nleaf.snowflake.enable=true\nleafd.snowflake.worker.id=1\n"
                           "leafd.admin.token=\n",
                           0644, path, sizeof(path)),
                 LEAF_OK);
    CHECK_EQ_STR(cfg.loose_secret_files, "");
}

/* The environment of test_jdbc_credentials: LEAF_JDBC_URL only. */
static const char *jdbc_env_url;
static const char *jdbc_env(const char *name) {
    return strcmp(name, "LEAF_JDBC_URL") == 0 ? jdbc_env_url : NULL;
}

/*
 * user:password@ in leaf.jdbc.url is refused by name, and no error about the URL shows the
 * password, however the URL is malformed, from the file or the environment.
 */
static void test_jdbc_credentials(void) {
    static const char *const urls[] = {
        "jdbc:mysql://leaf:S3cret@127.0.0.1:13306/leaf",
        "jdbc:mysql://leaf:S3cret@127.0.0.1:13306/leaf?sslMode=REQUIRED",
        "mysql://leaf:S3cret@127.0.0.1:13306/leaf",  /* no jdbc: */
        "jdbc:mysql://leaf:S3/cret@127.0.0.1/leaf",  /* a '/' in the password */
        "jdbc:mysql://leaf:S3?cret@127.0.0.1/leaf",  /* a '?' in the password */
        "jdbc:mysql://127.0.0.1:13306/le@af:S3cret", /* garbage with an '@' */
    };
    char text[512];
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        snprintf(text, sizeof(text), "leaf.jdbc.url=%s\n", urls[i]);
        CHECK_EQ_INT(load(text), LEAF_EINVAL);
        CHECK(strstr(err, "S3") == NULL && strstr(err, "cret") == NULL);
        CHECK(strstr(err, FILE_NAME ":4: leaf.jdbc.url: ") == err);
    }
    CHECK_EQ_INT(load("leaf.jdbc.url=jdbc:mysql://leaf:S3cret@127.0.0.1:13306/leaf\n"),
                 LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leaf.jdbc.url: user:password@ in the URL is not read: set "
                                "leaf.jdbc.username and leaf.jdbc.password (or "
                                "leaf.jdbc.password.file) instead (URL not shown: it holds a "
                                "password)");
    /* A domain's reason about a secret (config_error_at) never shows the value either. */
    CHECK_EQ_INT(load("leafd.opaque.key=0123456789abcdefXYZ\n"), LEAF_OK);
    CHECK_EQ_INT(config_error_at(&cfg, "leafd.opaque.key", "bad key \"0123456789abcdefXYZ\"", err,
                                 sizeof(err)),
                 LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leafd.opaque.key: invalid value (not shown: a secret)");
    CHECK_EQ_INT(
        config_error_at(&cfg, "leafd.opaque.key", "must be 32 hex digits", err, sizeof(err)),
        LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leafd.opaque.key: must be 32 hex digits");
    /* The environment: the same refusal, naming the variable. */
    jdbc_env_url = urls[0];
    config_defaults(&cfg);
    CHECK_EQ_INT(config_apply_env(&cfg, jdbc_env, err, sizeof(err)), LEAF_EINVAL);
    CHECK(strstr(err, "environment LEAF_JDBC_URL: leaf.jdbc.url: user:password@") == err);
    CHECK(strstr(err, "S3cret") == NULL);
    /* An '@' in the parameters only is not a user, and the URL is still not shown. */
    CHECK_EQ_INT(load("leaf.jdbc.url=jdbc:mysql://h:3306/d?connectionAttributes=a@b\n"), LEAF_OK);
    CHECK_EQ_INT(load("leaf.jdbc.url=jdbc:mysql://h:99999/d?x=a@b\n"), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leaf.jdbc.url: port must be between 1 and 65535 in a URL "
                                "with an '@' (not shown: it may hold a password)");
    /* Without an '@' the URL is quoted up to '?', as before. */
    CHECK_EQ_INT(load("leaf.jdbc.url=jdbc:mysql://h:99999/d?password=x\n"), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leaf.jdbc.url: port must be between 1 and 65535 in "
                                "\"jdbc:mysql://h:99999/d\"");
}

/* ---- the failed-authentication limit -------------------------------------------- */

/* The first slot of addr's neighbourhood: its keyed hash (never 0), as auth_limit.c places it. */
static uint64_t limit_slot(const struct auth_limit *l, const char *addr, size_t n) {
    uint64_t h = siphash_24(&l->key, addr, n);
    return (h ? h : 1) % AUTH_LIMIT_SLOTS;
}

static void test_auth_limit(void) {
    static struct auth_limit l;
    const char *a = "127.0.0.1", *b = "127.0.0.2";
    auth_limit_init(&l, AUTH_LIMIT_FAILURES);
    CHECK_EQ_INT(auth_limit_addr_len("127.0.0.1:5555"), 9);
    CHECK_EQ_INT(auth_limit_addr_len("[::1]:5555"), 5);
    CHECK_EQ_INT(auth_limit_addr_len("::1"), 3);
    /* Nine failures in the window: not blocked. */
    for (int i = 0; i < 9; i++) {
        CHECK_EQ_INT(auth_limit_failure(&l, a, 9, 1000 + i * 100), 0);
    }
    CHECK_EQ_INT(auth_limit_blocked(&l, a, 9, 2000), 0);
    /* The tenth within 10 s blocks a for 10 s, and only a. */
    CHECK_EQ_INT(auth_limit_failure(&l, a, 9, 2000), 1);
    CHECK_EQ_INT(auth_limit_blocked(&l, a, 9, 2001), 1);
    CHECK_EQ_INT(auth_limit_blocked(&l, b, 9, 2001), 0);
    CHECK_EQ_INT(auth_limit_blocked(&l, a, 9, 11999), 1);
    CHECK_EQ_INT(auth_limit_blocked(&l, a, 9, 12000), 0);
    /* Failures spread wider than the window never block. */
    for (int i = 0; i < 30; i++) {
        CHECK_EQ_INT(auth_limit_failure(&l, b, 9, 20000 + i * 1200), 0);
    }
    CHECK_EQ_INT(auth_limit_blocked(&l, b, 9, 60000), 0);
    /* A flood of other addresses does not unblock a blocked one. */
    for (int i = 0; i < 10; i++) {
        auth_limit_failure(&l, a, 9, 100000);
    }
    CHECK_EQ_INT(auth_limit_blocked(&l, a, 9, 100001), 1);
    char other[32];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(other, sizeof(other), "127.1.%d.%d", i / 256, i % 256);
        auth_limit_failure(&l, other, (size_t)n, 100002);
    }
    CHECK_EQ_INT(auth_limit_blocked(&l, a, 9, 100003), 1);
    auth_limit_destroy(&l);
    /* Nine addresses that share a neighbourhood: the ninth, with no room left, is refused
     * rather than forgotten (the table never stops tracking a failing address). */
    auth_limit_init(&l, 2);
    char col[AUTH_LIMIT_WAYS + 1][32];
    size_t coln[AUTH_LIMIT_WAYS + 1];
    int found = 0;
    uint64_t base = limit_slot(&l, "127.0.0.0", 9);
    for (int i = 1; i < 4000000 && found <= AUTH_LIMIT_WAYS; i++) {
        int n = snprintf(col[found], sizeof(col[found]), "127.%d.%d.%d", i >> 16, (i >> 8) & 255,
                         i & 255);
        if (limit_slot(&l, col[found], (size_t)n) == base) {
            coln[found++] = (size_t)n;
        }
    }
    CHECK_EQ_INT(found, AUTH_LIMIT_WAYS + 1);
    for (int i = 0; i < AUTH_LIMIT_WAYS; i++) {
        auth_limit_failure(&l, col[i], coln[i], 1000);
        CHECK_EQ_INT(auth_limit_failure(&l, col[i], coln[i], 1000), 1);
    }
    CHECK_EQ_INT(auth_limit_blocked(&l, col[AUTH_LIMIT_WAYS], coln[AUTH_LIMIT_WAYS], 1001), 1);
    CHECK_EQ_INT(auth_limit_blocked(&l, col[AUTH_LIMIT_WAYS], coln[AUTH_LIMIT_WAYS], 11001), 0);
    auth_limit_destroy(&l);
    /* Keyed: two tables place the same address apart (a random key each). */
    static struct auth_limit l2;
    auth_limit_init(&l, 2);
    auth_limit_init(&l2, 2);
    int same = 0;
    for (int i = 0; i < 64; i++) {
        char x[32];
        int n = snprintf(x, sizeof(x), "192.0.2.%d", i);
        same += limit_slot(&l, x, (size_t)n) == limit_slot(&l2, x, (size_t)n);
    }
    CHECK(same < 8);
    auth_limit_destroy(&l);
    auth_limit_destroy(&l2);
    /* 0 = off. */
    auth_limit_init(&l, 0);
    for (int i = 0; i < 50; i++) {
        CHECK_EQ_INT(auth_limit_failure(&l, a, 9, 1000), 0);
    }
    CHECK_EQ_INT(auth_limit_blocked(&l, a, 9, 1001), 0);
    auth_limit_destroy(&l);
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL);
    TEST(test_tls_keys);
    TEST(test_jdbc_tls);
    TEST(test_secret_read);
    TEST(test_secret_keys);
    TEST(test_admin_token_length);
    TEST(test_inline_secret_loose);
    TEST(test_example_secret_warned);
    TEST(test_jdbc_credentials);
    TEST(test_auth_limit);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
    return unit_done();
}
