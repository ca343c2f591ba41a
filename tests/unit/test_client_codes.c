/*
 * libleafd-client's error codes are one table, LEAFD_CLIENT_ERRNO_MAP of <leafd/client.h>: the
 * enum and leafd_client_strerror() are made from it. Two lists are written beside it for their
 * readers, the Python binding's constants (src/client/python/leafd/__init__.py) and the manual
 * page's (docs/man/leafd_client.3); this test fails when a code is in one place only, or has
 * another number there. The numbers are the ABI: the six first codes keep theirs for ever.
 */
#include <leafd/client.h>
#include <regex.h>
#include <stdlib.h>

#include "unit.h"

/* The whole of a file of the source tree, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *rel) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", LEAF_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot read\n", path);
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        char *grown = realloc(text, len + n + 1);
        if (grown == NULL) {
            break;
        }
        text = grown;
        memcpy(text + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (text != NULL) {
        text[len] = '\0';
    }
    return text;
}

/* How many times pattern (POSIX extended, per line) matches in text. */
static int count_matches(const char *text, const char *pattern) {
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE) != 0) {
        return -1;
    }
    int n = 0;
    regmatch_t m;
    for (const char *p = text; regexec(&re, p, 1, &m, 0) == 0 && m.rm_eo > 0; p += m.rm_eo) {
        n++;
    }
    regfree(&re);
    return n;
}

struct code_row {
    const char *name;
    int value;
    const char *text;
};

static const struct code_row rows[] = {
#define ROW(name, value, text) {#name, value, text},
    LEAFD_CLIENT_ERRNO_MAP(ROW)
#undef ROW
};
#define N_ROWS ((int)(sizeof(rows) / sizeof(rows[0])))

static void test_abi_values_and_texts(void) {
    CHECK_EQ_INT(LEAFD_CLIENT_EINVAL, -1);
    CHECK_EQ_INT(LEAFD_CLIENT_EUNAVAILABLE, -2);
    CHECK_EQ_INT(LEAFD_CLIENT_EAUTH, -3);
    CHECK_EQ_INT(LEAFD_CLIENT_ENOTFOUND, -4);
    CHECK_EQ_INT(LEAFD_CLIENT_ENOMEM, -5);
    CHECK_EQ_INT(LEAFD_CLIENT_EREFUSED, -6);
    /* A new code takes the next number down: the rows run -1, -2, ... with no gap. */
    for (int i = 0; i < N_ROWS; i++) {
        CHECK_EQ_INT(rows[i].value, -(i + 1));
        CHECK_EQ_STR(leafd_client_strerror(rows[i].value), rows[i].text);
    }
    CHECK_EQ_STR(leafd_client_strerror(0), "ok");
    CHECK_EQ_STR(leafd_client_strerror(1), "unknown error");
    CHECK_EQ_STR(leafd_client_strerror(-(N_ROWS + 1)), "unknown error");
}

static void test_python_binding_lists_the_table(void) {
    char *py = slurp("src/client/python/leafd/__init__.py");
    CHECK(py != NULL);
    if (py == NULL) {
        return;
    }
    char want[128];
    for (int i = 0; i < N_ROWS; i++) {
        snprintf(want, sizeof(want), "\n%s = %d\n", rows[i].name, rows[i].value);
        if (strstr(py, want) == NULL) {
            fprintf(stderr, "python binding: no line \"%s = %d\"\n", rows[i].name, rows[i].value);
            CHECK(strstr(py, want) != NULL);
        }
        snprintf(want, sizeof(want), "\"%s\"", rows[i].name);
        CHECK(strstr(py, want) != NULL);
    }
    /* No code the table lacks: as many E* constants as rows. */
    CHECK_EQ_INT(count_matches(py, "^E[A-Z]+ = -?[0-9]+$"), N_ROWS);
    free(py);
}

static void test_man_page_lists_the_table(void) {
    char *man = slurp("docs/man/leafd_client.3");
    CHECK(man != NULL);
    if (man == NULL) {
        return;
    }
    char want[128];
    for (int i = 0; i < N_ROWS; i++) {
        snprintf(want, sizeof(want), ".BR LEAFD_CLIENT_%s \" (\\-%d)\"\n", rows[i].name,
                 -rows[i].value);
        if (strstr(man, want) == NULL) {
            fprintf(stderr, "manual page: no line %s", want);
            CHECK(strstr(man, want) != NULL);
        }
    }
    CHECK_EQ_INT(count_matches(man, "^\\.BR LEAFD_CLIENT_E[A-Z]+ \" \\(\\\\-[0-9]+\\)\"$"), N_ROWS);
    free(man);
}

int main(void) {
    TEST(test_abi_values_and_texts);
    TEST(test_python_binding_lists_the_table);
    TEST(test_man_page_lists_the_table);
    return unit_done();
}
