#include "segment_buffer.h"

#include <string.h>

#include "segment_step.h"

/* A fetch starts once this share of the last range is used (Leaf: 10%). */
#define SEGMENT_PREFETCH_NUM 1
#define SEGMENT_PREFETCH_DEN 10

void segment_buffer_init(struct segment_buffer *b, int64_t min_step) {
    memset(b, 0, sizeof(*b));
    b->min_step = min_step < 1 ? 1 : min_step;
    b->step = b->min_step;
    b->last_fetch_ms = -1;
}

void segment_buffer_set_min_step(struct segment_buffer *b, int64_t min_step) {
    if (min_step < 1) {
        min_step = 1;
    }
    if (min_step != b->min_step) {
        b->min_step = min_step;
        b->step = min_step;
    }
}

void segment_buffer_clear(struct segment_buffer *b) {
    b->head = 0;
    b->nranges = 0;
    b->available = 0;
    b->demand = 0;
}

static struct segment_range *buffer_at(struct segment_buffer *b, int i) {
    return &b->ranges[(b->head + i) % SEGMENT_MAX_RANGES];
}

/* The current range is used up (or skipped): the next one becomes current. */
static void buffer_pop(struct segment_buffer *b) {
    b->head = (b->head + 1) % SEGMENT_MAX_RANGES;
    b->nranges--;
}

/* count IDs went to a caller. */
static leaf_status_t buffer_issued(struct segment_buffer *b, int count) {
    b->available -= count;
    b->issued += (uint64_t)count;
    return LEAF_OK;
}

leaf_status_t segment_buffer_take(struct segment_buffer *b, int count, int64_t *ids) {
    if (count < 1) {
        return LEAF_EINVAL;
    }
    if (b->available < count) {
        if (count > b->demand) {
            b->demand = count;
        }
        return LEAF_EAGAIN;
    }
    int n = 0;
    while (n < count) {
        struct segment_range *r = buffer_at(b, 0);
        while (n < count && r->next < r->end) {
            ids[n++] = r->next++;
        }
        if (r->next == r->end) {
            buffer_pop(b);
        }
    }
    return buffer_issued(b, count);
}

leaf_status_t segment_buffer_take_dense(struct segment_buffer *b, int count, int64_t *last) {
    if (count < 1) {
        return LEAF_EINVAL;
    }
    int fit = -1;
    for (int i = 0; i < b->nranges && fit < 0; i++) {
        const struct segment_range *r = buffer_at(b, i);
        if (r->end - r->next >= count) {
            fit = i;
        }
    }
    if (fit < 0) {
        /* demand above what is buffered starts a fetch of at least count */
        if (b->available + count > b->demand) {
            b->demand = b->available + count;
        }
        return LEAF_EAGAIN;
    }
    for (int i = 0; i < fit; i++) {
        struct segment_range *r = buffer_at(b, 0);
        int64_t rest = r->end - r->next;
        b->skipped += (uint64_t)rest;
        b->available -= rest;
        buffer_pop(b);
    }
    struct segment_range *r = buffer_at(b, 0);
    r->next += count;
    *last = r->next - 1;
    if (r->next == r->end) {
        buffer_pop(b);
    }
    return buffer_issued(b, count);
}

static int buffer_prefetch_due(const struct segment_buffer *b) {
    const struct segment_range *r = &b->ranges[b->head];
    int64_t size = r->end - r->start, idle = r->end - r->next;
    /* idle <= 90% of size, without floating point */
    return idle * SEGMENT_PREFETCH_DEN <= size * (SEGMENT_PREFETCH_DEN - SEGMENT_PREFETCH_NUM);
}

int segment_buffer_need_fetch(const struct segment_buffer *b) {
    if (b->fetching || b->nranges >= SEGMENT_MAX_RANGES) {
        return 0;
    }
    if (b->nranges == 0 || b->demand > b->available) {
        return 1;
    }
    return b->nranges == 1 && buffer_prefetch_due(b);
}

int64_t segment_buffer_begin_fetch(struct segment_buffer *b, int64_t now_ms) {
    int64_t step = b->min_step;
    if (b->fetches >= 2 && b->last_fetch_ms >= 0) {
        step = segment_step_next(b->step, b->min_step, now_ms - b->last_fetch_ms);
    }
    b->fetching = 1;
    b->fetch_step = step;
    int64_t shortfall = b->demand - b->available;
    return shortfall > step ? shortfall : step;
}

leaf_status_t segment_buffer_install(struct segment_buffer *b, int64_t new_max, int64_t size,
                                     int64_t now_ms) {
    if (!b->fetching) {
        return LEAF_EINVAL;
    }
    b->fetching = 0;
    int64_t start = new_max - size;
    if (start < 1) {
        start = 1; /* never issue 0 or a negative ID */
    }
    if (start < b->high) {
        start = b->high; /* never issue an ID twice, whatever happened to max_id */
    }
    if (size < 1 || new_max <= start || b->nranges >= SEGMENT_MAX_RANGES) {
        return LEAF_EINVAL;
    }
    *buffer_at(b, b->nranges) = (struct segment_range){start, start, new_max};
    b->nranges++;
    b->available += new_max - start;
    b->high = new_max;
    b->step = b->fetch_step;
    if (b->last_fetch_ms >= 0 && now_ms > b->last_fetch_ms) {
        b->last_rate =
            (double)(b->issued - b->issued_at_fetch) * 1000.0 / (double)(now_ms - b->last_fetch_ms);
    }
    b->issued_at_fetch = b->issued;
    b->last_fetch_ms = now_ms;
    b->demand = 0;
    b->fetches++;
    return LEAF_OK;
}

void segment_buffer_fetch_failed(struct segment_buffer *b) {
    b->fetching = 0;
}

int segment_buffer_unused_tail(const struct segment_buffer *b, int64_t *first_unused,
                               int64_t *last_end) {
    if (b->nranges == 0) {
        return 0;
    }
    const struct segment_range *r = &b->ranges[(b->head + b->nranges - 1) % SEGMENT_MAX_RANGES];
    int64_t first = r->next;
    if (r->end != b->high) {
        return 0; /* cannot happen: the last range installed sets high */
    }
    for (int i = b->nranges - 2; i >= 0; i--) {
        const struct segment_range *below = &b->ranges[(b->head + i) % SEGMENT_MAX_RANGES];
        if (below->end != r->start || r->next != r->start) {
            break; /* another node's range sits in between (or r was used: only the head is) */
        }
        first = below->next;
        r = below;
    }
    if (first >= b->high) {
        return 0;
    }
    *first_unused = first;
    *last_end = b->high;
    return 1;
}

double segment_buffer_rate(const struct segment_buffer *b, int64_t now_ms) {
    if (b->last_fetch_ms < 0) {
        return 0.0;
    }
    int64_t elapsed = now_ms - b->last_fetch_ms;
    if (elapsed < 1000) {
        return b->last_rate; /* too short to say: the rate over the previous range */
    }
    return (double)(b->issued - b->issued_at_fetch) * 1000.0 / (double)elapsed;
}
