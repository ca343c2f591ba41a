#ifndef LEAF_VALIDATE_H
#define LEAF_VALIDATE_H

/*
 * Validation of request input shared by the HTTP handlers: business tags
 * ({key}, biz_tag) and the ?count= parameter. Pure code, unit-tested in
 * tests/unit/test_validate.c. Inputs are spans (not NUL-terminated), as the
 * HTTP parser hands them over.
 */
#include <stddef.h>

#include "status.h"

#define VALIDATE_TAG_MAX 128 /* leaf_alloc.biz_tag is varchar(128) */
#define VALIDATE_COUNT_MAX 10000

/* 1 when s is 1..128 bytes of [A-Za-z0-9._:-], else 0. */
int validate_tag(const char *s, size_t len);

/*
 * Parses a count: decimal digits only (no sign, no spaces), at most 10 of
 * them (leading zeros allowed), value 1..10000. LEAF_OK and *out set, or
 * LEAF_EINVAL and *out untouched.
 */
leaf_status_t validate_count(const char *s, size_t len, int *out);

#endif
