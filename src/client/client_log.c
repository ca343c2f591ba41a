/* A handle's lines for the program (client_log.h). */
#include "client_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client_handle.h"

void client_log_say(struct leafd_client *c, const char *fmt, ...) {
    if (!c->opt.log) {
        return;
    }
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&c->lock);
    leafd_client_log_fn fn = c->log_fn;
    void *arg = c->log_arg;
    pthread_mutex_unlock(&c->lock);
    if (fn != NULL) {
        fn(arg, line);
    } else {
        fprintf(stderr, "leafd-client: %s\n", line);
    }
}

void client_log_key(struct leafd_client *c, struct leafd_client_key *k, int loud, const char *fmt,
                    ...) {
    char line[CLIENT_DETAIL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&c->lock);
    memcpy(k->detail, line, sizeof(line));
    pthread_mutex_unlock(&c->lock);
    if (loud) {
        client_log_say(c, "%s", line);
    }
}
