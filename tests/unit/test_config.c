/*
 * Unit tests of src/config/config.c: the properties syntax, every value type, the
 * environment override (through a fake getenv), the cross-key rules of
 * config_finish(), the dump, and reading files. Error messages are compared
 * whole, because "file:line: key: reason" is a promise to operators.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "unit.h"

#define FILE_NAME "leaf.properties"

static struct leaf_config cfg;
static char err[1024];

/* ---- helpers ------------------------------------------------------------ */

static leaf_status_t parse_len(const char *text, size_t len) {
    config_defaults(&cfg);
    err[0] = '\0';
    return config_parse(&cfg, text, len, FILE_NAME, err, sizeof(err));
}

static leaf_status_t parse(const char *text) {
    return parse_len(text, strlen(text));
}

static void expect_error(const char *text, const char *want) {
    leaf_status_t rc = parse(text);

    CHECK_EQ_INT(rc, LEAF_EINVAL);
    CHECK_EQ_STR(err, want);
}

/* Checks that a one-line "key = value" file fails with `why` on line 1. */
static void expect_value_error(const char *key, const char *value, const char *why) {
    char text[4096], want[2048];

    snprintf(text, sizeof(text), "%s = %s\n", key, value);
    snprintf(want, sizeof(want), FILE_NAME ":1: %s: %s", key, why);
    expect_error(text, want);
}

static void expect_value_ok(const char *key, const char *value) {
    char text[4096];
    leaf_status_t rc;

    snprintf(text, sizeof(text), "%s = %s\n", key, value);
    rc = parse(text);
    CHECK_EQ_INT(rc, LEAF_OK);
    if (rc != LEAF_OK) {
        fprintf(stderr, "  %s = %s: %s\n", key, value, err);
    }
}

/* Runs config_finish() on whatever the last parse()/env left in cfg. */
static leaf_status_t finish(void) {
    err[0] = '\0';
    return config_finish(&cfg, err, sizeof(err));
}

/* The fake environment: NAME, value pairs ending in NULL. */
static const char *const *fake_env;
static char asked[64][64];
static int nasked;

static const char *fake_getenv(const char *name) {
    size_t i;

    if (nasked < 64) {
        snprintf(asked[nasked++], sizeof(asked[0]), "%s", name);
    }
    for (i = 0; fake_env != NULL && fake_env[i] != NULL; i += 2) {
        if (strcmp(fake_env[i], name) == 0) {
            return fake_env[i + 1];
        }
    }
    return NULL;
}

static leaf_status_t apply_env(const char *const *env) {
    fake_env = env;
    nasked = 0;
    err[0] = '\0';
    return config_apply_env(&cfg, fake_getenv, err, sizeof(err));
}

/* finish() on a configuration that turns no mode on: refused, derived fields filled. */
static void expect_nothing_to_serve(void) {
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK(strstr(err, "leaf.snowflake.enable: nothing to serve: set leaf.snowflake.enable, "
                      "leaf.segment.enable or leafd.sequence.enable to true") != NULL);
}

static int was_asked(const char *name) {
    int i;

    for (i = 0; i < nasked; i++) {
        if (strcmp(asked[i], name) == 0) {
            return 1;
        }
    }
    return 0;
}

static char *repeat(char ch, size_t n) {
    char *s = malloc(n + 1);

    memset(s, ch, n);
    s[n] = '\0';
    return s;
}

/* ---- syntax -------------------------------------------------------------- */

static void test_defaults(void) {
    config_defaults(&cfg);
    CHECK_EQ_STR(cfg.name, "");
    CHECK_EQ_INT(cfg.segment_enable, 0);
    CHECK_EQ_INT(cfg.snowflake_enable, 0);
    CHECK_EQ_STR(cfg.listen, "0.0.0.0:8080");
    CHECK_EQ_STR(cfg.data_dir, "./var/leafd");
    CHECK_EQ_INT(cfg.worker_id, -1);
    CHECK_EQ_INT(cfg.epoch, 1288834974657LL);
    CHECK_EQ_INT(cfg.log_level, LEAF_LOG_INFO);
    CHECK_EQ_INT(cfg.idle_timeout_ms, 60000);
    CHECK_EQ_INT(cfg.db_timeout_ms, 2000);
    CHECK_EQ_STR(cfg.sources[0].file, "");
    expect_nothing_to_serve();
    CHECK_EQ_STR(cfg.listen_host, "0.0.0.0");
    CHECK_EQ_INT(cfg.listen_port, 8080);
    CHECK_EQ_INT(cfg.identity_port, 8080);
    CHECK_EQ_STR(cfg.db_host, "");
    CHECK_EQ_STR(cfg.db_name, "");
}

/* Meituan Leaf's own leaf.properties, byte for byte. */
static const char leaf_properties[] = "leaf.name=com.sankuai.leaf.opensource.test\n"
                                      "leaf.segment.enable=false\n"
                                      "#leaf.jdbc.url=\n"
                                      "#leaf.jdbc.username=\n"
                                      "#leaf.jdbc.password=\n"
                                      "\n"
                                      "leaf.snowflake.enable=false\n"
                                      "#leaf.snowflake.zk.address=\n"
                                      "#leaf.snowflake.port=\n";

static void test_leaf_properties(void) {
    CHECK_EQ_INT(parse(leaf_properties), LEAF_OK);
    CHECK_EQ_STR(err, "");
    CHECK_EQ_STR(cfg.name, "com.sankuai.leaf.opensource.test");
    CHECK_EQ_INT(cfg.segment_enable, 0);
    CHECK_EQ_INT(cfg.snowflake_enable, 0);
    CHECK_EQ_STR(cfg.sources[0].file, FILE_NAME);
    CHECK_EQ_INT(cfg.sources[0].line, 1);
    /* Leaf's file turns both modes off: it loads, but leafd has nothing to serve. */
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":7: leaf.snowflake.enable: nothing to serve: set "
                                "leaf.snowflake.enable, leaf.segment.enable or "
                                "leafd.sequence.enable to true");
}

static void test_separators_and_whitespace(void) {
    CHECK_EQ_INT(parse("leaf.name=a\n"
                       "leafd.listen = 127.0.0.1:9000\n"
                       "leafd.data.dir: /var/lib/leafd\n"
                       "\t  leaf.jdbc.username \t=\t  u s e r  \t\n"
                       "leaf.snowflake.zk.address: zk1:2181\n"
                       "leaf.jdbc.url=jdbc:mysql://db:3306/leaf?a=b&c=d:e\n"
                       "leaf.jdbc.password:=pa#ss=word!"),
                 LEAF_OK);
    CHECK_EQ_STR(err, "");
    CHECK_EQ_STR(cfg.name, "a");
    CHECK_EQ_STR(cfg.listen, "127.0.0.1:9000");
    CHECK_EQ_STR(cfg.data_dir, "/var/lib/leafd");
    CHECK_EQ_STR(cfg.jdbc_username, "u s e r");
    CHECK_EQ_STR(cfg.zk_address, "zk1:2181");
    CHECK_EQ_STR(cfg.jdbc_url, "jdbc:mysql://db:3306/leaf?a=b&c=d:e");
    /* Only the first separator counts; the rest belongs to the value. */
    CHECK_EQ_STR(cfg.jdbc_password, "=pa#ss=word!");
    CHECK_EQ_INT(cfg.sources[4].line, 7);
}

