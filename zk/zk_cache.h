#ifndef LEAF_ZK_CACHE_H
#define LEAF_ZK_CACHE_H

/*
 * The local worker-ID cache file ({data.dir}/{leaf.name}/{port}/workerID.properties), read at start
 * and written atomically at every report: temp file, fsync, rename, fsync of the directory, so a
 * crash leaves either the old or the new file, never a torn one. Plain POSIX I/O, no ZooKeeper or
 * libuv header; any thread may call these (the daemon writes from the libuv threadpool, one write
 * at a time).
 */
#include <stddef.h>

#include "status.h"
#include "zk_record.h"

/* Builds {data_dir}/{name}/{who}/workerID.properties, who being the identity's port, or
 * "name-{identity}" for a named one (never a port's digits); LEAF_EINVAL if too long. */
leaf_status_t zk_cache_path(char *buf, size_t cap, const char *data_dir, const char *name,
                            const char *who);

/* LEAF_ENOTFOUND when the file does not exist; LEAF_EINVAL when it is malformed
 * (logged naming the file); LEAF_ERR on a read error (logged). */
leaf_status_t zk_cache_load(const char *path, struct zk_cache_data *c);

/* The same with the owner fields (zk_record.h); an old file loads with them unknown. */
leaf_status_t zk_cache_load_owned(const char *path, struct zk_cache_data *c,
                                  struct zk_cache_owner *o);
/* Creates the directories as needed and replaces the file atomically. On
 * failure, err says what failed, naming the operation and the file; the
 * caller logs it (the periodic caller at a limited rate). */
leaf_status_t zk_cache_store_owned(const char *path, const struct zk_cache_data *c,
                                   const struct zk_cache_owner *o, char *err, size_t err_len);

#endif
