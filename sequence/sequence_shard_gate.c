/*
 * The sharding gate: see sequence_shard_gate.h.
 */
#include "sequence_shard_gate.h"

#include <stdio.h>
#include <string.h>

static void held_add(char *held, size_t cap, const struct sequence_gate_node *n, const char *why,
                     const char *version) {
    size_t pos = strlen(held);
    if (cap == 0 || pos + 1 >= cap) {
        return;
    }
    char who[80];
    if (n->http != NULL && n->http[0] != '\0') {
        snprintf(who, sizeof(who), "%s", n->http);
    } else {
        snprintf(who, sizeof(who), "n_%010lld", n->id);
    }
    snprintf(held + pos, cap - pos, "%s%s (%s%s%s)", pos ? ", " : "", who, version ? version : "",
             version ? ", " : "", why);
}

int sequence_gate_judge(const struct sequence_gate_node *line, int n,
                        const struct sequence_gate_member *members, int nmembers, int *takes_part,
                        char *held, size_t cap) {
    int out = 0;
    if (cap > 0) {
        held[0] = '\0';
    }
    for (int i = 0; i < n; i++) {
        const struct sequence_gate_node *node = &line[i];
        const struct sequence_gate_member *m = NULL;
        for (int j = 0; node->http != NULL && node->http[0] != '\0' && j < nmembers && !m; j++) {
            if (members[j].http != NULL && strcmp(members[j].http, node->http) == 0) {
                m = &members[j];
            }
        }
        int part = node->owner_node || (m != NULL && m->sharding == 1);
        takes_part[i] = part;
        if (part) {
            continue;
        }
        out++;
        if (m == NULL) {
            held_add(held, cap, node, "0.2.0 or older without sharding", NULL);
        } else if (m->sharding == 0) {
            held_add(held, cap, node, "leafd.sequence.sharding off", m->version);
        } else {
            held_add(held, cap, node, "does not say it shards", m->version);
        }
    }
    return out;
}
