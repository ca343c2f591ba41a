#ifndef LEAF_SEQUENCE_FLOOR_H
#define LEAF_SEQUENCE_FLOOR_H

/*
 * The local floors of sequences, the file format and its upkeep policy, pure
 * code (libc and src/base only). docs/IDENTITY.md: every sequence node
 * keeps in its data dir the highest max it has seen per sequence, so that a
 * ZooKeeper restored from an older copy, or a record deleted and created
 * again, never makes it issue an ID twice: a primary starts above the larger
 * of ZooKeeper's max and its own floor (sequence_state.h).
 *
 * The file, {leafd.data.dir}/sequence-floors, is a log of text lines:
 *     # leafd sequence floors 1 cluster=<leaf.name>
 *     <name> <floor>
 *     <name> <floor>
 * The first line names the cluster (a file of another cluster is not used).
 * Every later line sets one sequence's floor; the last line of a name wins
 * (a graceful stop's giveback may lower a floor to the last ID issued).
 * Changed floors are appended in batches (one write and one fdatasync per
 * flush, off the request path); when the log holds more than twice the live
 * names plus SEQUENCE_FLOOR_SLACK lines it is compacted: rewritten whole,
 * one line per name, atomically. A flush costs O(changed sequences); a
 * compaction O(all sequences) but happens once per ~live+slack changes, so
 * the cost per change stays O(1) amortized, at 100,000 sequences as at 1.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define SEQUENCE_FLOOR_FILE "sequence-floors"
#define SEQUENCE_FLOOR_SLACK 4096   /* lines beyond 2 x live before compacting */
#define SEQUENCE_FLOOR_LINE_MAX 200 /* bytes of one line, newline included */

/* Writes the header line (with its newline); returns its length, 0 when cap is short. */
size_t sequence_floor_header(char *buf, size_t cap, const char *cluster);

/* 1 when line[0..len) (no newline) is the header of this cluster's file. */
int sequence_floor_header_ok(const char *line, size_t len, const char *cluster);

/* Writes "<name> <floor>\n"; returns its length, 0 when the name is invalid or cap is short. */
size_t sequence_floor_format(char *buf, size_t cap, const char *name, size_t nlen, int64_t floor);

/*
 * Parses one line (no newline): name[0..*nlen) (a valid tag, NUL-terminated;
 * name holds VALIDATE_TAG_MAX + 1 bytes) and a floor >= 0. LEAF_EINVAL
 * otherwise (a torn last line after a crash is skipped this way).
 */
leaf_status_t sequence_floor_parse(const char *line, size_t len, char *name, size_t *nlen,
                                   int64_t *floor);

/* 1 when a log of `lines` lines for `live` names should be compacted. */
int sequence_floor_should_compact(uint64_t lines, size_t live);

#endif
