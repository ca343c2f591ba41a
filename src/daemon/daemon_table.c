/* The walk over the daemon's table of objects (see daemon_table.h). */
#include "daemon_table.h"

#include "log.h"

leaf_status_t daemon_table_create(const struct daemon_row *rows, size_t n, struct daemon *d,
                                  void (*failed)(struct daemon *d)) {
    for (size_t k = 0; k < n; k++) {
        if (rows[k].create == NULL) {
            continue;
        }
        leaf_status_t st = rows[k].create(d);
        if (st != LEAF_OK) {
            if (failed != NULL) {
                failed(d);
            }
            daemon_table_free(rows, k, d);
            return st;
        }
    }
    return LEAF_OK;
}

leaf_status_t daemon_table_start(const struct daemon_row *rows, size_t n, struct daemon *d) {
    for (size_t k = 0; k < n; k++) {
        if (rows[k].start == NULL) {
            continue;
        }
        log_debug("main", "starting the %s service", rows[k].name);
        leaf_status_t st = rows[k].start(d);
        if (st != LEAF_OK) {
            daemon_table_stop(rows, k + 1, d);
            return st;
        }
    }
    return LEAF_OK;
}

void daemon_table_stop(const struct daemon_row *rows, size_t n, struct daemon *d) {
    while (n-- > 0) {
        if (rows[n].stop != NULL) {
            log_debug("main", "stopping the %s service", rows[n].name);
            rows[n].stop(d);
        }
    }
}

void daemon_table_free(const struct daemon_row *rows, size_t n, struct daemon *d) {
    while (n-- > 0) {
        if (rows[n].free != NULL) {
            rows[n].free(d);
        }
    }
}