static void test_comments_and_blank_lines(void) {
    CHECK_EQ_INT(parse("# comment\n"
                       "! also a comment\n"
                       "   # indented comment = with separator\n"
                       "\t! indented bang\n"
                       "\n"
                       "   \t \n"
                       "#leaf.name=commented.out\n"
                       "leaf.name=real\n"),
                 LEAF_OK);
    CHECK_EQ_STR(cfg.name, "real");
    CHECK_EQ_INT(cfg.sources[0].line, 8);
    CHECK_EQ_INT(parse(""), LEAF_OK);
    CHECK_EQ_INT(parse("\n\n\n"), LEAF_OK);
}

static void test_line_endings(void) {
    CHECK_EQ_INT(parse("leaf.name=crlf\r\nleaf.segment.enable=true\r\n"), LEAF_OK);
    CHECK_EQ_STR(cfg.name, "crlf");
    CHECK_EQ_INT(cfg.segment_enable, 1);
    CHECK_EQ_INT(cfg.sources[1].line, 2);
    /* Old Mac line ends count as line ends too, and lines stay numbered. */
    CHECK_EQ_INT(parse("# x\rleaf.name=cr\r\rleaf.snowflake.enable=true"), LEAF_OK);
    CHECK_EQ_STR(cfg.name, "cr");
    CHECK_EQ_INT(cfg.snowflake_enable, 1);
    CHECK_EQ_INT(cfg.sources[5].line, 4);
    /* A UTF-8 byte order mark is skipped. */
    CHECK_EQ_INT(parse("\xEF\xBB\xBFleaf.name=bom\n"), LEAF_OK);
    CHECK_EQ_STR(cfg.name, "bom");
    expect_error("leaf.name=a\r\nleaf.segment.enable=yes\r\n",
                 FILE_NAME ":2: leaf.segment.enable: expected true or false, got \"yes\"");
}

static void test_unknown_key(void) {
    expect_error("leaf.name=a\nleaf.nmae=b\n",
                 FILE_NAME ":2: leaf.nmae: unknown key; did you mean leaf.name?");
    expect_error("LEAF.NAME=a\n", FILE_NAME ":1: LEAF.NAME: unknown key; did you mean leaf.name?");
    expect_error("leaf.name.x=a\n",
                 FILE_NAME ":1: leaf.name.x: unknown key; did you mean leaf.name?");
    /* The example, and a key too far from any to guess. */
    expect_error("leaf.snowflake.enabled=true\n",
                 FILE_NAME ":1: leaf.snowflake.enabled: unknown key; did you mean "
                           "leaf.snowflake.enable?");
    expect_error("leafd.resp.default.mod=segment\n",
                 FILE_NAME ":1: leafd.resp.default.mod: unknown key; did you mean "
                           "leafd.resp.default.mode?");
    expect_error("something.else.entirely=1\n",
                 FILE_NAME ":1: something.else.entirely: unknown key");
    expect_error("=value\n", FILE_NAME ":1: \"\": missing key");
    expect_error("  : value\n", FILE_NAME ":1: \"\": missing key");
}

static void test_duplicate_key(void) {
    expect_error("leaf.name=a\n# x\nleaf.name=a\n",
                 FILE_NAME ":3: leaf.name: given twice (first on line 1)");
    expect_error("leafd.threads=1\nleafd.threads : 2\n",
                 FILE_NAME ":2: leafd.threads: given twice (first on line 1)");
}

static void test_missing_separator(void) {
    expect_error("leaf.name=a\nleaf.snowflake.enable true\n",
                 FILE_NAME ":2: leaf.snowflake.enable: expected key = value (no '=' or ':' found)");
    expect_error("justakey\n",
                 FILE_NAME ":1: justakey: expected key = value (no '=' or ':' found)");
}

static void test_backslash_refused(void) {
    const char *why = "backslash escapes and continuation lines are not supported "
                      "(set the value through the environment instead)";
    char want[512];

    snprintf(want, sizeof(want), FILE_NAME ":1: leaf.jdbc.password: %s", why);
    expect_error("leaf.jdbc.password=se\\cret\n", want);
    CHECK(strstr(err, "cret") == NULL);
    snprintf(want, sizeof(want), FILE_NAME ":2: leafd.data.dir: %s", why);
    expect_error("leaf.name=a\nleafd.data.dir=/var/\\\n  lib\n", want);
}

static void test_nul_byte(void) {
    static const char text[] = "leaf.jdbc.password=ab\0cd\n";
    static const char text2[] = "leaf.segment.enable=tr\0ue\n";

    CHECK_EQ_INT(parse_len(text, sizeof(text) - 1), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":1: leaf.jdbc.password: value contains a NUL byte");
    CHECK_EQ_INT(parse_len(text2, sizeof(text2) - 1), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":1: leaf.segment.enable: expected true or false, got \"tr?ue\"");
}

/* ---- value types ----------------------------------------------------------- */

static void test_bool(void) {
    char text[256];
    int i;

    expect_value_ok("leaf.segment.enable", "true");
    CHECK_EQ_INT(cfg.segment_enable, 1);
    expect_value_ok("leaf.segment.enable", "FALSE");
    CHECK_EQ_INT(cfg.segment_enable, 0);
    expect_value_ok("leaf.snowflake.enable", "True");
    CHECK_EQ_INT(cfg.snowflake_enable, 1);
    expect_value_error("leaf.segment.enable", "", "expected true or false, got \"\"");
    expect_value_error("leaf.segment.enable", "1", "expected true or false, got \"1\"");
    expect_value_error("leaf.segment.enable", "truex", "expected true or false, got \"truex\"");
    expect_value_error("leaf.segment.enable", "tru", "expected true or false, got \"tru\"");
    /* The example message of docs/getting-started.md, on line 7. */
    for (i = 0, text[0] = '\0'; i < 6; i++) {
        strcat(text, "# line\n");
    }
    strcat(text, "leaf.snowflake.enable = yes\n");
    expect_error(text, FILE_NAME ":7: leaf.snowflake.enable: expected true or false, got \"yes\"");
}

