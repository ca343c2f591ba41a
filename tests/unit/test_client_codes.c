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

/* A list of the codes written beside the table: the line each row must have there, and a pattern
 * (per line) that any code's line matches, so that a code the table lacks is counted too. */
struct code_list {
    const char *file;
    int man; /* 1: the manual page's ".BR LEAFD_CLIENT_EINVAL " (\-1)"", 0: Python's "EINVAL = -1"
              */
    const char *any_code;
};

static void check_list(const struct code_list *l) {
    char *text = slurp(l->file);
    CHECK(text != NULL);
    if (text == NULL) {
        return;
    }
    char want[128];
    for (int i = 0; i < N_ROWS; i++) {
        if (l->man) {
            snprintf(want, sizeof(want), ".BR LEAFD_CLIENT_%s \" (\\-%d)\"\n", rows[i].name,
                     -rows[i].value);
        } else {
            snprintf(want, sizeof(want), "\n%s = %d\n", rows[i].name, rows[i].value);
        }
        if (strstr(text, want) == NULL) {
            const char *line = want + (l->man ? 0 : 1); /* without its newlines */
            fprintf(stderr, "%s: no line \"%.*s\"\n", l->file, (int)strlen(line) - 1, line);
            CHECK(strstr(text, want) != NULL);
        }
    }
    CHECK_EQ_INT(count_matches(text, l->any_code), N_ROWS);
    free(text);
}

static void test_python_binding_lists_the_table(void) {
    static const struct code_list py = {"src/client/python/leafd/__init__.py", 0,
                                        "^E[A-Z]+ = -?[0-9]+$"};
    check_list(&py);
    /* Each code is exported by the module too (its __all__). */
    char *text = slurp(py.file);
    char want[64];
    for (int i = 0; text != NULL && i < N_ROWS; i++) {
        snprintf(want, sizeof(want), "\"%s\"", rows[i].name);
        CHECK(strstr(text, want) != NULL);
    }
    free(text);
}

static void test_man_page_lists_the_table(void) {
    static const struct code_list man = {"docs/man/leafd_client.3", 1,
                                         "^\\.BR LEAFD_CLIENT_E[A-Z]+ \" \\(\\\\-[0-9]+\\)\"$"};
    check_list(&man);
}

int main(void) {
    TEST(test_abi_values_and_texts);
    TEST(test_python_binding_lists_the_table);
    TEST(test_man_page_lists_the_table);
    return unit_done();
}
