#include "zk_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "log.h"

leaf_status_t zk_cache_path(char *buf, size_t cap, const char *data_dir, const char *name,
                            const char *who) {
    int n = snprintf(buf, cap, "%s/%s/%s/workerID.properties", data_dir, name, who);
    return n > 0 && (size_t)n < cap ? LEAF_OK : LEAF_EINVAL;
}

leaf_status_t zk_cache_load(const char *path, struct zk_cache_data *c) {
    return zk_cache_load_owned(path, c, NULL);
}

leaf_status_t zk_cache_load_owned(const char *path, struct zk_cache_data *c,
                                  struct zk_cache_owner *o) {
    char text[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return LEAF_ENOTFOUND;
        }
        log_error("zk", "open(%s) failed: %s", path, strerror(errno));
        return LEAF_ERR;
    }
    ssize_t n = read(fd, text, sizeof(text) - 1);
    int err = errno;
    close(fd);
    if (n < 0) {
        log_error("zk", "read(%s) failed: %s", path, strerror(err));
        return LEAF_ERR;
    }
    if (zk_record_parse_cache_owned(text, (size_t)n, c, o) != LEAF_OK) {
        log_error("zk", "worker-ID cache %s is malformed (want workerID=<n> and timestamp=<ms>)",
                  path);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

leaf_status_t zk_cache_store_owned(const char *path, const struct zk_cache_data *c,
                                   const struct zk_cache_owner *o, char *err, size_t err_len) {
    char text[ZK_CACHE_TEXT_MAX];
    size_t len = zk_record_format_cache_owned(c, o, text, sizeof(text));
    if (len == 0) {
        snprintf(err, err_len, "cannot format %s", path);
        return LEAF_ERR;
    }
    return file_write_atomic_err(path, text, len, 0644, err, err_len);
}