static void test_int(void) {
    expect_value_ok("leafd.snowflake.worker.id", "0");
    CHECK_EQ_INT(cfg.worker_id, 0);
    expect_value_ok("leafd.snowflake.worker.id", "1023");
    CHECK_EQ_INT(cfg.worker_id, 1023);
    expect_value_ok("leafd.snowflake.worker.id", "-1");
    CHECK_EQ_INT(cfg.worker_id, -1);
    expect_value_ok("leafd.snowflake.worker.id", "007");
    CHECK_EQ_INT(cfg.worker_id, 7);
    expect_value_ok("leafd.snowflake.epoch", "4102444800000");
    CHECK_EQ_INT(cfg.epoch, 4102444800000LL);
    expect_value_ok("leaf.snowflake.port", "65535");
    CHECK_EQ_INT(cfg.snowflake_port, 65535);
    expect_value_error("leafd.threads", "", "expected a decimal integer, got \"\"");
    expect_value_error("leafd.threads", "abc", "expected a decimal integer, got \"abc\"");
    expect_value_error("leafd.threads", "1x", "expected a decimal integer, got \"1x\"");
    expect_value_error("leafd.threads", "+1", "expected a decimal integer, got \"+1\"");
    expect_value_error("leafd.threads", "-", "expected a decimal integer, got \"-\"");
    expect_value_error("leafd.threads", "--1", "expected a decimal integer, got \"--1\"");
    expect_value_error("leafd.threads", "1 2", "expected a decimal integer, got \"1 2\"");
    expect_value_error("leafd.threads", "0x10", "expected a decimal integer, got \"0x10\"");
    expect_value_error("leafd.threads", "1.5", "expected a decimal integer, got \"1.5\"");
}

static void test_int_range(void) {
    expect_value_error("leafd.snowflake.worker.id", "2147483648",
                       "must be between 0 and 2147483647 (or -1: unset), got \"2147483648\"");
    expect_value_error("leafd.snowflake.worker.id", "-2",
                       "must be between 0 and 2147483647 (or -1: unset), got \"-2\"");
    expect_value_error("leaf.snowflake.port", "65536",
                       "must be between 0 and 65535, got \"65536\"");
    expect_value_error("leafd.threads", "65", "must be between 0 and 64, got \"65\"");
    expect_value_error("leafd.http.max.connections", "0",
                       "must be between 1 and 1000000, got \"0\"");
    expect_value_error("leafd.snowflake.epoch", "4102444800001",
                       "must be between 0 and 4102444800000, got \"4102444800001\"");
    /* Overflow is "out of range", never a wrapped value. */
    expect_value_error("leafd.snowflake.epoch", "9223372036854775807",
                       "must be between 0 and 4102444800000, got \"9223372036854775807\"");
    expect_value_error("leafd.snowflake.epoch", "9223372036854775808",
                       "must be between 0 and 4102444800000, got \"9223372036854775808\"");
    expect_value_error("leafd.snowflake.epoch", "18446744073709551617",
                       "must be between 0 and 4102444800000, got \"18446744073709551617\"");
    expect_value_error(
        "leafd.snowflake.worker.id", "-9223372036854775808",
        "must be between 0 and 2147483647 (or -1: unset), got \"-9223372036854775808\"");
    expect_value_error(
        "leafd.snowflake.worker.id", "-99999999999999999999999",
        "must be between 0 and 2147483647 (or -1: unset), got \"-99999999999999999999999\"");
}

static void test_addr(void) {
    const char *why = "expected IPv4:port (e.g. 0.0.0.0:8080), got ";
    const char *bad[] = {"localhost:8080", "0.0.0.0",  "1.2.3:80", ":80",         "1.2.3.4.5:80",
                         "256.0.0.1:80",   "[::1]:80", "",         " 1.2.3.4:80x"};
    char want[256];
    size_t i;

    expect_value_ok("leafd.listen", "127.0.0.1:1");
    CHECK_EQ_STR(cfg.listen, "127.0.0.1:1");
    expect_nothing_to_serve();
    CHECK_EQ_STR(cfg.listen_host, "127.0.0.1");
    CHECK_EQ_INT(cfg.listen_port, 1);
    CHECK_EQ_INT(cfg.identity_port, 1);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(want, sizeof(want), "%s\"%s\"", why, bad[i]);
        if (bad[i][0] == ' ') { /* the parser trims; the message shows the trimmed value */
            snprintf(want, sizeof(want), "port must be between 1 and 65535, got \"%s\"",
                     bad[i] + 1);
        }
        expect_value_error("leafd.listen", bad[i], want);
    }
    expect_value_error("leafd.listen", "0.0.0.0:0",
                       "port must be between 1 and 65535, got \"0.0.0.0:0\"");
    expect_value_error("leafd.listen", "0.0.0.0:65536",
                       "port must be between 1 and 65535, got \"0.0.0.0:65536\"");
    expect_value_error("leafd.listen",
                       "0.0.0.0:", "port must be between 1 and 65535, got \"0.0.0.0:\"");
    expect_value_error("leafd.listen", "0.0.0.0:-1",
                       "port must be between 1 and 65535, got \"0.0.0.0:-1\"");
    expect_value_error("leafd.listen", "0.0.0.0:000080",
                       "port must be between 1 and 65535, got \"0.0.0.0:000080\"");
}

static void test_ipv4(void) {
    expect_value_ok("leafd.snowflake.advertise.ip", "");
    CHECK_EQ_STR(cfg.advertise_ip, "");
    expect_value_ok("leafd.snowflake.advertise.ip", "198.51.100.3");
    CHECK_EQ_STR(cfg.advertise_ip, "198.51.100.3");
    expect_value_ok("leafd.snowflake.advertise.ip", "255.255.255.255");
    expect_value_error("leafd.snowflake.advertise.ip", "198.51.100.256",
                       "expected an IPv4 address (or empty), got \"198.51.100.256\"");
    expect_value_error("leafd.snowflake.advertise.ip", "host",
                       "expected an IPv4 address (or empty), got \"host\"");
    expect_value_error("leafd.snowflake.advertise.ip", "::1",
                       "expected an IPv4 address (or empty), got \"::1\"");
    expect_value_error("leafd.snowflake.advertise.ip", "1.2.3.4:80",
                       "expected an IPv4 address (or empty), got \"1.2.3.4:80\"");
    expect_value_error("leafd.snowflake.advertise.ip", "1111.2.3.4",
                       "expected an IPv4 address (or empty), got \"1111.2.3.4\"");
    expect_value_error("leafd.snowflake.advertise.ip", "1.2.3.4.5.6.7.89",
                       "value too long (max 15 bytes)");
}

