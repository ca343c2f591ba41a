#ifndef LEAF_RESP_SLOT_H
#define LEAF_RESP_SLOT_H

/*
 * Redis Cluster's key slot: CRC16 (XMODEM) of the key, or of the part inside
 * the first non-empty {...} (a hash tag), modulo 16384. leafd's sequence
 * primary owns every slot; the slot only appears in -MOVED replies, where
 * cluster clients expect the key's own.
 */
#include <stddef.h>

#define RESP_SLOTS 16384

unsigned resp_key_slot(const char *key, size_t len);

#endif
