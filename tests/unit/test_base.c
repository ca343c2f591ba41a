/*
 * Unit tests of src/base: the growable buffer (growth past any fixed size,
 * escaping, the sticky failure and the max limit), the integer parser and
 * formatter, the clocks' basic properties, the systemd notification datagram and SipHash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "file.h"
#include "log.h"
#include "notify.h"
#include "num.h"
#include "sbuf.h"
#include "siphash.h"
#include "unit.h"

static void test_sbuf_grows(void) {
    struct sbuf b;
    sbuf_init(&b, 0);
    for (int i = 0; i < 100000; i++) {
        sbuf_printf(&b, "line %d\n", i);
    }
    CHECK(!b.failed);
    CHECK(b.len > 600000); /* far beyond the old 512 KiB scratch buffer */
    CHECK(memcmp(b.data + b.len - 12, "line 99999\n", 11) == 0 || b.data[b.len - 1] == '\n');
    CHECK_EQ_INT(b.data[b.len], '\0');
    sbuf_free(&b);
}

static void test_sbuf_printf_exact_fit(void) {
    struct sbuf b;
    sbuf_init(&b, 0);
    sbuf_puts(&b, "x");
    size_t room = b.cap - b.len - 1;
    char *s = malloc(room + 2);
    memset(s, 'a', room + 1);
    s[room + 1] = '\0';
    sbuf_printf(&b, "%s", s); /* one byte more than fits: must grow, not cut */
    CHECK_EQ_INT(b.len, room + 2);
    CHECK_EQ_INT(b.data[b.len - 1], 'a');
    free(s);
    sbuf_free(&b);
}

static void test_sbuf_max_is_sticky(void) {
    struct sbuf b;
    sbuf_init(&b, 8);
    sbuf_puts(&b, "12345");
    sbuf_puts(&b, "6789"); /* would pass max */
    CHECK(b.failed);
    CHECK_EQ_STR(b.data, "12345");
    sbuf_puts(&b, "a");
    CHECK_EQ_INT(b.len, 5);
    sbuf_reset(&b);
    CHECK(!b.failed);
    sbuf_printf(&b, "%d", 123456789);
    CHECK(b.failed);
    CHECK_EQ_INT(b.len, 0);
    sbuf_free(&b);
}

static void test_sbuf_json(void) {
    struct sbuf b;
    sbuf_init(&b, 0);
    sbuf_json_str(&b, "a\"b\\c\n\x01 d", 9);
    CHECK_EQ_STR(b.data, "\"a\\\"b\\\\c\\u000a\\u0001 d\"");
    sbuf_reset(&b);
    sbuf_json_str(&b, "", 0);
    CHECK_EQ_STR(b.data, "\"\"");
    sbuf_reset(&b);
    sbuf_json_str(&b, "\xe8\xae\xa2\xe5\x8d\x95", 6); /* UTF-8 passes through */
    CHECK_EQ_STR(b.data, "\"\xe8\xae\xa2\xe5\x8d\x95\"");
    sbuf_free(&b);
}

