#ifndef LEAF_API_SETUP_H
#define LEAF_API_SETUP_H

/*
 * Building the API's objects from its tables, once at start (api_setup.c):
 * the top (src/app), the one file that knows both protocols' tables.
 */
#include "metrics.h"
#include "status.h"

/*
 * Creates the metrics registry with the names of the HTTP routes, the RESP
 * commands and their outcomes, which it copies: a scrape never asks the
 * tables again.
 */
leaf_status_t api_setup_metrics(struct metrics **out);

#endif
