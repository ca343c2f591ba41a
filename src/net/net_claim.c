/*
 * Claiming a listen address at start (docs/OPERATIONS.md, "One process per
 * listen address"): a lock named after the address, then a probe bind.
 *
 * The loops bind their own sockets with SO_REUSEPORT once the services have
 * started. Two processes of one user starting together could both pass a
 * bare probe and then share the port, the kernel splitting connections
 * between them. The lock closes that window: an abstract Unix socket named
 * "leafd:listen:HOST:PORT" that only one process can bind, held until the
 * process exits (the kernel drops it on any exit, kill -9 included). It
 * listens, so a second process can name the holder (SO_PEERCRED). The probe
 * bind after it still finds any other program on the port.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "log.h"
#include "net.h"

static socklen_t claim_name(const struct net_listen_config *lc, struct sockaddr_un *sa) {
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    /* sun_path[0] = 0: the abstract namespace (no file, gone with the process). */
    int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "leafd:listen:%s:%d", lc->host,
                     lc->port);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Names the process holding the lock, when it can be asked (its pid and uid), or "". */
static void claim_holder(const struct sockaddr_un *sa, socklen_t len, char *out, size_t cap) {
    out[0] = 0;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return;
    }
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    if (connect(fd, (const struct sockaddr *)sa, len) == 0 &&
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.pid > 0) {
        snprintf(out, cap, " (leafd pid %ld, uid %ld, claimed it)", (long)cred.pid, (long)cred.uid);
    }
    close(fd);
}

static leaf_status_t claim_lock(struct net_listen_config *lc) {
    struct sockaddr_un sa;
    socklen_t len = claim_name(lc, &sa);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_error("net", "socket(AF_UNIX) for the claim on %s failed: %s", lc->addr,
                  strerror(errno));
        return LEAF_ERR;
    }
    if (bind(fd, (const struct sockaddr *)&sa, len) != 0 || listen(fd, 1) != 0) {
        int err = errno;
        char holder[96];
        close(fd);
        if (err != EADDRINUSE) {
            log_error("net", "claiming %s for %s failed: %s", lc->addr,
                      lc->what ? lc->what : "listening", strerror(err));
            return LEAF_ERR;
        }
        claim_holder(&sa, len, holder, sizeof(holder));
        log_error("net",
                  "bind(%s) for %s failed: Address already in use by another leafd%s; one "
                  "process per listen address: stop the other one or change %s",
                  lc->addr, lc->what ? lc->what : "listening", holder,
                  lc->what ? lc->what : "the address");
        return LEAF_ERR;
    }
    lc->claim_fd = fd;
    return LEAF_OK;
}

leaf_status_t net_listen_probe(struct net_listen_config *lc) {
    struct sockaddr_in addr;
    int one = 1;
    leaf_status_t rc = LEAF_ERR;
    if (uv_ip4_addr(lc->host, lc->port, &addr) != 0) {
        log_error("net", "bad listen address %s", lc->addr);
        return LEAF_EINVAL;
    }
    if (lc->claim_fd < 0 && claim_lock(lc) != LEAF_OK) {
        return LEAF_ERR;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_error("net", "socket() failed: %s", strerror(errno));
        return LEAF_ERR;
    }
    /* SO_REUSEADDR: a restart is not refused over the last process's TIME_WAIT connections;
     * without SO_REUSEPORT, any socket listening there (another program) refuses the bind. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
        bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
        rc = LEAF_OK;
    } else {
        log_error("net", "bind(%s) for %s failed: %s", lc->addr, lc->what ? lc->what : "listening",
                  strerror(errno));
    }
    close(fd);
    return rc;
}
