/*
 * The configuration checks of docs/id-shapes.md (src/node/common/node_config.c):
 * every error names the key and the line that set it, or the file whose
 * default failed: a bad layout (missing, repeated and unknown fields, widths
 * over 63), a bad unit, a time field that does not last 10 years from the
 * epoch, a static worker ID wider than the layout, a bad opaque key.
 */
#include "config.h"
#include "node_config.h"
#include "unit.h"

#define FILE_NAME "leafd.properties"
#define NOW_2026 INT64_C(1795000000000)

static struct leaf_config cfg;
static char err[1024];

/* Parses text (plus a static snowflake node) and runs every check at NOW_2026. */
static leaf_status_t check_text(const char *text) {
    char full[2048];
    /* line 3 is the worker ID, unless the text sets its own (then a comment) */
    snprintf(full, sizeof(full), "leaf.name = t\nleaf.snowflake.enable = true\n%s\n%s",
             strstr(text, "worker.id") ? "# worker ID below" : "leafd.snowflake.worker.id = 1",
             text);
    config_defaults(&cfg);
    err[0] = '\0';
    leaf_status_t rc = config_parse(&cfg, full, strlen(full), FILE_NAME, err, sizeof(err));
    if (rc == LEAF_OK) {
        rc = config_finish(&cfg, err, sizeof(err));
    }
    if (rc != LEAF_OK) {
        return rc;
    }
    return node_config_check(&cfg, NOW_2026, err, sizeof(err));
}

static void fails(const char *text, const char *want) {
    CHECK_EQ_INT(check_text(text), LEAF_EINVAL);
    if (strstr(err, want) == NULL) {
        fprintf(stderr, "config \"%s\": error \"%s\" lacks \"%s\"\n", text, err, want);
        CHECK(0);
    }
}

static void test_defaults_pass(void) {
    struct snowflake_layout l, d;
    CHECK_EQ_INT(check_text(""), LEAF_OK);
    CHECK_EQ_INT(node_config_layout(&cfg, &l), LEAF_OK);
    snowflake_layout_default(&d);
    CHECK(memcmp(&l, &d, sizeof(l)) == 0);
    struct segment_opaque_key k;
    CHECK_EQ_INT(node_config_opaque_key(&cfg, &k), LEAF_ENOTFOUND);
}

static void test_layout_errors_name_the_key(void) {
    fails("leafd.snowflake.layout = time:41,worker:10\n",
          FILE_NAME ":4: leafd.snowflake.layout: field sequence is missing");
    fails("leafd.snowflake.layout = time:41,worker:10,worker:2\n",
          FILE_NAME ":4: leafd.snowflake.layout: field worker listed twice");
    fails("leafd.snowflake.layout = time:41,node:10,sequence:12\n",
          FILE_NAME ":4: leafd.snowflake.layout: unknown field \"node\"");
    fails("leafd.snowflake.layout = time:42,worker:10,sequence:12\n",
          FILE_NAME ":4: leafd.snowflake.layout: widths sum to 64 bits");
    fails("leafd.snowflake.time.unit.ms = 0\n", FILE_NAME ":4: leafd.snowflake.time.unit.ms:");
    /* Baidu's default 28 bits of seconds last 8.5 years: short of the 10 required */
    fails("leafd.snowflake.layout = time:28,worker:22,sequence:13\n"
          "leafd.snowflake.time.unit.ms = 1000\n",
          FILE_NAME ":4: leafd.snowflake.layout: time:28 at 1000 ms per tick runs out");
    /* the same layout is fine while snowflake is off (only its syntax matters) */
    config_defaults(&cfg);
    const char *off = "leafd.snowflake.layout = time:28,worker:22,sequence:13\n";
    CHECK_EQ_INT(config_parse(&cfg, off, strlen(off), FILE_NAME, err, sizeof(err)), LEAF_OK);
    CHECK_EQ_INT(node_config_check(&cfg, NOW_2026, err, sizeof(err)), LEAF_OK);
}

static void test_layouts_that_pass(void) {
    struct snowflake_layout l;
    CHECK_EQ_INT(check_text("leafd.snowflake.layout = time:39,sequence:8,worker:16\n"
                            "leafd.snowflake.time.unit.ms = 10\n"
                            "leafd.snowflake.epoch = 1409529600000\n"),
                 LEAF_OK);
    CHECK_EQ_INT(node_config_layout(&cfg, &l), LEAF_OK);
    CHECK_EQ_INT(l.unit_ms, 10);
    CHECK_EQ_INT(l.shift[SNOWFLAKE_SEQUENCE], 16);
    CHECK_EQ_INT(check_text("leafd.snowflake.layout = time:31,worker:23,sequence:9\n"
                            "leafd.snowflake.time.unit.ms = 1000\n"
                            "leafd.snowflake.epoch = 1463673600000\n"),
                 LEAF_OK);
    CHECK_EQ_INT(check_text("leafd.snowflake.layout = time:41,worker:4,sequence:8\n"), LEAF_OK);
}

