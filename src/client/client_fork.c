/* The process's fork generation (client_fork.h). */
#include "client_fork.h"

#include <pthread.h>

_Atomic uint64_t client_fork_generation;

/* Held by a handle's renewal after a fork and across fork() itself (the handlers below). */
static pthread_mutex_t client_fork_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t client_fork_once = PTHREAD_ONCE_INIT;
static int client_fork_registered = -1;

void client_fork_lock(void) {
    pthread_mutex_lock(&client_fork_mutex);
}

void client_fork_unlock(void) {
    pthread_mutex_unlock(&client_fork_mutex);
}

/* In the child, before fork() returns: only the thread that forked lives, and it holds the
 * mutex (taken in the prepare handler), so unlocking it is this thread's own business. */
static void client_fork_child(void) {
    atomic_fetch_add_explicit(&client_fork_generation, 1, memory_order_relaxed);
    pthread_mutex_unlock(&client_fork_mutex);
}

static void client_fork_register(void) {
    client_fork_registered =
        pthread_atfork(client_fork_lock, client_fork_unlock, client_fork_child) == 0 ? 0 : -1;
}

int client_fork_watch(void) {
    pthread_once(&client_fork_once, client_fork_register);
    return client_fork_registered;
}
