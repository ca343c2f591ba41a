/* The connection's part for the commands (resp_app.h): its size and its release. */
#include "resp_app.h"

#include <stdlib.h>
#include <string.h>

size_t resp_app_size(void) {
    return sizeof(struct resp_app);
}

void resp_app_close(void *app) {
    struct resp_multi *m = &((struct resp_app *)app)->multi;
    free(m->q);
    sbuf_free(&m->args);
    sbuf_free(&m->replies);
    memset(m, 0, sizeof(*m));
}
