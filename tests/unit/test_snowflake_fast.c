/*
 * The generator's lock-free fast window (snowflake_gen_fast) under an
 * injected clock: it issues exactly what the locked path would, the
 * setters close it, and many threads taking IDs at once (the fast path
 * without the lock, the rest under a mutex as src/node/snowflake/snowflake_service.c
 * does) get unique IDs, increasing per thread, above the floor, below the
 * ceiling and within the lead bound, while the clock moves and steps back.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "snowflake_gen.h"
#include "snowflake_id.h"
#include "unit.h"

#define EPOCH SNOWFLAKE_DEFAULT_EPOCH
#define T0 (EPOCH + 1000000000LL)
#define LEAD 50
#define FLOOR (T0 + 3) /* a restart's floor a little above the clock */

/* One call as the node makes it: fast window first, else the lock. */
static leaf_status_t take(struct snowflake_gen *g, pthread_mutex_t *mu, _Atomic int64_t *clock,
                          int64_t *out, int n, int *fast) {
    if (snowflake_gen_fast(g, atomic_load(clock), out, n)) {
        *fast = 1;
        return LEAF_OK;
    }
    *fast = 0;
    int64_t wait;
    pthread_mutex_lock(mu);
    leaf_status_t rc = snowflake_gen_next(g, atomic_load(clock), out, n, &wait);
    pthread_mutex_unlock(mu);
    return rc;
}

static int64_t ms_of(int64_t id) {
    struct snowflake_layout l;
    struct snowflake_parts p;
    snowflake_layout_default(&l);
    snowflake_layout_decode(&l, id, EPOCH, &p);
    return p.timestamp_ms;
}

/* Single thread: the fast window gives the same IDs as the locked path alone. */
static void test_same_ids_as_locked_path(void) {
    struct snowflake_gen a, b;
    snowflake_gen_init(&a, EPOCH, 7);
    snowflake_gen_init(&b, EPOCH, 7);
    snowflake_gen_set_worker(&a, 5);
    snowflake_gen_set_worker(&b, 5);
    int64_t now = T0, x[8], y[8], wait;
    int fast = 0;
    for (int i = 0; i < 20000; i++) {
        int n = 1 + i % 8;
        if (i % 37 == 0) {
            now++;
        }
        int took = snowflake_gen_fast(&a, now, x, n);
        fast += took;
        leaf_status_t ra = took ? LEAF_OK : snowflake_gen_next(&a, now, x, n, &wait);
        leaf_status_t rb = snowflake_gen_next(&b, now, y, n, &wait);
        CHECK_EQ_INT(ra, rb);
        if (ra == LEAF_OK && memcmp(x, y, (size_t)n * sizeof(x[0])) != 0) {
            CHECK(!"fast and locked IDs differ");
            break;
        }
    }
    CHECK(fast > 10000);
    snowflake_gen_fold(&a);
    snowflake_gen_fold(&b);
    CHECK_EQ_INT(a.issued, b.issued);
    CHECK_EQ_INT(a.sequence, b.sequence);
}

/* The window is closed by every setter and is never opened in a lead or a borrowed tick. */
static void test_setters_close_window(void) {
    struct snowflake_gen g;
    snowflake_gen_init(&g, EPOCH, 1);
    snowflake_gen_set_worker(&g, 1);
    snowflake_gen_set_max_lead(&g, LEAD);
    int64_t id, wait;
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0, &id, 1), 0); /* nothing issued yet */
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0, &id, 1), 1);
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0 + 1, &id, 1), 0); /* another tick: the lock */
    snowflake_gen_set_ceiling(&g, 0);                        /* stop issuing */
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0, &id, 1), 0);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_EUNAVAIL);
    snowflake_gen_set_ceiling(&g, INT64_MAX);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
    snowflake_gen_set_worker(&g, -1);
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0, &id, 1), 0);
    snowflake_gen_set_worker(&g, 1);
    /* a step back of 10 ms: answered from the lead, never from a window */
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 + 20, &id, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 + 10, &id, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0 + 10, &id, 1), 0);
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0 + 20, &id, 1), 0);
    /* the sequence used up: the next tick is borrowed under the lock */
    int64_t big[4096];
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 + 30, big, 1, &wait), LEAF_OK);
    int k = 0;
    while (k < 5000 && snowflake_gen_fast(&g, T0 + 30, big, 1)) {
        k++;
    }
    CHECK(k > 3900 && k < 4096);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 + 30, big, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(ms_of(big[0]), T0 + 31);
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0 + 30, big, 1), 0);
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0 + 31, big, 1), 0);
}

/* Layouts the window does not serve: the locked path alone, as before. */
static void test_other_layouts_locked(void) {
    struct snowflake_layout l;
    char reason[128];
    const char *text = "time:39,sequence:8,worker:16";
    CHECK_EQ_INT(snowflake_layout_parse(&l, text, strlen(text), reason, sizeof(reason)), LEAF_OK);
    struct snowflake_gen g;
    snowflake_gen_init_layout(&g, &l, EPOCH, 3);
    snowflake_gen_set_worker(&g, 2);
    int64_t id, wait;
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(snowflake_gen_fast(&g, T0, &id, 1), 0); /* worker is the lowest field */
}

