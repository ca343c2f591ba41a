#ifndef LEAF_UNIT_H
#define LEAF_UNIT_H

/*
 * The whole unit-test framework: CHECK() records a failure and goes on,
 * TEST() runs a function, and unit_done() prints "N passed, N failed" and
 * returns the exit code. Each tests/unit/test_*.c is one executable and one
 * ctest test.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int unit_checks_failed;
static int unit_tests_passed;
static int unit_tests_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);               \
            unit_checks_failed++;                                                                  \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long unit_a_ = (long long)(a), unit_b_ = (long long)(b);                              \
        if (unit_a_ != unit_b_) {                                                                  \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,  \
                    unit_a_, unit_b_);                                                             \
            unit_checks_failed++;                                                                  \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *unit_a_ = (a), *unit_b_ = (b);                                                 \
        if (unit_a_ == NULL || unit_b_ == NULL || strcmp(unit_a_, unit_b_)) {                      \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a,  \
                    #b, unit_a_ ? unit_a_ : "(null)", unit_b_ ? unit_b_ : "(null)");               \
            unit_checks_failed++;                                                                  \
        }                                                                                          \
    } while (0)

#define TEST(fn)                                                                                   \
    do {                                                                                           \
        int unit_before_ = unit_checks_failed;                                                     \
        fn();                                                                                      \
        if (unit_checks_failed == unit_before_) {                                                  \
            unit_tests_passed++;                                                                   \
        } else {                                                                                   \
            unit_tests_failed++;                                                                   \
            fprintf(stderr, "FAIL %s\n", #fn);                                                     \
        }                                                                                          \
    } while (0)

static inline int unit_done(void) {
    printf("%d passed, %d failed\n", unit_tests_passed, unit_tests_failed);
    return unit_tests_failed ? 1 : 0;
}

#endif
