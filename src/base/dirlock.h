#ifndef LEAF_DIRLOCK_H
#define LEAF_DIRLOCK_H

/*
 * One process per data dir (docs/IDENTITY.md): two leafd processes on
 * one leafd.data.dir would share a worker-ID cache and its time reservation, and each would
 * believe the other's ZooKeeper session to be its own previous incarnation. The lock is an
 * flock(LOCK_EX | LOCK_NB) on {dir}/leafd.lock, held by an open descriptor for the life of the
 * process: the kernel releases it when the process ends, however it ends (kill -9 included), so
 * a stale lock file never blocks a restart. The file holds the holder's pid, for the message.
 *
 * Plain POSIX; main() takes it once, before any thread starts, and keeps the descriptor.
 */
#include <stddef.h>

#include "status.h"

#define DIRLOCK_FILE "leafd.lock"

struct dirlock {
    int fd; /* -1 when not held */
};

/*
 * Creates dir (and its parents, 0755) as needed, then locks {dir}/leafd.lock. LEAF_OK with
 * l->fd held; LEAF_EBUSY when another process (or another open of this file) holds it; LEAF_ERR
 * when the dir or the file cannot be made or opened. On failure err says why, naming the dir:
 *   data dir /var/leafd is in use by another leafd process (pid 4242 holds /var/leafd/leafd.lock);
 *   give each process its own leafd.data.dir
 * The caller logs it and exits 1. Not logged here.
 */
leaf_status_t dirlock_acquire(struct dirlock *l, const char *dir, char *err, size_t errlen);

/*
 * The new process of an in-place upgrade (docs/UPGRADING.md): takes the lock descriptor fd the
 * previous process held and handed over, once it is checked to be {dir}/leafd.lock (the
 * configuration may name another dir now: that dir's lock is not this one's to take), and
 * writes this process's pid into it. LEAF_OK with l->fd = fd; otherwise err says why.
 */
leaf_status_t dirlock_adopt(struct dirlock *l, int fd, const char *dir, char *err, size_t errlen);

/*
 * The previous process of an in-place upgrade whose new process ended before the hand-over
 * (docs/UPGRADING.md): the lock is still its own open file, which the new process shared and
 * wrote its pid into. Locks it again (a no-op while it holds; LEAF_EBUSY, err naming the holder,
 * should the new process have unlocked it and a third process taken it meanwhile) and writes this
 * process's pid back.
 */
leaf_status_t dirlock_reclaim(struct dirlock *l, const char *dir, char *err, size_t errlen);

/*
 * {dir}/leafd.pid (written by leafctl start) follows the process that serves: when it names
 * old_pid, it is replaced (a new file, renamed over it) by this process's pid. Never through a
 * symbolic link. Returns 1 when it was rewritten, 0 when there is none or it names another pid,
 * -1 (errno) when it could not be read or replaced.
 */
int dirlock_pidfile_follow(const char *dir, long old_pid);

/* Unlocks and closes (at a graceful stop; exit would do the same). Safe on an unheld lock. */
void dirlock_release(struct dirlock *l);

#endif
