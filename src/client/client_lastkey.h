#ifndef CLIENT_LASTKEY_H
#define CLIENT_LASTKEY_H

/*
 * The last key a thread looked up by name, so that leafd_client_next(c, "segment:x", &id) in a
 * loop costs one comparison of the name instead of a hash and a probe of the handle's table
 * (docs/BENCHMARKS.md, "IDs in-process": by name within 1.5x of a key handle).
 *
 * Owned by one thread: client.c keeps one entry per thread (thread-local), so nothing is shared
 * and nothing is locked. An entry is only a hint; a miss goes to the table.
 *
 * An entry names the handle by its address and its generation, a number no other handle of the
 * process ever gets. A thread's entry of a handle that was closed never matches again, even when
 * another handle is opened at the same address (its key, which the entry points to, is freed).
 * The name is compared byte by byte with the key's own copy, never by the caller's pointer: a
 * caller may write another key into the same buffer. Pure: the unit tests drive it with made-up
 * handles.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct client_lastkey {
    const void *handle; /* the handle's address, NULL: empty */
    uint64_t gen;       /* the handle's generation */
    const char *name;   /* the key's own copy of its name: valid while the handle is open */
    void *key;          /* the key */
};

/* The key of name in handle (of generation gen, open: the caller's), or NULL. */
static inline void *client_lastkey_find(const struct client_lastkey *m, const void *handle,
                                        uint64_t gen, const char *name) {
    /* The handle and its generation first: only then is m->name known to be alive. */
    if (m->handle != handle || m->gen != gen || handle == NULL) {
        return NULL;
    }
    return strcmp(m->name, name) == 0 ? m->key : NULL;
}

/* Remembers key (its own name: key_name) as the thread's last of handle. */
static inline void client_lastkey_put(struct client_lastkey *m, const void *handle, uint64_t gen,
                                      const char *key_name, void *key) {
    m->handle = handle;
    m->gen = gen;
    m->name = key_name;
    m->key = key;
}

#endif
