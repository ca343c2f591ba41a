#ifndef LEAF_NUM_H
#define LEAF_NUM_H

/*
 * The one integer parser (libc only, pure). Inputs are spans, not
 * NUL-terminated, as parsers and protocol code hand them over.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/*
 * [-]digits into *out. Every byte is checked before any arithmetic, so "1x"
 * is always "not a number" (LEAF_EINVAL) rather than sometimes "too big";
 * the magnitude saturates instead of overflowing (LEAF_ERANGE when it does
 * not fit in int64_t). No spaces, no '+', no base prefixes.
 */
leaf_status_t num_parse_i64(const char *s, size_t n, int64_t *out);

/* The same, then LEAF_ERANGE unless min <= value <= max. */
leaf_status_t num_parse_range(const char *s, size_t n, int64_t min, int64_t max, int64_t *out);

/* Writes v in decimal at dst (room: 20 bytes, no NUL); returns the length. */
size_t num_format_i64(char *dst, int64_t v);

#endif
