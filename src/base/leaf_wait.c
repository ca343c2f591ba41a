#include "leaf_wait.h"

#include <stddef.h>

void leaf_wait_link(struct leaf_wait_list *l, struct leaf_wait *w) {
    if (w->list != NULL) {
        leaf_wait_unlink(w);
    }
    w->prev = NULL;
    w->next = l->head;
    if (l->head != NULL) {
        l->head->prev = w;
    }
    l->head = w;
    w->list = l;
}

void leaf_wait_unlink(struct leaf_wait *w) {
    struct leaf_wait_list *l = w->list;
    if (l == NULL) {
        return;
    }
    if (w->prev != NULL) {
        w->prev->next = w->next;
    } else {
        l->head = w->next;
    }
    if (w->next != NULL) {
        w->next->prev = w->prev;
    }
    w->prev = w->next = NULL;
    w->list = NULL;
}

void leaf_wait_wake_all(struct leaf_wait_list *l) {
    while (l->head != NULL) {
        struct leaf_wait *w = l->head;
        leaf_wait_unlink(w);
        if (w->wake != NULL) {
            w->wake(w);
        }
    }
}

void leaf_wait_cancel(struct leaf_wait *w) {
    void (*cancel)(struct leaf_wait *) = w->cancel;
    if (cancel != NULL) {
        cancel(w);
        w->cancel = NULL;
        w->data = NULL;
    }
}
