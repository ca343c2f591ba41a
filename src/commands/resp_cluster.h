#ifndef LEAF_RESP_CLUSTER_H
#define LEAF_RESP_CLUSTER_H

/* CLUSTER SLOTS|SHARDS|NODES|INFO|MYID (resp_cluster.c): the sequence primary owns every slot. */
#include "resp_conn.h"
#include "status.h"

leaf_status_t resp_cmd_cluster(struct resp_request *req);

#endif
