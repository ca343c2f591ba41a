/* The connection's part for the commands (command_client.h): its size and its release. */
#include "command_client.h"

#include <stdlib.h>
#include <string.h>

size_t command_client_size(void) {
    return sizeof(struct command_client);
}

void command_client_close(void *app) {
    struct command_multi_queue *m = &((struct command_client *)app)->multi;
    free(m->q);
    sbuf_free(&m->args);
    sbuf_free(&m->replies);
    memset(m, 0, sizeof(*m));
}
