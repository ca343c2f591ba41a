#ifndef LEAF_TABLE_H
#define LEAF_TABLE_H

/*
 * Building the doors' objects from both protocols' tables, once at start
 * (table.c): the one file that knows both tables.
 */
#include "metrics.h"
#include "status.h"

/*
 * Creates the metrics registry with the names of the HTTP routes, the RESP
 * commands and their outcomes, which it copies: a scrape never asks the
 * tables again.
 */
leaf_status_t table_metrics_create(struct metrics **out);

#endif
