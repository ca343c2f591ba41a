#include "segment_db_health.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "log.h"
#include "status.h"

/* The first row of a one-row query as (int, int); LEAF_ERR when it failed. */
static leaf_status_t health_query_ints(MYSQL *m, const char *sql, int *a, int *b) {
    if (mysql_query(m, sql) != 0) {
        return LEAF_ERR;
    }
    MYSQL_RES *res = mysql_store_result(m);
    MYSQL_ROW row = res != NULL ? mysql_fetch_row(res) : NULL;
    if (row == NULL || mysql_num_fields(res) < 2) {
        mysql_free_result(res);
        return LEAF_ERR;
    }
    *a = row[0] != NULL ? atoi(row[0]) : 0;
    *b = row[1] != NULL ? atoi(row[1]) : 0;
    mysql_free_result(res);
    return LEAF_OK;
}

/* Galera's view of itself: wsrep_ready, wsrep_cluster_status, wsrep_local_state_comment. */
static leaf_status_t health_query_wsrep(MYSQL *m, char (*v)[32]) {
    static const char *const names[3] = {"wsrep_ready", "wsrep_cluster_status",
                                         "wsrep_local_state_comment"};
    if (mysql_query(m, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', "
                       "'wsrep_cluster_status', 'wsrep_local_state_comment')") != 0) {
        return LEAF_ERR;
    }
    MYSQL_RES *res = mysql_store_result(m);
    MYSQL_ROW row;
    while (res != NULL && (row = mysql_fetch_row(res)) != NULL) {
        for (int i = 0; i < 3; i++) {
            if (row[0] != NULL && row[1] != NULL && strcasecmp(row[0], names[i]) == 0) {
                snprintf(v[i], sizeof(v[i]), "%s", row[1]);
            }
        }
    }
    mysql_free_result(res);
    return LEAF_OK;
}

enum segment_host_state segment_db_health(MYSQL *m, const char *host, int port) {
    int ro = 0, wsrep = 0;
    char v[3][32] = {"", "", ""};
    if (health_query_ints(m, "SELECT @@global.read_only, @@global.wsrep_on", &ro, &wsrep) !=
            LEAF_OK &&
        (mysql_errno(m) != ER_UNKNOWN_SYSTEM_VARIABLE ||
         health_query_ints(m, "SELECT @@global.read_only, 0", &ro, &wsrep) != LEAF_OK)) {
        log_warn("segment", "health check on %s:%d failed: %s", host, port, mysql_error(m));
        return SEGMENT_HOST_DOWN;
    }
    if (wsrep && health_query_wsrep(m, v) != LEAF_OK) {
        log_warn("segment", "wsrep status on %s:%d failed: %s", host, port, mysql_error(m));
        return SEGMENT_HOST_DOWN;
    }
    enum segment_host_state s = segment_hosts_judge(ro, wsrep, v[0][0] ? v[0] : NULL,
                                                    v[1][0] ? v[1] : NULL, v[2][0] ? v[2] : NULL);
    if (s != SEGMENT_HOST_UP) {
        log_warn("segment",
                 "database %s:%d does not take writes (%s: read_only=%d wsrep_ready=%s "
                 "cluster_status=%s local_state=%s); trying the next host",
                 host, port, segment_host_state_name(s), ro, v[0], v[1], v[2]);
    }
    return s;
}