static void test_sbuf_html(void) {
    struct sbuf b;
    sbuf_init(&b, 0);
    sbuf_html(&b, "<a href='x'>&\"</a>", 18);
    CHECK_EQ_STR(b.data, "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
    sbuf_free(&b);
}

static leaf_status_t parse(const char *s, int64_t *v) {
    return num_parse_i64(s, strlen(s), v);
}

static void test_num_parse(void) {
    int64_t v = 7;
    CHECK_EQ_INT(parse("0", &v), LEAF_OK);
    CHECK_EQ_INT(v, 0);
    CHECK_EQ_INT(parse("-0", &v), LEAF_OK);
    CHECK_EQ_INT(v, 0);
    CHECK_EQ_INT(parse("9223372036854775807", &v), LEAF_OK);
    CHECK(v == INT64_MAX);
    CHECK_EQ_INT(parse("-9223372036854775808", &v), LEAF_OK);
    CHECK(v == INT64_MIN);
    CHECK_EQ_INT(parse("9223372036854775808", &v), LEAF_ERANGE);
    CHECK_EQ_INT(parse("99999999999999999999999", &v), LEAF_ERANGE);
    CHECK_EQ_INT(parse("", &v), LEAF_EINVAL);
    CHECK_EQ_INT(parse("-", &v), LEAF_EINVAL);
    CHECK_EQ_INT(parse("+1", &v), LEAF_EINVAL);
    CHECK_EQ_INT(parse(" 1", &v), LEAF_EINVAL);
    CHECK_EQ_INT(parse("1x", &v), LEAF_EINVAL);
    CHECK_EQ_INT(parse("99999999999999999999999x", &v), LEAF_EINVAL);
    CHECK_EQ_INT(num_parse_i64("12", 1, &v), LEAF_OK); /* spans, not C strings */
    CHECK_EQ_INT(v, 1);
    CHECK_EQ_INT(num_parse_range("10", 2, 1, 10, &v), LEAF_OK);
    CHECK_EQ_INT(num_parse_range("11", 2, 1, 10, &v), LEAF_ERANGE);
    CHECK_EQ_INT(num_parse_range("0", 1, 1, 10, &v), LEAF_ERANGE);
}

static void test_num_format(void) {
    static const int64_t cases[] = {0, 1, 9, 10, 99, 100, 12345, -1, -10, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char a[32], b[32];
        size_t n = num_format_i64(a, cases[i]);
        a[n] = '\0';
        snprintf(b, sizeof(b), "%" PRId64, cases[i]);
        CHECK_EQ_STR(a, b);
    }
}

static void test_clocks(void) {
    int64_t w = clock_wall_ms(), m1 = clock_mono_ms(), n1 = clock_mono_ns();
    CHECK(w > 1600000000000LL);
    int64_t m2 = clock_mono_ms(), n2 = clock_mono_ns();
    CHECK(m2 >= m1);
    CHECK(n2 >= n1);
    CHECK(n1 / 1000000 - m1 <= 1);
}

/* The reference vector of SipHash-2-4 (key 00..0f, message 00..0e). */
static void test_siphash(void) {
    struct siphash_key k = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
    unsigned char in[15];
    for (int i = 0; i < 15; i++) {
        in[i] = (unsigned char)i;
    }
    CHECK(siphash_24(&k, in, 15) == 0xa129ca6149be45e5ULL);
    CHECK(siphash_24(&k, in, 0) == 0x726fdb47dd0e0e31ULL);
}

static void test_log_safe(void) {
    char out[8];
    CHECK_EQ_INT(log_safe("ab\ncd\"e'", 8, out, sizeof(out)), 7);
    CHECK(strcmp(out, "ab?cd?e") == 0); /* cut at cap - 1 */
    CHECK_EQ_INT(log_safe("x", 1, out, 1), 0);
    CHECK(out[0] == '\0');
    CHECK_EQ_INT(log_safe(NULL, 5, out, sizeof(out)), 0);
}

/* file_write_atomic: the mode whatever the umask, replaced whole, read back. */
static void test_file_atomic(void) {
    char dir[] = "/tmp/leafd-unit-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128];
    snprintf(path, sizeof(path), "%s/a/b/users.jsonl", dir);
    mode_t old = umask(0);
    CHECK_EQ_INT(file_write_atomic("unit", path, "one\n", 4, 0600), LEAF_OK);
    umask(old);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK_EQ_INT(file_write_atomic("unit", path, "two\ntwo\n", 8, 0600), LEAF_OK);
    char *text = NULL;
    size_t len = 0;
    CHECK_EQ_INT(file_read_all("unit", path, 100, &text, &len), LEAF_OK);
    CHECK(len == 8 && strcmp(text, "two\ntwo\n") == 0);
    free(text);
    CHECK_EQ_INT(file_read_all("unit", path, 4, &text, &len), LEAF_EINVAL);
    char missing[160];
    snprintf(missing, sizeof(missing), "%s/none", dir);
    CHECK_EQ_INT(file_read_all("unit", missing, 4, &text, &len), LEAF_ENOTFOUND);
    /* A file whose size fstat does not know (procfs says 0) is read whole, the buffer
     * growing; the limit still holds. */
    CHECK_EQ_INT(file_read_all("unit", "/proc/self/maps", 1 << 20, &text, &len), LEAF_OK);
    CHECK(len > 256 && strlen(text) == len && strstr(text, "test_base") != NULL);
    free(text);
    CHECK_EQ_INT(file_read_all("unit", "/proc/self/maps", 100, &text, &len), LEAF_EINVAL);
    /* Exactly max bytes is allowed; one more is not. */
    char big[5000];
    memset(big, 'x', sizeof(big));
    CHECK_EQ_INT(file_write_atomic("unit", path, big, sizeof(big), 0600), LEAF_OK);
    CHECK_EQ_INT(file_read_all("unit", path, sizeof(big), &text, &len), LEAF_OK);
    CHECK(len == sizeof(big) && text[len] == '\0' && memcmp(text, big, len) == 0);
    free(text);
    CHECK_EQ_INT(file_read_all("unit", path, sizeof(big) - 1, &text, &len), LEAF_EINVAL);
    unlink(path);
    snprintf(path, sizeof(path), "%s/a/b", dir);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/a", dir);
    rmdir(path);
    rmdir(dir);
}

/* A datagram socket bound to name (a path, or "@..." abstract), as systemd's. */
static int notify_listener(const char *name) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    memcpy(sa.sun_path, name, n);
    if (name[0] == '@') {
        sa.sun_path[0] = '\0';
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    CHECK(fd >= 0);
    CHECK(bind(fd, (struct sockaddr *)&sa,
               (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '/'))) == 0);
    return fd;
}

