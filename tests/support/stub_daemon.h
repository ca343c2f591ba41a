#ifndef LEAF_STUB_DAEMON_H
#define LEAF_STUB_DAEMON_H

#include <stdint.h>
#include <stdio.h>

struct http_loop;

/* Fills the `leafd` global with a static-worker snowflake node; returns the fake loop. */
struct http_loop *stub_daemon_init(void);

/* Moves the fake loop's monotonic clock forward. */
void stub_daemon_advance(int64_t ms);

#endif
