#ifndef CLIENT_FORK_H
#define CLIENT_FORK_H

/*
 * The process's fork generation: a number that a child of fork() bumps before fork() returns in
 * it (a pthread_atfork handler), so that a handle opened before the fork sees in the child that
 * its buffers and its refill thread are its parent's. The parent hands those buffered IDs out
 * itself; the child drops them (a gap) and refills for itself (client.c, docs/man/leafd_client.3,
 * "FORK"). Reading it is one load of a process-wide word: the call served from the buffer stays
 * lock-free and makes no system call.
 *
 * client_fork_lock() serialises a handle's renewal in the child with fork() itself: the handlers
 * take it before a fork and release it on both sides, so a child never starts with it held.
 */
#include <stdatomic.h>
#include <stdint.h>

extern _Atomic uint64_t client_fork_generation;

/* Registers the fork handlers, once per process (every leafd_client_open() calls it). 0 or -1. */
int client_fork_watch(void);

/* The generation now: 0 until the first fork of a process that opened a handle. */
static inline uint64_t client_fork_now(void) {
    return atomic_load_explicit(&client_fork_generation, memory_order_relaxed);
}

void client_fork_lock(void);
void client_fork_unlock(void);

#endif