static void notify_expect(int fd, const char *want) {
    char got[256];
    ssize_t n = recv(fd, got, sizeof(got) - 1, MSG_DONTWAIT);
    CHECK(n == (ssize_t)strlen(want));
    got[n < 0 ? 0 : n] = '\0';
    CHECK_EQ_STR(got, want);
}

/* sd_notify's protocol without libsystemd: a path, an abstract name, and no socket at all. */
static void test_notify(void) {
    char path[64], abstract[64];
    snprintf(path, sizeof(path), "/tmp/leafd-notify-%ld.sock", (long)getpid());
    snprintf(abstract, sizeof(abstract), "@leafd-notify-%ld", (long)getpid());
    unlink(path);
    int fd = notify_listener(path);
    setenv("NOTIFY_SOCKET", path, 1);
    CHECK(notify_enabled());
    CHECK_EQ_INT(notify_send("READY=1\nSTATUS=ready"), LEAF_OK);
    notify_expect(fd, "READY=1\nSTATUS=ready");
    close(fd);
    unlink(path);
    fd = notify_listener(abstract);
    setenv("NOTIFY_SOCKET", abstract, 1);
    CHECK_EQ_INT(notify_send("STOPPING=1"), LEAF_OK);
    notify_expect(fd, "STOPPING=1");
    close(fd);
    setenv("NOTIFY_SOCKET", "relative/path", 1);
    CHECK_EQ_INT(notify_send("READY=1"), LEAF_EINVAL);
    unsetenv("NOTIFY_SOCKET");
    CHECK(!notify_enabled());
    CHECK_EQ_INT(notify_send("READY=1"), LEAF_ENOTFOUND);
}

int main(void) {
    TEST(test_notify);
    TEST(test_log_safe);
    TEST(test_file_atomic);
    TEST(test_sbuf_grows);
    TEST(test_sbuf_printf_exact_fit);
    TEST(test_sbuf_max_is_sticky);
    TEST(test_sbuf_json);
    TEST(test_sbuf_html);
    TEST(test_num_parse);
    TEST(test_num_format);
    TEST(test_clocks);
    TEST(test_siphash);
    return unit_done();
}