static void test_worker_fits_layout(void) {
    fails("leafd.snowflake.layout = time:41,worker:4,sequence:8\n"
          "leafd.snowflake.worker.id = 16\n",
          FILE_NAME
          ":5: leafd.snowflake.worker.id: 16 does not fit the layout's worker field (worker:4 "
          "holds 0..15)");
    CHECK_EQ_INT(check_text("leafd.snowflake.layout = time:39,sequence:8,worker:16\n"
                            "leafd.snowflake.time.unit.ms = 10\n"
                            "leafd.snowflake.worker.id = 65535\n"),
                 LEAF_OK);
    CHECK_EQ_INT(check_text("leafd.snowflake.layout = time:39,sequence:8,worker:16\n"
                            "leafd.snowflake.time.unit.ms = 10\n"),
                 LEAF_OK);
}

static void test_opaque_key(void) {
    struct segment_opaque_key k;
    fails("leafd.opaque.key = 00112233\n",
          FILE_NAME ":4: leafd.opaque.key: must be 32 hex digits (128 bits), not 8 characters");
    fails("leafd.opaque.key = 00112233445566778899aabbccddeefg\n",
          FILE_NAME ":4: leafd.opaque.key: character 32 is not a hex digit");
    CHECK(strstr(err, "eefg") == NULL); /* the secret is never echoed */
    CHECK_EQ_INT(check_text("leafd.opaque.key = 00112233445566778899AABBCCDDEEFF\n"), LEAF_OK);
    CHECK_EQ_INT(node_config_opaque_key(&cfg, &k), LEAF_OK);
    CHECK_EQ_INT(k.bytes[0], 0x00);
    CHECK_EQ_INT(k.bytes[15], 0xFF);
    char dump[8192];
    config_dump(&cfg, dump, sizeof(dump));
    CHECK(strstr(dump, "leafd.opaque.key = ***") != NULL);
    CHECK(strstr(dump, "AABBCC") == NULL);
}

/* Regions (docs/regions.md): the datacenter field holds the region ID; the keys' own checks. */
#define REGION2                                                                                    \
    "leafd.region = eu\nleafd.region.count = 2\nleafd.region.registry.zk.address = "               \
    "127.0.0.1:2181\n"
static void test_regions(void) {
    struct snowflake_layout l;
    fails(REGION2, "leafd.region.count: 2 regions need a snowflake layout with a datacenter field");
    fails(REGION2 "leafd.snowflake.layout = time:41,datacenter:1,worker:9,sequence:12\n"
                  "leafd.region.id = 2\n",
          "leafd.region.id: 2 is not below leafd.region.count (2)");
    fails("leafd.region = eu\nleafd.region.count = 3\n"
          "leafd.region.registry.zk.address = 127.0.0.1:2181\n"
          "leafd.snowflake.layout = time:41,datacenter:1,worker:9,sequence:12\n",
          "3 regions do not fit the layout's datacenter field (datacenter:1 holds 0..1)");
    fails(REGION2 "leafd.snowflake.layout = twitter\nleafd.region.id = 1\n"
                  "leafd.snowflake.datacenter.id = 3\n",
          "leafd.snowflake.datacenter.id: 3 is not leafd.region.id (1)");
    fails("leafd.region.count = 2\nleafd.region.registry.zk.address = 127.0.0.1:2181\n",
          FILE_NAME ": leafd.region: required when leafd.region.count > 1");
    fails("leafd.region = eu\nleafd.region.count = 2\n",
          "leafd.region.registry.zk.address: required when leafd.region.count > 1");
    fails("leafd.region.registry.zk.address = 127.0.0.1:2181\n",
          FILE_NAME ":4: leafd.region.registry.zk.address: only used when leafd.region.count > 1");
    CHECK_EQ_INT(check_text(REGION2 "leafd.snowflake.layout = twitter\nleafd.region.id = 1\n"),
                 LEAF_OK);
    CHECK_EQ_INT(node_config_layout(&cfg, &l), LEAF_OK);
    CHECK_EQ_INT(l.datacenter_id, 1);
    /* A segment-only region keeps any layout. */
    const char *seg = "leaf.name = t\nleaf.segment.enable = true\nleaf.jdbc.url = "
                      "jdbc:mysql://127.0.0.1:3306/leaf\nleaf.jdbc.username = leaf\n" REGION2;
    config_defaults(&cfg);
    CHECK_EQ_INT(config_parse(&cfg, seg, strlen(seg), FILE_NAME, err, sizeof(err)), LEAF_OK);
    CHECK_EQ_INT(config_finish(&cfg, err, sizeof(err)), LEAF_OK);
    CHECK_EQ_INT(node_config_check(&cfg, NOW_2026, err, sizeof(err)), LEAF_OK);
    /* Sequences are served, each in its home region (docs/regions.md, "Homes"). */
    CHECK_EQ_INT(check_text(REGION2 "leafd.snowflake.layout = twitter\nleafd.sequence.enable = "
                                    "true\nleaf.snowflake.zk.address = 127.0.0.1:2181\n"
                                    "# worker.id from ZooKeeper\n"),
                 LEAF_OK);
    /* One region: the datacenter ID is the key's, as before. */
    CHECK_EQ_INT(
        check_text("leafd.snowflake.layout = twitter\nleafd.snowflake.datacenter.id = 7\n"),
        LEAF_OK);
    CHECK_EQ_INT(node_config_layout(&cfg, &l), LEAF_OK);
    CHECK_EQ_INT(l.datacenter_id, 7);
}

int main(void) {
    TEST(test_defaults_pass);
    TEST(test_layout_errors_name_the_key);
    TEST(test_layouts_that_pass);
    TEST(test_worker_fits_layout);
    TEST(test_opaque_key);
    TEST(test_regions);
    return unit_done();
}
