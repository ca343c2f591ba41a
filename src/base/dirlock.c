#include "dirlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p: 0 on success (or when it exists), -1 with errno. */
static int mkdirs(const char *dir) {
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* The pid the holder wrote, or 0 when unreadable. */
static long holder_pid(int fd) {
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

leaf_status_t dirlock_acquire(struct dirlock *l, const char *dir, char *err, size_t errlen) {
    char path[4096];
    l->fd = -1;
    if (snprintf(path, sizeof(path), "%s/%s", dir, DIRLOCK_FILE) >= (int)sizeof(path)) {
        snprintf(err, errlen, "data dir %s: path too long; set a shorter leafd.data.dir", dir);
        return LEAF_ERR;
    }
    if (mkdirs(dir) != 0) {
        snprintf(err, errlen,
                 "data dir %s: mkdir failed: %s; set leafd.data.dir to a directory leafd's "
                 "user may create and write",
                 dir, strerror(errno));
        return LEAF_ERR;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen,
                 "data dir %s: open(%s) failed: %s; set leafd.data.dir to a directory leafd's "
                 "user may write",
                 dir, path, strerror(errno));
        return LEAF_ERR;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        long pid = e == EWOULDBLOCK ? holder_pid(fd) : 0;
        close(fd);
        if (e != EWOULDBLOCK) {
            snprintf(err, errlen, "data dir %s: flock(%s) failed: %s", dir, path, strerror(e));
            return LEAF_ERR;
        }
        snprintf(err, errlen,
                 "data dir %s is in use by another leafd process (pid %ld holds %s); give each "
                 "process its own leafd.data.dir",
                 dir, pid, path);
        return LEAF_EBUSY;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        /* The pid is only for the other process's message: the lock holds without it. */
    }
    l->fd = fd;
    return LEAF_OK;
}

void dirlock_release(struct dirlock *l) {
    if (l->fd >= 0) {
        flock(l->fd, LOCK_UN);
        close(l->fd);
        l->fd = -1;
    }
}
