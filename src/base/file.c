#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define FILE_PATH_MAX 1024

/* mkdir -p of the directory part of path. */
static leaf_status_t make_parents(const char *path, char *err, size_t errlen) {
    char dir[FILE_PATH_MAX];
    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
        snprintf(err, errlen, "path too long: %.64s...", path);
        return LEAF_EINVAL;
    }
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') {
            continue;
        }
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "mkdir(%s) failed: %s", dir, strerror(errno));
            return LEAF_ERR;
        }
        *p = '/';
    }
    return LEAF_OK;
}

static leaf_status_t fsync_dir(const char *path, char *err, size_t errlen) {
    char dir[FILE_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        snprintf(dir, sizeof(dir), ".");
    } else {
        *(slash == dir ? slash + 1 : slash) = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "fsync(directory %s) failed: %s", dir, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return LEAF_ERR;
    }
    close(fd);
    return LEAF_OK;
}

static leaf_status_t write_all(int fd, const char *tmp, const char *buf, size_t len, char *err,
                               size_t errlen) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            snprintf(err, errlen, "write(%s) failed: %s", tmp, strerror(errno));
            return LEAF_ERR;
        }
        buf += n;
        len -= (size_t)n;
    }
    if (fsync(fd) != 0) {
        snprintf(err, errlen, "fsync(%s) failed: %s", tmp, strerror(errno));
        return LEAF_ERR;
    }
    return LEAF_OK;
}

leaf_status_t file_write_atomic_err(const char *path, const char *data, size_t len, mode_t mode,
                                    char *err, size_t errlen) {
    char tmp[FILE_PATH_MAX + 8];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
        snprintf(err, errlen, "path too long: %.64s...", path);
        return LEAF_ERR;
    }
    if (make_parents(path, err, errlen) != LEAF_OK) {
        return LEAF_ERR;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        snprintf(err, errlen, "open(%s) failed: %s", tmp, strerror(errno));
        return LEAF_ERR;
    }
    leaf_status_t rc = LEAF_OK;
    if (fchmod(fd, mode) != 0) { /* the umask may have narrowed it, or an old file widened it */
        snprintf(err, errlen, "fchmod(%s) failed: %s", tmp, strerror(errno));
        rc = LEAF_ERR;
    }
    if (rc == LEAF_OK) {
        rc = write_all(fd, tmp, data, len, err, errlen);
    }
    if (close(fd) != 0 && rc == LEAF_OK) {
        snprintf(err, errlen, "close(%s) failed: %s", tmp, strerror(errno));
        rc = LEAF_ERR;
    }
    if (rc == LEAF_OK && rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename(%s, %s) failed: %s", tmp, path, strerror(errno));
        rc = LEAF_ERR;
    }
    if (rc != LEAF_OK) {
        unlink(tmp);
        return rc;
    }
    return fsync_dir(path, err, errlen);
}

leaf_status_t file_write_atomic(const char *component, const char *path, const char *data,
                                size_t len, mode_t mode) {
    char err[FILE_PATH_MAX + 128];
    leaf_status_t rc = file_write_atomic_err(path, data, len, mode, err, sizeof(err));
    if (rc != LEAF_OK) {
        log_error(component, "%s", err);
    }
    return rc;
}

/*
 * The buffer starts at the file's size (fstat) and doubles while the file
 * grows under the read, never past max + 1: a 300-byte file costs a few
 * hundred bytes. (It used to allocate max + 1 at once: 1 GiB for the sequence
 * floors, which a sanitizer build took up to 1.5 s to free on every start, and
 * which a host without overcommit may refuse outright.)
 */
static leaf_status_t read_grow(char **buf, size_t *cap, size_t max) {
    size_t want = *cap > (max + 1) / 2 ? max + 1 : *cap * 2;
    char *p = realloc(*buf, want);
    if (p == NULL) {
        return LEAF_ENOMEM;
    }
    *buf = p;
    *cap = want;
    return LEAF_OK;
}

leaf_status_t file_read_all(const char *component, const char *path, size_t max, char **out,
                            size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return LEAF_ENOTFOUND;
        }
        log_error(component, "open(%s) failed: %s", path, strerror(errno));
        return LEAF_ERR;
    }
    struct stat st;
    size_t cap = 256;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        cap = (size_t)st.st_size < max ? (size_t)st.st_size + 1 : max + 1;
    }
    char *buf = malloc(cap);
    if (buf == NULL) {
        close(fd);
        return LEAF_ENOMEM;
    }
    size_t n = 0;
    leaf_status_t rc = LEAF_OK;
    while (rc == LEAF_OK) {
        if (n > max) {
            log_error(component, "%s is larger than %zu bytes", path, max);
            rc = LEAF_EINVAL;
            break;
        }
        if (n == cap && (rc = read_grow(&buf, &cap, max)) != LEAF_OK) {
            break;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            log_error(component, "read(%s) failed: %s", path, strerror(errno));
            rc = LEAF_ERR;
        } else if (r == 0) {
            break;
        } else {
            n += (size_t)r;
        }
    }
    close(fd);
    if (rc == LEAF_OK && n == cap) {
        rc = read_grow(&buf, &cap, max); /* room for the terminating NUL */
    }
    if (rc != LEAF_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return LEAF_OK;
}
