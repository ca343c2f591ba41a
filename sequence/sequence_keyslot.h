#ifndef LEAF_SEQUENCE_KEYSLOT_H
#define LEAF_SEQUENCE_KEYSLOT_H

/*
 * Redis Cluster's key slot: CRC16 (XMODEM) of the key, or of the part inside
 * the first non-empty {...} (a hash tag), modulo 16384. With one sequence
 * primary it owns every slot, and the slot only appears in -MOVED replies and
 * CLUSTER KEYSLOT, where cluster clients expect the key's own; with sharded
 * sequences (docs/cluster.md) a sequence's slot, of its key sequence:<name>
 * (sequence_service_table_slot()), decides which node owns and issues it.
 */
#include <stddef.h>

#define SEQUENCE_KEYSLOTS 16384

unsigned sequence_keyslot(const char *key, size_t len);

/*
 * The slot of the key prefix + key[0..len), where prefix holds no '{' and
 * prefix_crc is sequence_keyslot_crc(0, prefix): a caller that puts one fixed
 * prefix before many keys computes its CRC once ("keyed:<space>:",
 * sequence_keyed.h).
 */
unsigned sequence_keyslot_after(unsigned prefix_crc, const char *key, size_t len);

/* CRC16 XMODEM of p[0..n) going on from crc (0 to start). */
unsigned sequence_keyslot_crc(unsigned crc, const char *p, size_t n);

#endif