static void test_jdbc_good(void) {
    expect_value_ok("leaf.jdbc.url", "");
    CHECK_EQ_INT(parse("leaf.segment.enable=true\nleaf.jdbc.username=u\nleaf.jdbc.url="
                       "jdbc:mysql://localhost:3306/leaf?useUnicode=true&characterEncoding=utf8\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    CHECK_EQ_STR(cfg.db_host, "localhost");
    CHECK_EQ_INT(cfg.db_port, 3306);
    CHECK_EQ_STR(cfg.db_name, "leaf");
    CHECK_EQ_INT(parse("leaf.jdbc.url=jdbc:mariadb://192.0.2.7/leaf_db$1\n"), LEAF_OK);
    expect_nothing_to_serve();
    CHECK_EQ_STR(cfg.db_host, "192.0.2.7");
    CHECK_EQ_INT(cfg.db_port, 3306);
    CHECK_EQ_STR(cfg.db_name, "leaf_db$1");
    CHECK_EQ_INT(parse("leaf.jdbc.url=jdbc:mysql://db-1.example.com:13306/Leaf\n"), LEAF_OK);
    expect_nothing_to_serve();
    CHECK_EQ_STR(cfg.db_host, "db-1.example.com");
    CHECK_EQ_INT(cfg.db_port, 13306);
    CHECK_EQ_STR(cfg.db_name, "Leaf");
}

static void test_jdbc_bad(void) {
    const char *scheme = "expected jdbc:mysql://host[:port]/database, got ";
    const char *host = "bad host name or IPv4 address in ";
    const char *port = "port must be between 1 and 65535 in ";
    const char *db = "expected /database ([A-Za-z0-9_$]+) after the host in ";
    const char *cases[][2] = {
        {"mysql://h/db", scheme},
        {"jdbc:postgresql://h/db", scheme},
        {"jdbc:mysql:/h/db", scheme},
        {"JDBC:MYSQL://h/db", scheme},
        {"jdbc:mysql:///db", host},
        {"jdbc:mysql://h1,,h2/db", host}, /* h1,h2 is a host list (docs/cluster.md) */
        {"jdbc:mysql://192.0.2.300/db", host},
        {"jdbc:mysql://h h/db", host},
        {"jdbc:mysql://h:0/db", port},
        {"jdbc:mysql://h:abc/db", port},
        {"jdbc:mysql://h:/db", port},
        {"jdbc:mysql://h:65536/db", port},
        {"jdbc:mysql://h", db},
        {"jdbc:mysql://h/", db},
        {"jdbc:mysql://h:3306", db},
        {"jdbc:mysql://h/d-b", db},
        {"jdbc:mysql://h/db/x", db},
        {"jdbc:mysql://h?x=/db", db},
    };
    char want[512];
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* the quoted URL stops at '?' */
        snprintf(want, sizeof(want), "%s\"%.*s\"", cases[i][1], (int)strcspn(cases[i][0], "?"),
                 cases[i][0]);
        expect_value_error("leaf.jdbc.url", cases[i][0], want);
    }
    /* JDBC parameters may carry a password: messages stop at '?'. */
    snprintf(want, sizeof(want), "%s\"jdbc:mysql://h/d-b\"", db);
    expect_value_error("leaf.jdbc.url", "jdbc:mysql://h/d-b?user=u&password=hunter2", want);
    CHECK(strstr(err, "hunter2") == NULL);
}

static void test_zk_address(void) {
    const char *why = "expected host:port[,host:port...] (or empty), got ";
    const char *bad[] = {"h",        "h:",          ":2181",   "h:2181,",   ",h:1",
                         "h:1,,h:2", "h:1 ,h:2",    "h:99999", "h:0",       "h:1/chroot",
                         "h:-1",     "300.1.1.1:1", "h:1;h:2", "[::1]:2181"};
    char want[256];
    size_t i;

    expect_value_ok("leaf.snowflake.zk.address", "");
    expect_value_ok("leaf.snowflake.zk.address", "127.0.0.1:2181");
    expect_value_ok("leaf.snowflake.zk.address", "a:1,zk-2.example.com:2182,192.0.2.1:65535");
    CHECK_EQ_STR(cfg.zk_address, "a:1,zk-2.example.com:2182,192.0.2.1:65535");
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(want, sizeof(want), "%s\"%s\"", why, bad[i]);
        expect_value_error("leaf.snowflake.zk.address", bad[i], want);
    }
}

static void test_name(void) {
    const char *why = "expected [A-Za-z0-9._-]+ other than . and .., got ";
    const char *bad[] = {".", "..", "a/b", "a b", "a:b", "caf\xc3\xa9"};
    char *longest = repeat('n', 128), *toolong = repeat('n', 129);
    char want[256];
    size_t i;

    expect_value_ok("leaf.name", "");
    expect_value_ok("leaf.name", "com.sankuai.leaf.opensource.test");
    expect_value_ok("leaf.name", "A-b_c.9");
    expect_value_ok("leaf.name", "...");
    expect_value_ok("leaf.name", longest);
    CHECK_EQ_STR(cfg.name, longest);
    expect_value_error("leaf.name", toolong, "value too long (max 128 bytes)");
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(want, sizeof(want), "%s\"%s\"", why, bad[i]);
        if (i == 5) { /* non-ASCII bytes are shown as '?' */
            snprintf(want, sizeof(want), "%s\"caf??\"", why);
        }
        expect_value_error("leaf.name", bad[i], want);
    }
    free(longest);
    free(toolong);
}

static void test_level(void) {
    expect_value_ok("leafd.log.level", "debug");
    CHECK_EQ_INT(cfg.log_level, LEAF_LOG_DEBUG);
    expect_value_ok("leafd.log.level", "info");
    CHECK_EQ_INT(cfg.log_level, LEAF_LOG_INFO);
    expect_value_ok("leafd.log.level", "WARN");
    CHECK_EQ_INT(cfg.log_level, LEAF_LOG_WARN);
    expect_value_ok("leafd.log.level", "error");
    CHECK_EQ_INT(cfg.log_level, LEAF_LOG_ERROR);
    expect_value_error("leafd.log.level", "trace",
                       "expected debug, info, warn or error, got \"trace\"");
    expect_value_error("leafd.log.level", "warning",
                       "expected debug, info, warn or error, got \"warning\"");
    expect_value_error("leafd.log.level", "", "expected debug, info, warn or error, got \"\"");
    expect_value_ok("leafd.log.format", "json");
    expect_value_ok("leafd.log.format", "LOGFMT");
    expect_value_error("leafd.log.format", "text", "expected logfmt or json, got \"text\"");
}

static void test_strings(void) {
    char *max = repeat('p', 255), *over = repeat('p', 256);

    expect_value_ok("leaf.jdbc.password", "");
    expect_value_ok("leaf.jdbc.password", "with spaces # and = and : inside");
    CHECK_EQ_STR(cfg.jdbc_password, "with spaces # and = and : inside");
    expect_value_ok("leaf.jdbc.password", max);
    CHECK_EQ_INT(strlen(cfg.jdbc_password), 255);
    expect_value_error("leaf.jdbc.password", over, "value too long (max 255 bytes)");
    CHECK(strstr(err, "ppp") == NULL); /* a secret is never echoed */
    free(max);
    free(over);
}