#define THREADS 4
#define PER_THREAD 60000

struct shared {
    struct snowflake_gen g;
    pthread_mutex_t mu;
    _Atomic int64_t clock;
    atomic_int stop;
    int64_t ceiling;
};

struct worker {
    struct shared *s;
    int index;
    int64_t *ids;
    int count;
    int fast;
    int bad_order, bad_floor, bad_lead;
};

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct shared *s = w->s;
    int64_t last = -1, buf[16];
    for (int i = 0; i < PER_THREAD * 4 && w->count < PER_THREAD; i++) {
        int n = 1 + (i + w->index) % 16, fast;
        if (n > PER_THREAD - w->count) {
            n = PER_THREAD - w->count;
        }
        if (w->index == 0 && i % 64 == 0) {
            /* the clock: forward a ms, and now and then back 3 ms (within the lead) */
            atomic_fetch_add(&s->clock, i % 4096 == 0 ? -3 : 1);
        }
        if (take(&s->g, &s->mu, &s->clock, buf, n, &fast) != LEAF_OK) {
            continue;
        }
        int64_t after = atomic_load(&s->clock);
        w->fast += fast;
        for (int k = 0; k < n; k++) {
            int64_t ms = ms_of(buf[k]);
            w->bad_order += buf[k] <= last;
            w->bad_floor += ms <= FLOOR;
            /* the lead bound: never more than max_lead (or the borrow window) ahead of
             * the latest clock, taken after the call (the clock only moves back 3 ms) */
            w->bad_lead += ms > after + 3 + LEAD + SNOWFLAKE_DEFAULT_BORROW_MS;
            last = buf[k];
            w->ids[w->count++] = buf[k];
        }
    }
    return NULL;
}

/* The ceiling moves up in steps under the lock while the loops issue (the node's reports). */
static void *ceiling_main(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < 2000 && !atomic_load(&s->stop); i++) {
        pthread_mutex_lock(&s->mu);
        int64_t c = atomic_load(&s->clock) + 20;
        if (c > s->ceiling) {
            s->ceiling = c;
        }
        snowflake_gen_set_ceiling(&s->g, s->ceiling);
        pthread_mutex_unlock(&s->mu);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_threads(void) {
    static struct shared s;
    snowflake_gen_init(&s.g, EPOCH, 11);
    snowflake_gen_set_worker(&s.g, 9);
    snowflake_gen_set_max_lead(&s.g, LEAD);
    snowflake_gen_set_floor(&s.g, FLOOR);
    s.ceiling = INT64_MAX;
    pthread_mutex_init(&s.mu, NULL);
    atomic_init(&s.clock, T0);
    atomic_init(&s.stop, 0);
    s.ceiling = T0 + 20;
    snowflake_gen_set_ceiling(&s.g, s.ceiling);
    struct worker w[THREADS];
    pthread_t th[THREADS], ct;
    pthread_create(&ct, NULL, ceiling_main, &s);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){.s = &s, .index = i, .ids = malloc(PER_THREAD * sizeof(int64_t))};
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
    }
    atomic_store(&s.stop, 1);
    pthread_join(ct, NULL);
    size_t total = 0;
    int fast = 0;
    for (int i = 0; i < THREADS; i++) {
        total += (size_t)w[i].count;
        fast += w[i].fast;
        CHECK_EQ_INT(w[i].bad_order, 0);
        CHECK_EQ_INT(w[i].bad_floor, 0);
        CHECK_EQ_INT(w[i].bad_lead, 0);
    }
    int64_t *all = malloc(total * sizeof(int64_t));
    size_t k = 0;
    for (int i = 0; i < THREADS; i++) {
        memcpy(all + k, w[i].ids, (size_t)w[i].count * sizeof(int64_t));
        k += (size_t)w[i].count;
        free(w[i].ids);
    }
    qsort(all, total, sizeof(int64_t), cmp64);
    int dup = 0, above = 0;
    for (size_t i = 0; i < total; i++) {
        dup += i > 0 && all[i] == all[i - 1];
        above += ms_of(all[i]) >= s.ceiling; /* the ceiling only rose */
    }
    CHECK_EQ_INT(dup, 0);
    CHECK_EQ_INT(above, 0);
    CHECK(total > 0);
    CHECK(fast > 0);
    pthread_mutex_lock(&s.mu);
    snowflake_gen_fold(&s.g);
    CHECK_EQ_INT(s.g.issued, total); /* the fold counted the window's IDs */
    pthread_mutex_unlock(&s.mu);
    printf("threads: %zu IDs, %d calls on the fast path\n", total, fast);
    free(all);
    pthread_mutex_destroy(&s.mu);
}

int main(void) {
    TEST(test_same_ids_as_locked_path);
    TEST(test_setters_close_window);
    TEST(test_other_layouts_locked);
    TEST(test_threads);
    return unit_done();
}
