#include "notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int notify_enabled(void) {
    const char *path = getenv("NOTIFY_SOCKET");
    return path != NULL && path[0] != '\0';
}

/* $NOTIFY_SOCKET as an address: a path ("/run/...") or an abstract name ("@..."). */
static leaf_status_t notify_addr(struct sockaddr_un *sa, socklen_t *len) {
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0') {
        return LEAF_ENOTFOUND;
    }
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n < 2 || n >= sizeof(sa->sun_path)) {
        return LEAF_EINVAL;
    }
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    memcpy(sa->sun_path, path, n);
    if (path[0] == '@') {
        sa->sun_path[0] = '\0'; /* the abstract namespace; the length ends the name */
    }
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'));
    return LEAF_OK;
}

leaf_status_t notify_send(const char *state) {
    struct sockaddr_un sa;
    socklen_t len;
    leaf_status_t rc = notify_addr(&sa, &len);
    if (rc != LEAF_OK) {
        return rc;
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return LEAF_ERR;
    }
    size_t n = strlen(state);
    ssize_t sent = sendto(fd, state, n, MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
    close(fd);
    return sent == (ssize_t)n ? LEAF_OK : LEAF_ERR;
}