static void test_very_long_lines(void) {
    size_t n = 3 * 1024 * 1024;
    char *text = malloc(n + 64), *want;
    int len;

    /* A 3 MiB value: too long, and nothing overruns. */
    len = snprintf(text, 64, "leafd.listen=");
    memset(text + len, '1', n);
    text[len + n] = '\0';
    CHECK_EQ_INT(parse(text), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":1: leafd.listen: value too long (max 63 bytes)");
    /* A 3 MiB integer: out of range, and the message quotes only its start. */
    len = snprintf(text, 64, "leafd.threads=");
    memset(text + len, '9', n);
    text[len + n] = '\0';
    CHECK_EQ_INT(parse(text), LEAF_EINVAL);
    want = repeat('9', 64);
    CHECK(strstr(err, want) != NULL);
    CHECK(strstr(err, "...\"") != NULL);
    CHECK(strlen(err) < 200);
    /* A 3 MiB key: unknown, shown cut short. */
    memset(text, 'k', n);
    memcpy(text + n, "=v", 3);
    CHECK_EQ_INT(parse(text), LEAF_EINVAL);
    CHECK(strlen(err) < 200);
    CHECK(strstr(err, "...: unknown key") != NULL);
    free(want);
    free(text);
}

static void test_every_default_is_valid(void) {
    char dump[8192];
    struct leaf_config reparsed;
    size_t n;

    config_defaults(&cfg);
    n = config_dump(&cfg, dump, sizeof(dump));
    CHECK(n > 0 && n < sizeof(dump) - 1);
    config_defaults(&reparsed);
    err[0] = '\0';
    CHECK_EQ_INT(config_parse(&reparsed, dump, n, "dump", err, sizeof(err)), LEAF_OK);
    CHECK_EQ_STR(err, "");
    memset(reparsed.sources, 0, sizeof(reparsed.sources));
    memset(reparsed.file, 0, sizeof(reparsed.file));
    CHECK(memcmp(&reparsed, &cfg, sizeof(cfg)) == 0);
}

/* ---- environment ----------------------------------------------------------- */

static void test_env_names(void) {
    config_defaults(&cfg);
    CHECK_EQ_INT(apply_env(NULL), LEAF_OK);
    CHECK(was_asked("LEAF_NAME"));
    CHECK(was_asked("LEAF_SNOWFLAKE_ZK_ADDRESS"));
    CHECK(was_asked("LEAF_JDBC_URL"));
    CHECK(was_asked("LEAFD_SNOWFLAKE_WORKER_ID"));
    CHECK(was_asked("LEAFD_HTTP_IDLE_TIMEOUT_MS"));
    CHECK(was_asked("LEAFD_LOG_LEVEL"));
    CHECK(!was_asked("leaf.name"));
    CHECK(nasked > 20);
}

static void test_env_override(void) {
    static const char *const env[] = {"LEAF_SNOWFLAKE_ZK_ADDRESS",
                                      "zk1:2181,zk2:2181",
                                      "LEAF_SNOWFLAKE_ENABLE",
                                      "TRUE",
                                      "LEAF_JDBC_URL",
                                      "", /* an empty string is a value */
                                      "LEAFD_THREADS",
                                      "4",
                                      "LEAFD_LOG_LEVEL",
                                      "debug",
                                      "LEAF_JDBC_PASSWORD",
                                      " spaced ",
                                      NULL};

    CHECK_EQ_INT(parse("leaf.name=x\nleaf.jdbc.url=jdbc:mysql://h/db\nleafd.threads=2\n"), LEAF_OK);
    CHECK_EQ_INT(apply_env(env), LEAF_OK);
    CHECK_EQ_STR(err, "");
    CHECK_EQ_STR(cfg.zk_address, "zk1:2181,zk2:2181");
    CHECK_EQ_INT(cfg.snowflake_enable, 1);
    CHECK_EQ_STR(cfg.jdbc_url, "");
    CHECK_EQ_INT(cfg.threads, 4);
    CHECK_EQ_INT(cfg.log_level, LEAF_LOG_DEBUG);
    CHECK_EQ_STR(cfg.jdbc_password, " spaced "); /* environment values are not trimmed */
    CHECK_EQ_STR(cfg.name, "x");
    CHECK_EQ_STR(cfg.sources[0].file, FILE_NAME);
    CHECK_EQ_STR(cfg.sources[2].file, "environment");
    CHECK_EQ_INT(cfg.sources[2].line, 0);
    CHECK_EQ_INT(finish(), LEAF_OK);
}

static void test_env_bad(void) {
    static const char *const bool_env[] = {"LEAF_SNOWFLAKE_ENABLE", "yes", NULL};
    static const char *const int_env[] = {"LEAFD_SNOWFLAKE_WORKER_ID", "2147483648", NULL};
    static const char *const zk_env[] = {"LEAF_SNOWFLAKE_ZK_ADDRESS", "zk1", NULL};
    static const char *const trim_env[] = {"LEAFD_THREADS", " 4", NULL};
    static const char *const name_env[] = {"LEAF_NAME", "a/b", NULL};

    config_defaults(&cfg);
    CHECK_EQ_INT(apply_env(bool_env), LEAF_EINVAL);
    CHECK_EQ_STR(err, "environment LEAF_SNOWFLAKE_ENABLE: leaf.snowflake.enable: "
                      "expected true or false, got \"yes\"");
    CHECK_EQ_INT(apply_env(int_env), LEAF_EINVAL);
    CHECK_EQ_STR(err, "environment LEAFD_SNOWFLAKE_WORKER_ID: leafd.snowflake.worker.id: "
                      "must be between 0 and 2147483647 (or -1: unset), got \"2147483648\"");
    CHECK_EQ_INT(apply_env(zk_env), LEAF_EINVAL);
    CHECK_EQ_STR(err, "environment LEAF_SNOWFLAKE_ZK_ADDRESS: leaf.snowflake.zk.address: "
                      "expected host:port[,host:port...] (or empty), got \"zk1\"");
    CHECK_EQ_INT(apply_env(trim_env), LEAF_EINVAL);
    CHECK_EQ_STR(err, "environment LEAFD_THREADS: leafd.threads: "
                      "expected a decimal integer, got \" 4\"");
    CHECK_EQ_INT(apply_env(name_env), LEAF_EINVAL);
    CHECK_EQ_STR(err, "environment LEAF_NAME: leaf.name: "
                      "expected [A-Za-z0-9._-]+ other than . and .., got \"a/b\"");
}

/* ---- cross-key rules -------------------------------------------------------- */

