#ifndef LEAF_CONFIG_SECRET_H
#define LEAF_CONFIG_SECRET_H

/*
 * Secrets kept in files (leafd.admin.token.file, leaf.jdbc.password.file,
 * leafd.opaque.key.file, leafd.zk.auth.file): the value is the file's first
 * line, so a secret never has to sit in the properties file or the
 * environment. libc only; unit-tested in tests/unit/test_config.c.
 */
#include <stddef.h>

#include "status.h"

struct stat;

/*
 * 1 when a file holding a secret is open to more than leafd: others may read
 * it, or a group other than leafd's own (its effective group). 0640 with
 * leafd's group, as the Debian package installs the configuration, is not.
 */
int config_secret_loose(const struct stat *st);

/*
 * Reads the first line of path (without its \n or \r\n) into out (cap
 * bytes with the NUL). *loose is config_secret_loose() of the file (the caller
 * warns). Errors (unreadable, empty first line,
 * longer than cap - 1) write a reason into why that never quotes the file's
 * content, and return LEAF_EINVAL (LEAF_ERR when the file cannot be opened).
 */
leaf_status_t config_secret_read(const char *path, char *out, size_t cap, int *loose, char *why,
                                 size_t whylen);

#endif
