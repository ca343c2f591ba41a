/*
 * Unit tests of the parked jobs of the node's services (src/node/common/node_jobs.c): a job
 * parked, run, finished and read; an abandoned one dropped or freed.
 */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "node_jobs.h"
#include "unit.h"

struct job_slot {
    struct node_job job;
    int payload;
};

static int wakes;

static void job_wake(struct leaf_wait *w) {
    (void)w;
    wakes++;
}

static int released;
static void job_release(struct node_job *j) {
    released += ((struct job_slot *)j)->payload;
}

/* A job parked, run, finished and read; an abandoned queued one is dropped,
 * an abandoned running one freed when it finishes; a full table says so. */
static void test_jobs(void) {
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    struct job_slot slots[2];
    memset(slots, 0, sizeof(slots));
    struct node_jobs js = {&mu, slots, 2, sizeof(slots[0]), job_release};
    struct leaf_wait w1 = {.wake = job_wake}, w2 = {.wake = job_wake}, w3 = {.wake = job_wake};
    struct node_job *j;
    int t1 = -1, t2 = -1, t3 = -1;
    CHECK_EQ_INT(node_jobs_step(&js, &t1, &w1, &j), LEAF_EAGAIN);
    CHECK(j != NULL && t1 == 0);
    ((struct job_slot *)j)->payload = 1;
    CHECK_EQ_INT(node_jobs_step(&js, &t2, &w2, &j), LEAF_EAGAIN);
    ((struct job_slot *)j)->payload = 10;
    CHECK_EQ_INT(node_jobs_step(&js, &t3, &w3, &j), LEAF_ENOMEM); /* both slots taken */
    CHECK_EQ_INT(node_jobs_next(&js), 0);
    CHECK_EQ_INT(node_jobs_step(&js, &t1, &w1, &j), LEAF_EAGAIN); /* not done: parked again */
    CHECK(j == NULL);
    node_jobs_finish(&js, &slots[0].job, LEAF_EEXIST);
    CHECK_EQ_INT(wakes, 1);
    CHECK_EQ_INT(node_jobs_step(&js, &t1, &w1, &j), LEAF_EEXIST);
    CHECK(j == &slots[0].job && t1 == -1);
    node_jobs_release(&js, j);
    CHECK_EQ_INT(released, 1);
    w2.cancel(&w2); /* queued, never started: dropped at once, never run */
    CHECK_EQ_INT(released, 11);
    CHECK_EQ_INT(node_jobs_next(&js), -1);
    t3 = -1;
    CHECK_EQ_INT(node_jobs_step(&js, &t3, &w3, &j), LEAF_EAGAIN);
    ((struct job_slot *)j)->payload = 100;
    CHECK_EQ_INT(node_jobs_next(&js), t3);
    w3.cancel(&w3); /* running: freed when it finishes, and nobody is woken */
    CHECK_EQ_INT(released, 11);
    node_jobs_finish(&js, j, LEAF_OK);
    CHECK_EQ_INT(released, 111);
    CHECK_EQ_INT(wakes, 1);
    CHECK(!slots[0].job.used && !slots[1].job.used);
}

int main(void) {
    TEST(test_jobs);
    return unit_done();
}
