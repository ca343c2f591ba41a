#ifndef LEAF_FILE_H
#define LEAF_FILE_H

/*
 * Small files that must survive a crash whole: the worker-ID cache and the
 * local copy of the users. Plain POSIX I/O; any thread may call these, one
 * writer per file at a time. Errors are logged under the caller's component,
 * naming the operation and the file.
 */
#include <stddef.h>
#include <sys/types.h>

#include "status.h"

/*
 * Replaces path with data atomically: a temporary file created with `mode`
 * (and set to it whatever the umask), written, fsynced and renamed over
 * path, then the directory fsynced. A crash leaves the old or the new file,
 * never a torn one. The directories are created (0755) as needed.
 */
leaf_status_t file_write_atomic(const char *component, const char *path, const char *data,
                                size_t len, mode_t mode);

/* The same without logging: on failure err says what failed (the operation and the file), for
 * a caller that logs at its own rate. */
leaf_status_t file_write_atomic_err(const char *path, const char *data, size_t len, mode_t mode,
                                    char *err, size_t errlen);

/*
 * Reads the whole file (at most max bytes) into a malloc'd, NUL-terminated
 * buffer. LEAF_OK, LEAF_ENOTFOUND when it does not exist, LEAF_EINVAL when
 * it is larger than max, LEAF_ERR on a read error (logged), LEAF_ENOMEM.
 */
leaf_status_t file_read_all(const char *component, const char *path, size_t max, char **out,
                            size_t *len);

#endif
