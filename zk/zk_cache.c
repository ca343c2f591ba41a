#include "zk_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

leaf_status_t zk_cache_path(char *buf, size_t cap, const char *data_dir, const char *name,
                            int port) {
    int n = snprintf(buf, cap, "%s/%s/%d/workerID.properties", data_dir, name, port);
    return n > 0 && (size_t)n < cap ? LEAF_OK : LEAF_EINVAL;
}

leaf_status_t zk_cache_load(const char *path, struct zk_cache_data *c) {
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
    if (zk_record_parse_cache(text, (size_t)n, c) != LEAF_OK) {
        log_error("zk", "worker-ID cache %s is malformed (want workerID=<n> and timestamp=<ms>)",
                  path);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* mkdir -p of the directory part of path. */
static leaf_status_t make_parents(const char *path, char *err, size_t err_len) {
    char dir[1024];
    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
        snprintf(err, err_len, "path %s too long", path);
        return LEAF_EINVAL;
    }
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') {
            continue;
        }
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(err, err_len, "mkdir(%s) failed: %s", dir, strerror(errno));
            return LEAF_ERR;
        }
        *p = '/';
    }
    return LEAF_OK;
}

static leaf_status_t fsync_dir(const char *path, char *err, size_t err_len) {
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        snprintf(dir, sizeof(dir), ".");
    } else {
        *(slash == dir ? slash + 1 : slash) = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        snprintf(err, err_len, "fsync(directory %s) failed: %s", dir, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return LEAF_ERR;
    }
    close(fd);
    return LEAF_OK;
}

static leaf_status_t write_all(int fd, const char *tmp, const char *buf, size_t len, char *err,
                               size_t err_len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            snprintf(err, err_len, "write(%s) failed: %s", tmp, strerror(errno));
            return LEAF_ERR;
        }
        buf += n;
        len -= (size_t)n;
    }
    if (fsync(fd) != 0) {
        snprintf(err, err_len, "fsync(%s) failed: %s", tmp, strerror(errno));
        return LEAF_ERR;
    }
    return LEAF_OK;
}

leaf_status_t zk_cache_store(const char *path, const struct zk_cache_data *c, char *err,
                             size_t err_len) {
    char text[512], tmp[1100];
    size_t len = zk_record_format_cache(c, text, sizeof(text));
    if (len == 0 || snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
        snprintf(err, err_len, "cannot format %s", path);
        return LEAF_ERR;
    }
    if (make_parents(path, err, err_len) != LEAF_OK) {
        return LEAF_ERR;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, err_len, "open(%s) failed: %s", tmp, strerror(errno));
        return LEAF_ERR;
    }
    leaf_status_t rc = write_all(fd, tmp, text, len, err, err_len);
    if (close(fd) != 0 && rc == LEAF_OK) {
        snprintf(err, err_len, "close(%s) failed: %s", tmp, strerror(errno));
        rc = LEAF_ERR;
    }
    if (rc == LEAF_OK && rename(tmp, path) != 0) {
        snprintf(err, err_len, "rename(%s, %s) failed: %s", tmp, path, strerror(errno));
        rc = LEAF_ERR;
    }
    return rc == LEAF_OK ? fsync_dir(path, err, err_len) : rc;
}
