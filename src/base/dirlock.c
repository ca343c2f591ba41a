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

/* This process's pid into the lock file, for another process's message. */
static void write_pid(int fd) {
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        /* The pid is only for the other process's message: the lock holds without it. */
    }
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
    write_pid(fd);
    l->fd = fd;
    return LEAF_OK;
}

leaf_status_t dirlock_adopt(struct dirlock *l, int fd, const char *dir, char *err, size_t errlen) {
    char path[4096];
    struct stat held, want;
    l->fd = -1;
    if (snprintf(path, sizeof(path), "%s/%s", dir, DIRLOCK_FILE) >= (int)sizeof(path)) {
        snprintf(err, errlen, "data dir %s: path too long; set a shorter leafd.data.dir", dir);
        return LEAF_ERR;
    }
    if (fstat(fd, &held) != 0) {
        snprintf(err, errlen, "the inherited lock (descriptor %d): fstat failed: %s", fd,
                 strerror(errno));
        return LEAF_ERR;
    }
    if (stat(path, &want) != 0 || want.st_dev != held.st_dev || want.st_ino != held.st_ino) {
        snprintf(err, errlen,
                 "the previous process's data-dir lock is not %s: leafd.data.dir changed, "
                 "which needs a restart, not an in-place upgrade",
                 path);
        return LEAF_EINVAL;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(err, errlen, "the inherited lock of %s is not held: %s", dir, strerror(errno));
        return LEAF_ERR;
    }
    write_pid(fd);
    l->fd = fd;
    return LEAF_OK;
}

leaf_status_t dirlock_reclaim(struct dirlock *l, const char *dir, char *err, size_t errlen) {
    if (l->fd < 0) {
        snprintf(err, errlen, "data dir %s: this process holds no lock to take back", dir);
        return LEAF_ERR;
    }
    /* Our own open file: a lock it still holds is simply kept (flock converts, never waits). */
    if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e != EWOULDBLOCK) {
            snprintf(err, errlen, "data dir %s: flock(%s) failed: %s", dir, DIRLOCK_FILE,
                     strerror(e));
            return LEAF_ERR;
        }
        snprintf(err, errlen,
                 "data dir %s was taken by another leafd process (pid %ld holds %s/%s) while "
                 "this one handed it over",
                 dir, holder_pid(l->fd), dir, DIRLOCK_FILE);
        return LEAF_EBUSY;
    }
    write_pid(l->fd);
    return LEAF_OK;
}

int dirlock_pidfile_follow(const char *dir, long old_pid) {
    char path[4096], tmp[4128], buf[32];
    if (snprintf(path, sizeof(path), "%s/leafd.pid", dir) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? 0 : -1;
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return n == 0 ? 0 : -1;
    }
    buf[n] = '\0';
    if (strtol(buf, NULL, 10) != old_pid) {
        return 0;
    }
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        return -1;
    }
    int len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    int ok = write(fd, buf, (size_t)len) == len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 1;
}

void dirlock_release(struct dirlock *l) {
    if (l->fd >= 0) {
        flock(l->fd, LOCK_UN);
        close(l->fd);
        l->fd = -1;
    }
}
