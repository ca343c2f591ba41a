/*
 * libleafd-client accepts exactly the keys a node accepts, for every mode it serves (segment,
 * snowflake, and strictly sequence and keyed): the same keys, valid, invalid and at the edge
 * lengths, are fed to the library (leafd_client_key_get(): 0 or LEAFD_CLIENT_EINVAL) and to the
 * daemon's rule, as a RESP key is read in src/commands/command_ids.c: the mode's prefix of
 * src/ids/ids_mode.h, then the mode's key rule (a tag as validate_tag() of src/base/validate.c;
 * a keyed "<space>:<key>" as ids_mode_key_ok()) on the rest. The answers must be equal. Keys of
 * the modes the library does not serve (opaque, uuid, number) are refused by the library,
 * whatever the daemon says of them. No node is reached: the endpoint refuses every connection.
 */
#include <leafd/client.h>
#include <stdlib.h>

#include "ids_mode.h"
#include "unit.h"
#include "validate.h"

/* The modes the library serves: its keys are "<name>:<tag>" (docs/man/leafd_client.3). */
static const enum ids_mode served[] = {IDS_SEGMENT, IDS_SNOWFLAKE, IDS_SEQUENCE, IDS_KEYED};
#define N_SERVED (sizeof(served) / sizeof(served[0]))

/* The daemon's answer to a key: 1 when it names a mode the library serves and a valid tag. */
static int daemon_accepts(const char *key) {
    size_t n = strlen(key);
    for (size_t m = 0; m < N_SERVED; m++) {
        const struct ids_mode_info *info = ids_mode_info(served[m]);
        if (n >= info->key_prefix_len && memcmp(key, info->key_prefix, info->key_prefix_len) == 0) {
            const char *rest = key + info->key_prefix_len;
            size_t len = n - info->key_prefix_len;
            return info->rule == IDS_KEY_TAG ? validate_tag(rest, len)
                                             : ids_mode_key_ok(served[m], rest, len);
        }
    }
    return 0;
}

static int tried, accepted;

static void same_answer(leafd_client *c, const char *key) {
    leafd_client_key *k = NULL;
    int rc = leafd_client_key_get(c, key, &k);
    int want = daemon_accepts(key);
    tried++;
    accepted += want;
    if ((rc == 0) != want || (rc != 0 && rc != LEAFD_CLIENT_EINVAL)) {
        fprintf(stderr, "key \"%.40s\" (%zu bytes): library %d, daemon %s\n", key, strlen(key), rc,
                want ? "accepts" : "refuses");
    }
    CHECK_EQ_INT(rc, want ? 0 : LEAFD_CLIENT_EINVAL);
    CHECK(rc != 0 || k != NULL);
}

/* prefix + a tag of len bytes of ch. */
static void tag_of(leafd_client *c, const char *prefix, char ch, size_t len) {
    char key[512];
    size_t p = strlen(prefix);
    memcpy(key, prefix, p);
    memset(key + p, ch, len);
    key[p + len] = '\0';
    same_answer(c, key);
}

static void test_same_keys_as_the_daemon(void) {
    char err[256];
    /* keys.max: room for every key accepted below. */
    leafd_client *c =
        leafd_client_open("http://127.0.0.1:1", "log=0;wait.ms=10;keys.max=4096", err, sizeof(err));
    CHECK(c != NULL);
    if (c == NULL) {
        return;
    }
    char key[64];
    for (int m = 0; m < IDS_MODE_COUNT; m++) {
        const char *prefix = ids_mode_info((enum ids_mode)m)->key_prefix;
        /* Edge lengths: none, one, the most, one more, far more. */
        static const size_t lens[] = {
            0, 1, 2, VALIDATE_TAG_MAX - 1, VALIDATE_TAG_MAX, VALIDATE_TAG_MAX + 1, 300};
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            tag_of(c, prefix, 'a', lens[i]);
        }
        /* Every byte but NUL, alone and inside a tag. */
        for (int ch = 1; ch < 256; ch++) {
            snprintf(key, sizeof(key), "%s%c", prefix, ch);
            same_answer(c, key);
            snprintf(key, sizeof(key), "%sab%cc", prefix, ch);
            same_answer(c, key);
        }
        static const char *const tags[] = {".", "..", "...", "a:b", "segment:x", "-", "_", "A.Z"};
        for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
            snprintf(key, sizeof(key), "%s%s", prefix, tags[i]);
            same_answer(c, key);
        }
    }
    /* Keyed keys: a space, a colon, a key of any byte and up to 200 of them. */
    static const char *const keyed[] = {"keyed:s:k",     "keyed:s:",    "keyed::k",
                                        "keyed:s:a/b c", "keyed:s:%2F", "keyed:s.p-a_c:x:y:z",
                                        "keyed:..:k",    "keyed:s",     "keyed:s/x:k"};
    for (size_t i = 0; i < sizeof(keyed) / sizeof(keyed[0]); i++) {
        same_answer(c, keyed[i]);
    }
    tag_of(c, "keyed:space:", 'k', IDS_SPACED_KEY_MAX);
    tag_of(c, "keyed:space:", 'k', IDS_SPACED_KEY_MAX + 1);
    /* No mode, or a mode misspelt. */
    static const char *const odd[] = {"",       "x",          "segment",    "snowflake",
                                      ":a",     "Segment:a",  "SEGMENT:a",  "segments:a",
                                      "snow:a", " segment:a", "segment :a", "segment::"};
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        same_answer(c, odd[i]);
    }
    printf("  %d keys, %d accepted by both\n", tried, accepted);
    CHECK(accepted > 100 && accepted < tried);
    leafd_client_close(c);
}

int main(void) {
    TEST(test_same_keys_as_the_daemon);
    return unit_done();
}
