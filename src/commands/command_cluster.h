#ifndef LEAF_COMMAND_CLUSTER_H
#define LEAF_COMMAND_CLUSTER_H

/* CLUSTER SLOTS|SHARDS|NODES|INFO|MYID (command_cluster.c): the sequence primary owns every slot.
 */
#include "resp_conn.h"
#include "status.h"

leaf_status_t command_cluster(struct resp_request *req);

#endif
