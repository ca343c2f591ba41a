#ifndef LEAF_SEQUENCE_SERVICE_FLOOR_H
#define LEAF_SEQUENCE_SERVICE_FLOOR_H

/*
 * The local floors' file of the sequence service: its calls, private to
 * src/node/sequence, made by sequence_service.c and sequence_service_heal.c. Its
 * state (struct seq_floors, embedded in struct sequence_service) is in
 * sequence_service_state.h, the floor.
 * Layer: the node (src/node/sequence), below sequence_service_heal.c and over
 * sequence_service_table.c; the file I/O over the pure format of
 * sequence/sequence_floor.c.
 */
#include "status.h"

struct sequence_service;
struct seq_entry;

/* sequence_service_floor.c (control thread, except mark: lock held) */
leaf_status_t sequence_service_floor_load(struct sequence_service *svc);
void sequence_service_floor_start(struct sequence_service *svc);
void sequence_service_floor_mark(struct sequence_service *svc, struct seq_entry *e);
void sequence_service_floor_stop(struct sequence_service *svc);
void sequence_service_floor_free(struct sequence_service *svc);

#endif