static void test_finish_name_required(void) {
    static const char *const env_on[] = {"LEAF_SNOWFLAKE_ENABLE", "true", NULL};
    static const char *const env_empty[] = {"LEAF_NAME", "", NULL};
    const char *why = "leaf.name: required when leaf.snowflake.enable is true";
    char want[256];

    /* Missing from the file: the message names the file. */
    CHECK_EQ_INT(parse("leaf.snowflake.enable=true\nleafd.snowflake.worker.id=1\n"), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    snprintf(want, sizeof(want), FILE_NAME ": %s", why);
    CHECK_EQ_STR(err, want);
    /* Set empty in the file: file and line. */
    CHECK_EQ_INT(parse("leaf.snowflake.enable=true\nleaf.name=\nleafd.snowflake.worker.id=1\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    snprintf(want, sizeof(want), FILE_NAME ":2: %s", why);
    CHECK_EQ_STR(err, want);
    /* Set empty in the environment: the variable. */
    CHECK_EQ_INT(parse("leaf.snowflake.enable=true\nleaf.name=a\nleafd.snowflake.worker.id=1\n"),
                 LEAF_OK);
    CHECK_EQ_INT(apply_env(env_empty), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    snprintf(want, sizeof(want), "environment LEAF_NAME: %s", why);
    CHECK_EQ_STR(err, want);
    /* No file at all: just the key. */
    config_defaults(&cfg);
    CHECK_EQ_INT(apply_env(env_on), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, why);
}

static void test_finish_worker_id(void) {
    CHECK_EQ_INT(parse("leaf.name=a\nleaf.snowflake.enable=true\n"), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME
                 ": leafd.snowflake.worker.id: required (0 up to the layout's largest worker "
                 "ID, 1023 by default) when "
                 "leaf.snowflake.enable is true and leaf.snowflake.zk.address is empty");
    CHECK_EQ_INT(parse("leaf.name=a\nleaf.snowflake.enable=true\nleafd.snowflake.worker.id=-1\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK(strstr(err, FILE_NAME ":3: leafd.snowflake.worker.id: required (0 up to") == err);
    CHECK_EQ_INT(parse("leaf.name=a\nleaf.snowflake.enable=true\nleafd.snowflake.worker.id=0\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    CHECK_EQ_INT(parse("leaf.name=a\nleaf.snowflake.enable=true\n"
                       "leaf.snowflake.zk.address=127.0.0.1:2181\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
}

/* leafd.snowflake.worker.mode: forever | lease; lease needs ZooKeeper. */
static void test_worker_mode(void) {
    expect_value_ok("leafd.snowflake.worker.mode", "lease");
    expect_value_ok("leafd.snowflake.worker.mode", "FOREVER");
    expect_value_error("leafd.snowflake.worker.mode", "leased",
                       "expected forever or lease, got \"leased\"");
    expect_value_error("leafd.snowflake.switch.after.ms", "4",
                       "must be between 5 and 86400000, got \"4\"");
    CHECK_EQ_INT(parse("leaf.name=a\nleaf.snowflake.enable=true\n"
                       "leaf.snowflake.zk.address=127.0.0.1:2181\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    CHECK_EQ_INT(cfg.lease_mode, 0);
    CHECK_EQ_INT(cfg.switch_after_ms, 1000);
    CHECK_EQ_INT(parse("leaf.name=a\nleaf.snowflake.enable=true\n"
                       "leaf.snowflake.zk.address=127.0.0.1:2181\n"
                       "leafd.snowflake.worker.mode = lease\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    CHECK_EQ_INT(cfg.lease_mode, 1);
    CHECK_EQ_INT(parse("leaf.name=a\nleaf.snowflake.enable=true\nleafd.snowflake.worker.id=1\n"
                       "leafd.snowflake.worker.mode=lease\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":4: leafd.snowflake.worker.mode: lease needs "
                                "leaf.snowflake.zk.address: the slots live there");
}

/* leafd.snowflake.max.lead.ms: never above reserve.ms; unset, it follows a smaller reserve.ms. */
static void test_max_lead(void) {
    const char *base = "leaf.name=a\nleaf.snowflake.enable=true\n"
                       "leaf.snowflake.zk.address=127.0.0.1:2181\n";
    char text[512];
    CHECK_EQ_INT(parse(base), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    CHECK_EQ_INT(cfg.max_lead_ms, 5000);
    snprintf(text, sizeof(text), "%sleafd.snowflake.max.lead.ms = 0\n", base);
    CHECK_EQ_INT(parse(text), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    CHECK_EQ_INT(cfg.max_lead_ms, 0);
    snprintf(text, sizeof(text), "%sleafd.snowflake.reserve.ms = 3000\n", base);
    CHECK_EQ_INT(parse(text), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    CHECK_EQ_INT(cfg.max_lead_ms, 3000);
    snprintf(text, sizeof(text),
             "%sleafd.snowflake.reserve.ms = 3000\nleafd.snowflake.max.lead.ms = 3001\n", base);
    CHECK_EQ_INT(parse(text), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":5: leafd.snowflake.max.lead.ms: must not be above "
                                "leafd.snowflake.reserve.ms: IDs never run ahead of the "
                                "persisted reservation");
}

static void test_finish_worker_id_with_zk(void) {
    static const char *const env[] = {"LEAFD_SNOWFLAKE_WORKER_ID", "5", NULL};
    const char *why =
        "leafd.snowflake.worker.id: only used when leaf.snowflake.zk.address is empty";
    char want[256];

    /* Refused even with snowflake off: the value would silently be ignored. */
    CHECK_EQ_INT(parse("leaf.snowflake.zk.address=zk:2181\n# x\nleafd.snowflake.worker.id=3\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    snprintf(want, sizeof(want), FILE_NAME ":3: %s", why);
    CHECK_EQ_STR(err, want);
    CHECK_EQ_INT(parse("leaf.name=a\nleaf.snowflake.enable=true\nleaf.snowflake.zk.address=z:1\n"),
                 LEAF_OK);
    CHECK_EQ_INT(apply_env(env), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    snprintf(want, sizeof(want), "environment LEAFD_SNOWFLAKE_WORKER_ID: %s", why);
    CHECK_EQ_STR(err, want);
}

static void test_finish_segment(void) {
    CHECK_EQ_INT(parse("leaf.segment.enable=true\nleaf.jdbc.username=u\n"), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ": leaf.jdbc.url: required when leaf.segment.enable is true");
    CHECK_EQ_INT(parse("leaf.segment.enable=true\nleaf.jdbc.url=jdbc:mysql://h/d\n"), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ": leaf.jdbc.username: required when leaf.segment.enable is true");
    CHECK_EQ_INT(parse("leaf.segment.enable=true\nleaf.jdbc.url=jdbc:mysql://h/d\n"
                       "leaf.jdbc.username=\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err,
                 FILE_NAME ":3: leaf.jdbc.username: required when leaf.segment.enable is true");
    /* The password may be empty. */
    CHECK_EQ_INT(parse("leaf.segment.enable=true\nleaf.jdbc.url=jdbc:mysql://h/d\n"
                       "leaf.jdbc.username=root\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    /* Segment off: the database keys are not needed (but something must be on). */
    CHECK_EQ_INT(parse("leaf.segment.enable=false\nleaf.snowflake.enable=true\nleaf.name=n\n"
                       "leafd.snowflake.worker.id=1\n"),
                 LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_OK);
    /* Nothing on at all: refused, naming the keys. */
    CHECK_EQ_INT(parse("leaf.segment.enable=false\n"), LEAF_OK);
    expect_nothing_to_serve();
    /* An empty data dir would put the worker-ID cache at the file system root. */
    CHECK_EQ_INT(parse("leafd.data.dir=\n"), LEAF_OK);
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, FILE_NAME ":1: leafd.data.dir: must not be empty");
}

static void test_finish_identity_port(void) {
    CHECK_EQ_INT(parse("leafd.listen=0.0.0.0:9090\n"), LEAF_OK);
    expect_nothing_to_serve();
    CHECK_EQ_INT(cfg.identity_port, 9090);
    CHECK_EQ_INT(parse("leafd.listen=0.0.0.0:9090\nleaf.snowflake.port=2222\n"), LEAF_OK);
    expect_nothing_to_serve();
    CHECK_EQ_INT(cfg.listen_port, 9090);
    CHECK_EQ_INT(cfg.identity_port, 2222);
}

static void test_finish_hand_filled(void) {
    config_defaults(&cfg);
    snprintf(cfg.listen, sizeof(cfg.listen), "nonsense");
    CHECK_EQ_INT(finish(), LEAF_EINVAL);
    CHECK_EQ_STR(err, "leafd.listen: expected IPv4:port (e.g. 0.0.0.0:8080), got \"nonsense\"");
}

/* ---- dump ---------------------------------------------------------------- */

/* --print-config masks the passwords a JDBC URL may carry. */
static void test_dump_jdbc_masked(void) {
    char dump[8192];
    CHECK_EQ_INT(parse("leaf.jdbc.url=jdbc:mysql://db1:3306/leaf?"
                       "useSSL=false&password=s3cret&PASSWORD1=t0p&sslMode=DISABLED\n"),
                 LEAF_OK);
    config_dump(&cfg, dump, sizeof(dump));
    CHECK(strstr(dump, "leaf.jdbc.url = jdbc:mysql://db1:3306/leaf?useSSL=false&"
                       "password=***&PASSWORD1=***&sslMode=DISABLED") != NULL);
    CHECK(strstr(dump, "s3cret") == NULL && strstr(dump, "t0p") == NULL);
}

static void test_dump(void) {
    static const char *const env[] = {"LEAFD_ADMIN_TOKEN", "tok3n", NULL};
    char dump[8192];
    const char *nl;
    int lines = 0;
    size_t n;

    CHECK_EQ_INT(parse("leaf.name=a\nleaf.jdbc.password=s3cret\nleafd.threads=3\n"), LEAF_OK);
    CHECK_EQ_INT(apply_env(env), LEAF_OK);
    n = config_dump(&cfg, dump, sizeof(dump));
    CHECK_EQ_INT(n, strlen(dump));
    CHECK(strncmp(dump,
                  "leaf.name = a  # from " FILE_NAME ":1\n"
                  "leaf.segment.enable = false\n"
                  "leaf.jdbc.url =\n"
                  "leaf.jdbc.username =\n"
                  "leaf.jdbc.password = ***  # from " FILE_NAME ":2\n",
                  strlen("leaf.name = a  # from " FILE_NAME ":1\n"
                         "leaf.segment.enable = false\n"
                         "leaf.jdbc.url =\n"
                         "leaf.jdbc.username =\n"
                         "leaf.jdbc.password = ***  # from " FILE_NAME ":2\n")) == 0);
    CHECK(strstr(dump, "\nleafd.threads = 3  # from " FILE_NAME ":3\n") != NULL);
    CHECK(strstr(dump, "\nleafd.admin.token = ***  # from environment LEAFD_ADMIN_TOKEN\n") !=
          NULL);
    CHECK(strstr(dump, "\nleafd.snowflake.worker.id = -1\n") != NULL);
    CHECK(strstr(dump, "\nleafd.log.level = info\n") != NULL);
    CHECK(strstr(dump, "\nleafd.listen = 0.0.0.0:8080\n") != NULL);
    CHECK(strstr(dump, "s3cret") == NULL);
    CHECK(strstr(dump, "tok3n") == NULL);
    for (nl = dump; (nl = strchr(nl, '\n')) != NULL; nl++) {
        lines++;
    }
#define COUNT_ROW(...) +1
    CHECK_EQ_INT(lines, 0 CONFIG_KEYS(COUNT_ROW)); /* one line per CONFIG_KEYS row */
#undef COUNT_ROW
}

static void test_dump_small_buffer(void) {
    char small[40];
    size_t n;

    config_defaults(&cfg);
    memset(small, 'x', sizeof(small));
    n = config_dump(&cfg, small, sizeof(small));
    CHECK_EQ_INT(n, sizeof(small) - 1);
    CHECK_EQ_INT(strlen(small), sizeof(small) - 1);
    CHECK(strcmp(small, "leaf.name =\nleaf.segment.enable = false") == 0);
    CHECK_EQ_INT(config_dump(&cfg, small, 0), 0);
    CHECK_EQ_INT(config_dump(&cfg, small, 1), 0);
    CHECK_EQ_STR(small, "");
}

/* ---- files ------------------------------------------------------------------ */

static void write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");

    CHECK(f != NULL);
    if (f != NULL) {
        CHECK_EQ_INT(fwrite(text, 1, len, f), len);
        fclose(f);
    }
}

static void test_load_file(void) {
    char dir[] = "/tmp/test_config.XXXXXX", path[128], want[256];
    size_t big = 1024 * 1024;
    char *text;

    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/leaf.properties", dir);
    write_file(path, leaf_properties, strlen(leaf_properties));
    config_defaults(&cfg);
    CHECK_EQ_INT(config_load_file(&cfg, path, err, sizeof(err)), LEAF_OK);
    CHECK_EQ_STR(cfg.name, "com.sankuai.leaf.opensource.test");
    CHECK_EQ_STR(cfg.sources[0].file, path);
    /* Errors inside the file name the path given. */
    write_file(path, "leaf.name=a\nleafd.threads=x\n", strlen("leaf.name=a\nleafd.threads=x\n"));
    CHECK_EQ_INT(config_load_file(&cfg, path, err, sizeof(err)), LEAF_EINVAL);
    snprintf(want, sizeof(want), "%s:2: leafd.threads: expected a decimal integer, got \"x\"",
             path);
    CHECK_EQ_STR(err, want);
    /* Exactly 1 MiB loads; one byte more does not. */
    text = repeat('#', big + 1);
    text[big - 1] = '\n';
    write_file(path, text, big);
    CHECK_EQ_INT(config_load_file(&cfg, path, err, sizeof(err)), LEAF_OK);
    write_file(path, text, big + 1);
    CHECK_EQ_INT(config_load_file(&cfg, path, err, sizeof(err)), LEAF_EINVAL);
    snprintf(want, sizeof(want), "%s: file too large (max 1048576 bytes)", path);
    CHECK_EQ_STR(err, want);
    free(text);
    unlink(path);
    CHECK_EQ_INT(config_load_file(&cfg, path, err, sizeof(err)), LEAF_ERR);
    snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
    CHECK_EQ_STR(err, want);
    CHECK_EQ_INT(config_load_file(&cfg, dir, err, sizeof(err)), LEAF_ERR);
    snprintf(want, sizeof(want), "%s: read failed: Is a directory", dir);
    CHECK_EQ_STR(err, want);
    rmdir(dir);
}

/* Unknown LEAF_* / LEAFD_* variables: fatal, named, with the nearest key's variable. */
static void test_env_unknown(void) {
    char *typo[] = {"PATH=/bin", "LEAFD_LISTN=127.0.0.1:1", NULL};
    char *far[] = {"LEAF_SOMETHING_ELSE_ENTIRELY=1", NULL};
    char *fine[] = {"PATH=/bin",
                    "LEAFD_LISTEN=127.0.0.1:1",
                    "LEAF_SNOWFLAKE_ZK_ADDRESS=",
                    "LEAFD_BIN=/x/leafd",
                    "LEAFD_CONF=/x.properties",
                    "LEAFD_INHERIT_FDS=ctl=9;err=8;lock=3;leafd.listen=5,6",
                    "LEAFD_TEST_TSAN=0",
                    "LEAFD_FUZZ_FLAGS=-x",
                    "LEAFDX=1",
                    "LEAF=1",
                    "leafd_listn=lower case is not ours",
                    NULL};
    CHECK_EQ_INT(config_check_env(typo, err, sizeof(err)), LEAF_EINVAL);
    CHECK_EQ_STR(err, "environment LEAFD_LISTN: unknown variable (no such key); did you mean "
                      "LEAFD_LISTEN?");
    CHECK_EQ_INT(config_check_env(far, err, sizeof(err)), LEAF_EINVAL);
    CHECK_EQ_STR(err, "environment LEAF_SOMETHING_ELSE_ENTIRELY: unknown variable (no such key)");
    err[0] = '\0';
    CHECK_EQ_INT(config_check_env(fine, err, sizeof(err)), LEAF_OK);
    CHECK_EQ_STR(err, "");
    CHECK_EQ_INT(config_check_env(NULL, err, sizeof(err)), LEAF_OK);
}

/*
 * The variables Kubernetes injects for the Services of a namespace (enableServiceLinks): the
 * project's own Services leafd-http and leafd-resp give LEAFD_HTTP_SERVICE_HOST and so on.
 * They name no key, and they are skipped; a typo beside them still stops start-up.
 */
static void test_env_service_links(void) {
    char *links[] = {"LEAFD_HTTP_SERVICE_HOST=127.0.10.1",
                     "LEAFD_HTTP_SERVICE_PORT=8080",
                     "LEAFD_HTTP_SERVICE_PORT_HTTP=8080",
                     "LEAFD_HTTP_PORT=tcp://127.0.10.1:8080",
                     "LEAFD_HTTP_PORT_8080_TCP=tcp://127.0.10.1:8080",
                     "LEAFD_HTTP_PORT_8080_TCP_PROTO=tcp",
                     "LEAFD_HTTP_PORT_8080_TCP_PORT=8080",
                     "LEAFD_HTTP_PORT_8080_TCP_ADDR=127.0.10.1",
                     "LEAFD_RESP_SERVICE_HOST=127.0.10.2",
                     "LEAFD_RESP_PORT_6379_UDP=udp://127.0.10.2:6379",
                     "LEAF_SERVICE_HOST=127.0.10.3",
                     NULL};
    err[0] = '\0';
    CHECK_EQ_INT(config_check_env(links, err, sizeof(err)), LEAF_OK);
    CHECK_EQ_STR(err, "");
    char *typo[] = {"LEAFD_HTTP_SERVICE_HOST=127.0.10.1", "LEAFD_HTTP_PORT_8080_TCPX=1", NULL};
    CHECK_EQ_INT(config_check_env(typo, err, sizeof(err)), LEAF_EINVAL);
    char *typo2[] = {"LEAFD_SERVICE_PORT_X_Y=1", "LEAFD_PORT_80_SCTP_PORT=1", "LEAFD_LISTN=1",
                     NULL};
    CHECK_EQ_INT(config_check_env(typo2, err, sizeof(err)), LEAF_EINVAL);
    CHECK(strstr(err, "LEAFD_LISTN") != NULL);
}

/* Spring Boot's server.port: unknown, and the message names leafd.listen. */
static void test_server_port_named(void) {
    expect_error("leaf.name = x\nserver.port = 8081\n",
                 FILE_NAME ":2: server.port: unknown key (a Spring Boot setting): leafd's HTTP "
                           "port is in leafd.listen, e.g. leafd.listen = 0.0.0.0:8080");
}

int main(void) {
    TEST(test_defaults);
    TEST(test_leaf_properties);
    TEST(test_separators_and_whitespace);
    TEST(test_comments_and_blank_lines);
    TEST(test_line_endings);
    TEST(test_unknown_key);
    TEST(test_duplicate_key);
    TEST(test_missing_separator);
    TEST(test_backslash_refused);
    TEST(test_nul_byte);
    TEST(test_bool);
    TEST(test_int);
    TEST(test_int_range);
    TEST(test_addr);
    TEST(test_ipv4);
    TEST(test_jdbc_good);
    TEST(test_jdbc_bad);
    TEST(test_zk_address);
    TEST(test_name);
    TEST(test_level);
    TEST(test_strings);
    TEST(test_very_long_lines);
    TEST(test_every_default_is_valid);
    TEST(test_env_names);
    TEST(test_env_override);
    TEST(test_env_bad);
    TEST(test_finish_name_required);
    TEST(test_finish_worker_id);
    TEST(test_worker_mode);
    TEST(test_max_lead);
    TEST(test_finish_worker_id_with_zk);
    TEST(test_finish_segment);
    TEST(test_finish_identity_port);
    TEST(test_finish_hand_filled);
    TEST(test_dump);
    TEST(test_dump_jdbc_masked);
    TEST(test_dump_small_buffer);
    TEST(test_load_file);
    TEST(test_env_unknown);
    TEST(test_env_service_links);
    TEST(test_server_port_named);
    return unit_done();
}
