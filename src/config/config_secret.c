/*
 * Secrets from files: the first line of the file. See config_secret.h.
 */
#include "config_secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Enough for any secret leafd takes (the longest field is 256 bytes). */
#define CONFIG_SECRET_READ_MAX 4096

int config_secret_loose(const struct stat *st) {
    return (st->st_mode & S_IROTH) != 0 ||
           ((st->st_mode & S_IRGRP) != 0 && st->st_gid != getegid());
}

leaf_status_t config_secret_read(const char *path, char *out, size_t cap, int *loose, char *why,
                                 size_t whylen) {
    char buf[CONFIG_SECRET_READ_MAX];
    struct stat st;
    size_t n = 0, line;
    ssize_t got;

    *loose = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
        return LEAF_ERR;
    }
    if (fstat(fd, &st) == 0 && config_secret_loose(&st)) {
        *loose = 1;
    }
    while (n < sizeof(buf) && (got = read(fd, buf + n, sizeof(buf) - n)) != 0) {
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
            close(fd);
            return LEAF_ERR;
        }
        n += (size_t)got;
        if (memchr(buf, '\n', n) != NULL) {
            break;
        }
    }
    close(fd);
    const char *nl = memchr(buf, '\n', n);
    line = nl != NULL ? (size_t)(nl - buf) : n;
    if (memchr(buf, '\0', line) != NULL) {
        snprintf(why, whylen, "the first line of %s contains a NUL byte", path);
        memset(buf, 0, sizeof(buf));
        return LEAF_EINVAL;
    }
    if (line > 0 && buf[line - 1] == '\r') {
        line--;
    }
    if (line == 0 || line >= cap) {
        if (line == 0) {
            snprintf(why, whylen, "the first line of %s is empty", path);
        } else {
            snprintf(why, whylen, "the first line of %s is too long (max %zu bytes)", path,
                     cap - 1);
        }
        memset(buf, 0, sizeof(buf));
        return LEAF_EINVAL;
    }
    memcpy(out, buf, line);
    out[line] = '\0';
    memset(buf, 0, sizeof(buf)); /* the secret lives on in out only */
    return LEAF_OK;
}
