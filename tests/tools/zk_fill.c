/*
 * zk_fill HOSTS PREFIX COUNT: creates COUNT PERSISTENT_SEQUENTIAL nodes
 * PREFIX{ip}:8080-{seq} with a distinct ip each and leaf_forever JSON data,
 * as COUNT forever-mode nodes registering one after another would. A test
 * tool (tests/integration/test_zk_lease_exhaustion.py): a thousand real
 * registrations would take minutes, these take a second. The parents of
 * PREFIX are created as needed. Prints the last node created; exit 0 when
 * all were.
 *
 * zk_fill HOSTS --hold LEASE COUNT: takes lease slots LEASE/0000000000 ..
 * COUNT-1 (creates each with {"reserved":0} and an EPHEMERAL owner child),
 * prints "held COUNT" and keeps them until its stdin closes: a cluster
 * whose other slots are busy, so that a few hundred starts go through the
 * few slots left many times over.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

static atomic_int connected;

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE) {
        atomic_store(&connected, 1);
    }
}

/* Creates every proper prefix of prefix that ends before a '/'. */
static void make_parents(zhandle_t *zh, const char *prefix) {
    char path[512];
    snprintf(path, sizeof(path), "%s", prefix);
    for (char *p = strchr(path + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
        *p = '\0';
        zoo_create(zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
        *p = '/';
    }
}

static int hold(zhandle_t *zh, const char *lease, int count) {
    char path[512];
    int ok = 0;
    snprintf(path, sizeof(path), "%s/", lease);
    make_parents(zh, path);
    for (int i = 0; i < count; i++) {
        snprintf(path, sizeof(path), "%s/%010d", lease, i);
        zoo_create(zh, path, "{\"reserved\":0}", 14, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
        snprintf(path, sizeof(path), "%s/%010d/owner", lease, i);
        ok +=
            zoo_create(zh, path, "zk_fill", 7, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0) == ZOK;
    }
    printf("held %d\n", ok);
    fflush(stdout);
    char buf[64];
    while (fread(buf, 1, sizeof(buf), stdin) > 0) {
    }
    return ok == count ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && strcmp(argv[2], "--hold") == 0)) {
        fprintf(stderr, "usage: zk_fill HOSTS PREFIX COUNT | zk_fill HOSTS --hold LEASE COUNT\n");
        return 2;
    }
    int count = atoi(argv[argc - 1]);
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    zhandle_t *zh = zookeeper_init(argv[1], watcher, 10000, NULL, NULL, 0);
    for (int i = 0; zh != NULL && i < 200 && !atomic_load(&connected); i++) {
        usleep(50000);
    }
    if (zh == NULL || !atomic_load(&connected)) {
        fprintf(stderr, "zk_fill: cannot connect to %s\n", argv[1]);
        return 1;
    }
    if (argc == 5) {
        int rc = hold(zh, argv[3], count);
        zookeeper_close(zh);
        return rc;
    }
    char path[512], data[256], made[512] = "";
    int ok = 0;
    make_parents(zh, argv[2]);
    for (int i = 0; i < count; i++) {
        char ip[32];
        snprintf(ip, sizeof(ip), "10.9.%d.%d", i / 250, i % 250);
        snprintf(path, sizeof(path), "%s%s:8080-", argv[2], ip);
        int len =
            snprintf(data, sizeof(data), "{\"ip\":\"%s\",\"port\":\"8080\",\"timestamp\":1}", ip);
        if (zoo_create(zh, path, data, len, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_SEQUENTIAL, made,
                       (int)sizeof(made)) == ZOK) {
            ok++;
        }
    }
    zookeeper_close(zh);
    printf("created %d, last %s\n", ok, made);
    return ok == count ? 0 : 1;
}
