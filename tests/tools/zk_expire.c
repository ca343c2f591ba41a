/*
 * zk_expire HOSTS SESSION_ID [LINGER_MS]: makes a ZooKeeper session expire, as a test
 * tool. It opens a second handle on the same session and closes it, which
 * ends the session on the server; the original client then sees
 * SESSION_EXPIRED on its next contact.
 *
 * The session password is not secret from the server's point of view: the
 * server derives it from the session id with java.util.Random seeded by
 * id ^ 0xB3415C00 (ZooKeeperServer.generatePasswd), so the tool computes it
 * the same way. SESSION_ID is hex, as leafd logs it ("session 0x...").
 * LINGER_MS (optional): how long to hold the session before closing it; the
 * original client may reconnect to it meanwhile (the chaos run varies it).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

static void java_random_bytes(int64_t seed, char *out, int len) {
    uint64_t s = ((uint64_t)seed ^ 0x5DEECE66DULL) & ((1ULL << 48) - 1);
    for (int i = 0; i < len;) {
        s = (s * 0x5DEECE66DULL + 0xBULL) & ((1ULL << 48) - 1);
        int32_t rnd = (int32_t)(uint32_t)(s >> 16);
        for (int n = len - i < 4 ? len - i : 4; n-- > 0; rnd >>= 8) {
            out[i++] = (char)rnd;
        }
    }
}

/* Set on the client's event thread, read by main: atomic, not volatile. */
static atomic_int connected, expired;

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE) {
        atomic_store(&connected, 1);
    }
    if (type == ZOO_SESSION_EVENT && state == ZOO_EXPIRED_SESSION_STATE) {
        atomic_store(&expired, 1);
    }
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: zk_expire HOSTS SESSION_ID_HEX [LINGER_MS]\n");
        return 2;
    }
    clientid_t cid;
    memset(&cid, 0, sizeof(cid));
    cid.client_id = (int64_t)strtoull(argv[2], NULL, 16);
    java_random_bytes(cid.client_id ^ 0xB3415C00LL, cid.passwd, (int)sizeof(cid.passwd));
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    zhandle_t *zh = zookeeper_init(argv[1], watcher, 10000, &cid, NULL, 0);
    if (zh == NULL) {
        perror("zookeeper_init");
        return 1;
    }
    for (int i = 0; i < 200 && !atomic_load(&connected); i++) {
        usleep(50000);
    }
    int ok = atomic_load(&connected) && zoo_client_id(zh)->client_id == cid.client_id;
    if (argc == 4) {
        usleep((useconds_t)atoi(argv[3]) * 1000);
    }
    zookeeper_close(zh);
    /* The original client may take the session back before the close above reaches the
     * server (two handles steal one session from each other on every reconnect), and the
     * close then lands on a dead connection: attach again until the server says expired. */
    for (int round = 0; ok && round < 5; round++) {
        atomic_store(&connected, 0);
        atomic_store(&expired, 0);
        zh = zookeeper_init(argv[1], watcher, 10000, &cid, NULL, 0);
        if (zh == NULL) {
            break;
        }
        for (int i = 0; i < 200 && !atomic_load(&connected) && !atomic_load(&expired); i++) {
            usleep(50000);
        }
        int gone = atomic_load(&expired);
        zookeeper_close(zh); /* still alive: this close ends it; checked again next round */
        if (gone) {
            break;
        }
    }
    printf("%s session 0x%llx\n", ok ? "expired" : "could not attach to",
           (unsigned long long)cid.client_id);
    return ok ? 0 : 1;
}
