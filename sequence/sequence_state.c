#include "sequence_state.h"

#include <string.h>

#define SEQUENCE_NO_TIME INT64_MIN

/* ---- lease --------------------------------------------------------------------------------- */

void sequence_lease_init(struct sequence_lease *l, int64_t timeout_ms) {
    *l = (struct sequence_lease){.timeout_ms = timeout_ms, .answer_ms = SEQUENCE_NO_TIME};
}

void sequence_lease_connected(struct sequence_lease *l, int connected) {
    l->connected = connected;
}

int sequence_lease_live(const struct sequence_lease *l, int64_t now_ms) {
    if (!l->primary || l->answer_ms == SEQUENCE_NO_TIME || l->timeout_ms <= 0) {
        return 0;
    }
    int64_t elapsed = now_ms - l->answer_ms;
    /* elapsed >= T first, so that 3 * elapsed cannot overflow. */
    return elapsed < l->timeout_ms && 3 * elapsed < 2 * l->timeout_ms;
}

int64_t sequence_lease_left_ms(const struct sequence_lease *l, int64_t now_ms) {
    if (!sequence_lease_live(l, now_ms)) {
        return 0;
    }
    /* The first elapsed time that is not live is ceil(2T / 3). */
    int64_t stop = (2 * l->timeout_ms + 2) / 3;
    return stop - (now_ms - l->answer_ms);
}

void sequence_lease_answer(struct sequence_lease *l, int64_t sent_ms, int64_t now_ms) {
    if (l->primary && !sequence_lease_live(l, now_ms)) {
        l->lapses++;
    }
    if (l->answer_ms == SEQUENCE_NO_TIME || sent_ms > l->answer_ms) {
        l->answer_ms = sent_ms;
    }
}

void sequence_lease_win(struct sequence_lease *l) {
    l->primary = 1;
    l->term++;
}

void sequence_lease_lose(struct sequence_lease *l) {
    l->primary = 0;
}

/* ---- state --------------------------------------------------------------------------------- */

const char *sequence_phase_name(enum sequence_phase p) {
    static const char *const names[] = {
        [SEQUENCE_IDLE] = "idle",         [SEQUENCE_READING] = "reading",
        [SEQUENCE_CREATING] = "creating", [SEQUENCE_FENCING] = "fencing",
        [SEQUENCE_SERVING] = "serving",   [SEQUENCE_MISSING] = "missing",
        [SEQUENCE_FENCED] = "fenced",     [SEQUENCE_CORRUPT] = "corrupt",
        [SEQUENCE_MOVING] = "moving",     [SEQUENCE_MOVED] = "moved",
    };
    return (unsigned)p < sizeof(names) / sizeof(names[0]) ? names[p] : "unknown";
}

static int64_t state_add_sat(int64_t a, int64_t b) {
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int32_t state_next_version(int32_t v) {
    /* ZooKeeper's version is a Java int: it wraps. */
    return (int32_t)(uint32_t)((uint32_t)v + 1u);
}

void sequence_state_init(struct sequence_state *s, int64_t base_batch) {
    if (base_batch <= 0) {
        base_batch = SEQUENCE_DEFAULT_BATCH;
    }
    if (base_batch > SEQUENCE_MAX_BATCH) {
        base_batch = SEQUENCE_MAX_BATCH;
    }
    *s = (struct sequence_state){
        .phase = SEQUENCE_IDLE,
        .base_batch = base_batch,
        .batch = base_batch,
        .retry_at_ms = SEQUENCE_NO_TIME,
        .rate_since_ms = SEQUENCE_NO_TIME,
        .fence_window_ms = SEQUENCE_NO_TIME,
    };
}

void sequence_state_set_room(struct sequence_state *s, int64_t room, int64_t end) {
    s->room = room > 0 ? room : 0;
    s->room_end = end;
}

/*
 * The max a write sets: one batch above `from` (the highest value it must
 * cover); with a room, at most room / 10 above from and never past room_end
 * (sequence_state_set_room()).
 */
static int64_t state_batch(const struct sequence_state *s) {
    int64_t cap = s->room / 10 > 0 ? s->room / 10 : 1;
    return s->room > 0 && s->batch > cap ? cap : s->batch;
}

static int64_t state_target(const struct sequence_state *s, int64_t from) {
    int64_t target = state_add_sat(from, state_batch(s));
    if (s->room > 0 && target > s->room_end) {
        target = s->room_end;
    }
    return target;
}

leaf_status_t sequence_state_start(struct sequence_state *s, const struct sequence_lease *l,
                                   int64_t create_start) {
    if (!l->primary) {
        return LEAF_EUNAVAIL;
    }
    /* A request still in flight keeps its token and is waited for: the read
     * must be sent after it, so that it sees the write if it landed. */
    s->first_token = s->tokens + 1;
    s->phase = SEQUENCE_READING;
    s->term = l->term;
    s->lapses_seen = l->lapses;
    s->create_start = create_start > 0 ? create_start : 0;
    s->need = 0;
    s->verify = 0;
    s->retry_at_ms = SEQUENCE_NO_TIME;
    s->rate_since_ms = SEQUENCE_NO_TIME;
    s->fences_in_window = 0;
    s->giveback_ok = 0;
    return LEAF_OK;
}

/* Whether a giveback may follow the stop, and with which expected version. */
static void state_prepare_giveback(struct sequence_state *s) {
    s->giveback_ok = 0;
    if ((s->phase != SEQUENCE_SERVING && s->phase != SEQUENCE_FENCING) || s->verify) {
        return;
    }
    if (s->inflight == 0 && s->last < s->acked_max) {
        s->giveback_version = s->version;
    } else if (s->inflight >= s->first_token && s->inflight_op == SEQUENCE_OP_WRITE) {
        /* Sent after it on the same session: applied after it, and refused if it was. */
        s->giveback_version = state_next_version(s->inflight_version);
    } else {
        return; /* nothing above the last ID, or a read or create in flight */
    }
    s->giveback_ok = s->giveback_version != -1;
    s->giveback_max = s->last;
}

void sequence_state_stop(struct sequence_state *s) {
    state_prepare_giveback(s);
    if (s->phase == SEQUENCE_MOVING) {
        s->move_failed = 1; /* abandoned: the next primary reads whether the mark landed */
    }
    s->phase = SEQUENCE_IDLE;
    s->inflight = 0;
    s->first_token = s->tokens + 1;
    s->verify = 0;
    s->verify_mark = 0;
}

/* A lapse since the last (re)validation: prove nobody wrote before issuing again. */
static void state_catch_up(struct sequence_state *s, const struct sequence_lease *l) {
    if (s->phase == SEQUENCE_SERVING && s->lapses_seen != l->lapses) {
        s->phase = SEQUENCE_FENCING;
    }
}

leaf_status_t sequence_state_issue_from(struct sequence_state *s, struct sequence_lease *l,
                                        int64_t now_ms, int64_t n, int64_t start, int64_t *first) {
    if (n < 1) {
        return LEAF_EINVAL;
    }
    (void)sequence_state_recheck(s, l, now_ms);
    if (s->phase == SEQUENCE_MISSING) {
        return LEAF_ENOTFOUND;
    }
    if (s->phase == SEQUENCE_IDLE || s->phase == SEQUENCE_FENCED || s->phase == SEQUENCE_CORRUPT ||
        s->phase == SEQUENCE_MOVED || s->term != l->term || !sequence_lease_live(l, now_ms)) {
        return LEAF_EUNAVAIL;
    }
    state_catch_up(s, l);
    if (s->phase != SEQUENCE_SERVING) {
        if (n > s->need) {
            s->need = n;
        }
        return LEAF_EAGAIN; /* the caller computes start again from the last ID once woken */
    }
    if (s->last == INT64_MAX) {
        return LEAF_ERANGE;
    }
    if (start == 0) {
        start = s->last + 1;
    }
    if (start <= s->last) {
        return LEAF_EINVAL; /* a start computed from a stale last */
    }
    if (n - 1 > INT64_MAX - start) {
        return LEAF_ERANGE;
    }
    /* A start above last + 1 skips the values between: a gap, recorded in the max before a
     * value above it is issued (the headroom check below). */
    int64_t span = start - s->last - 1 + n;
    if (span > s->acked_max - s->last) {
        if (span > s->need) {
            s->need = span;
        }
        s->short_waits++;
        return LEAF_EAGAIN;
    }
    *first = start;
    s->last = start + (n - 1);
    s->issued += (uint64_t)n;
    return LEAF_OK;
}

/*
 * The batch for the next write: enough for SEQUENCE_BATCH_WINDOW_MS at the
 * rate measured since the previous write, at least the base; it halves at
 * most per write when the rate falls.
 */
static void state_update_batch(struct sequence_state *s, int64_t now_ms) {
    if (s->rate_since_ms != SEQUENCE_NO_TIME) {
        int64_t elapsed = now_ms - s->rate_since_ms;
        if (elapsed < SEQUENCE_RATE_MIN_MS) {
            return; /* too short to measure: keep counting */
        }
        uint64_t since = s->issued - s->rate_mark;
        int64_t want = SEQUENCE_MAX_BATCH;
        if (since < (uint64_t)SEQUENCE_MAX_BATCH) {
            want = ((int64_t)since * SEQUENCE_BATCH_WINDOW_MS + elapsed - 1) / elapsed;
        }
        if (want < s->base_batch) {
            want = s->base_batch;
        }
        if (want < s->batch / 2) {
            want = s->batch / 2;
        }
        s->batch = want > SEQUENCE_MAX_BATCH ? SEQUENCE_MAX_BATCH : want;
    }
    s->rate_since_ms = now_ms;
    s->rate_mark = s->issued;
}

/* Whether a serving sequence should top up: less than half a batch left, or a parked request. */
static int state_wants_top_up(const struct sequence_state *s) {
    int64_t left = s->acked_max - s->last;
    if (s->acked_max == INT64_MAX || (s->room > 0 && s->acked_max >= s->room_end)) {
        return 0; /* nothing left to persist (a numbering: up to its period's end) */
    }
    int64_t batch = state_batch(s);
    return s->need > left || (left < batch && 2 * left < batch);
}

static void state_emit(struct sequence_state *s, int64_t now_ms, enum sequence_op op,
                       struct sequence_action *a) {
    *a = (struct sequence_action){.op = op, .token = ++s->tokens, .sent_ms = now_ms};
    s->inflight = a->token;
    s->inflight_op = op;
    s->inflight_mark = 0;
    s->inflight_sent_ms = now_ms;
}

/* The write of a new max: a fence (new primary, after a lapse) or a top-up. */
static int state_emit_write(struct sequence_state *s, const struct sequence_lease *l,
                            int64_t now_ms, struct sequence_action *a) {
    if (s->version == -1) {
        /* Expected version -1 would make the write unconditional; the version
         * wrapped after 2^32 writes. Refuse rather than write without a fence. */
        s->phase = SEQUENCE_CORRUPT;
        s->phase_since_ms = now_ms;
        return 0;
    }
    state_update_batch(s, now_ms);
    /* One batch above what is issued (and what a parked request needs): the
     * headroom, and so the gap a crash leaves, stays within one batch. */
    int64_t from = state_add_sat(s->last, s->need);
    int64_t target = state_target(s, from);
    if (target < s->acked_max) {
        target = s->acked_max; /* never lower (a fence after a lapse rewrites it as is) */
    }
    state_emit(s, now_ms, SEQUENCE_OP_WRITE, a);
    a->version = s->version;
    a->max = target;
    a->len = sequence_record_format_max(a->data, sizeof(a->data), target);
    s->inflight_version = s->version;
    s->inflight_max = target;
    s->lapses_seen = l->lapses;
    return 1;
}

/* The moved mark: the acknowledged max as it is, the new home beside it, with the version held. */
static int state_emit_mark(struct sequence_state *s, int64_t now_ms, struct sequence_action *a) {
    if (s->version == -1) {
        s->phase = SEQUENCE_CORRUPT; /* as state_emit_write(): never an unconditional write */
        s->phase_since_ms = now_ms;
        s->move_failed = 1;
        return 0;
    }
    state_emit(s, now_ms, SEQUENCE_OP_WRITE, a);
    a->version = s->version;
    a->max = s->acked_max;
    a->len = sequence_record_format_moved(a->data, sizeof(a->data), a->max, s->moved_to);
    s->inflight_version = s->version;
    s->inflight_max = a->max;
    s->inflight_mark = 1;
    return 1;
}

int sequence_state_action(struct sequence_state *s, struct sequence_lease *l, int64_t now_ms,
                          struct sequence_action *a) {
    if (s->term != l->term || !l->primary || !l->connected || s->inflight != 0 ||
        now_ms < s->retry_at_ms) {
        return 0;
    }
    state_catch_up(s, l);
    if (s->verify) {
        state_emit(s, now_ms, SEQUENCE_OP_READ, a);
        return 1;
    }
    switch (s->phase) {
    case SEQUENCE_READING: state_emit(s, now_ms, SEQUENCE_OP_READ, a); return 1;
    case SEQUENCE_CREATING:
        state_emit(s, now_ms, SEQUENCE_OP_CREATE, a);
        /* Never below what this node saw: a re-created record starts above the floor. */
        a->max = s->create_start - 1 > s->floor ? s->create_start - 1 : s->floor;
        a->len = sequence_record_format_max(a->data, sizeof(a->data), a->max);
        s->inflight_max = a->max;
        return 1;
    case SEQUENCE_FENCING: return state_emit_write(s, l, now_ms, a);
    case SEQUENCE_SERVING: return state_wants_top_up(s) ? state_emit_write(s, l, now_ms, a) : 0;
    case SEQUENCE_MOVING: return state_emit_mark(s, now_ms, a);
    default: return 0;
    }
}

/*
 * A write was refused: someone else wrote or deleted the record. Read it
 * again and start over above it (and above the floor), as a new primary
 * does; give up after SEQUENCE_FENCE_LIMIT refusals in the window.
 */
static void state_fenced(struct sequence_state *s, int64_t now_ms, enum sequence_fence why) {
    if (s->phase == SEQUENCE_MOVING) {
        s->move_failed = 1; /* a newer primary wrote the record: this one may not mark it */
    }
    s->verify = 0;
    s->fence_failures++;
    s->fence = why;
    if (s->fence_window_ms == SEQUENCE_NO_TIME ||
        now_ms - s->fence_window_ms >= SEQUENCE_FENCE_WINDOW_MS) {
        s->fence_window_ms = now_ms;
        s->fences_in_window = 0;
    }
    if (++s->fences_in_window >= SEQUENCE_FENCE_LIMIT) {
        s->phase = SEQUENCE_FENCED;
        return;
    }
    s->phase = SEQUENCE_READING;
}

static void state_raise_floor(struct sequence_state *s, int64_t max) {
    if (max > s->floor) {
        s->floor = max;
        s->floor_dirty = 1;
    }
}

static void state_retry_later(struct sequence_state *s, int64_t now_ms) {
    s->retry_at_ms = now_ms + SEQUENCE_RETRY_MS;
}

/* The write of max with expected version `version` landed. */
static void state_write_landed(struct sequence_state *s, int32_t version, int64_t max) {
    if (max > s->acked_max) {
        s->acked_max = max;
    }
    s->version = state_next_version(version);
    s->writes++;
    state_raise_floor(s, s->acked_max);
    if (s->phase == SEQUENCE_FENCING) {
        s->phase = SEQUENCE_SERVING;
    }
    if (s->need <= s->acked_max - s->last) {
        s->need = 0;
    }
}

/* The moved mark landed: this region never issues the sequence again. */
static void state_mark_landed(struct sequence_state *s, int32_t version) {
    s->version = state_next_version(version);
    s->writes++;
    s->phase = SEQUENCE_MOVED;
    s->moved_new = 1;
    s->need = 0;
}

static void state_done_mark(struct sequence_state *s, int64_t now_ms, enum sequence_result r) {
    switch (r) {
    case SEQUENCE_RESULT_OK: state_mark_landed(s, s->inflight_version); return;
    case SEQUENCE_RESULT_UNKNOWN:
        s->write_failures++;
        s->verify = 1;
        s->verify_mark = 1;
        s->verify_version = s->inflight_version;
        s->verify_max = s->inflight_max;
        return;
    case SEQUENCE_RESULT_BADVERSION:
    case SEQUENCE_RESULT_NONODE:
        state_fenced(s, now_ms,
                     r == SEQUENCE_RESULT_NONODE ? SEQUENCE_FENCE_DELETED : SEQUENCE_FENCE_CHANGED);
        break;
    default:
        s->write_failures++;
        s->phase = SEQUENCE_SERVING; /* it did not land: serve on, the caller may ask again */
        break;
    }
    s->move_failed = 1;
}

static void state_done_write(struct sequence_state *s, int64_t now_ms, enum sequence_result r) {
    if (s->inflight_mark) {
        state_done_mark(s, now_ms, r);
        return;
    }
    switch (r) {
    case SEQUENCE_RESULT_OK: state_write_landed(s, s->inflight_version, s->inflight_max); break;
    case SEQUENCE_RESULT_BADVERSION: state_fenced(s, now_ms, SEQUENCE_FENCE_CHANGED); break;
    case SEQUENCE_RESULT_NONODE: state_fenced(s, now_ms, SEQUENCE_FENCE_DELETED); break;
    case SEQUENCE_RESULT_UNKNOWN:
        s->write_failures++;
        s->verify = 1;
        s->verify_version = s->inflight_version;
        s->verify_max = s->inflight_max;
        break;
    default:
        s->write_failures++;
        state_retry_later(s, now_ms);
        break;
    }
}

/* Reading back after a write in doubt: did it land, did not, or did someone else write? */
static void state_done_verify(struct sequence_state *s, int64_t now_ms, enum sequence_result r,
                              int64_t max, const char *moved, int32_t version) {
    if (r == SEQUENCE_RESULT_NONODE) {
        state_fenced(s, now_ms, SEQUENCE_FENCE_DELETED);
        return;
    }
    if (r != SEQUENCE_RESULT_OK) {
        state_retry_later(s, now_ms);
        return;
    }
    int mark = s->verify_mark;
    s->verify = 0;
    s->verify_mark = 0;
    if (version == s->verify_version) {
        return; /* it did not land: the next action writes again (the mark, when moving) */
    }
    if (version == state_next_version(s->verify_version) && max == s->verify_max &&
        (mark ? strcmp(moved, s->moved_to) == 0 : moved[0] == '\0')) {
        if (mark) {
            state_mark_landed(s, s->verify_version);
        } else {
            state_write_landed(s, s->verify_version, s->verify_max);
        }
        return;
    }
    if (mark) {
        s->move_failed = 1;
    }
    state_fenced(s, now_ms, SEQUENCE_FENCE_CHANGED);
}

/* The first ID-to-be of a new start: above the record's max and above the local floor. */
static void state_start_above(struct sequence_state *s, int64_t max, int32_t version) {
    int64_t from = max;
    if (s->floor > max) {
        from = s->floor; /* ZooKeeper went back (restored, re-created): the glue warns */
        s->floor_over = s->floor;
        s->zk_below = max;
    }
    s->last = from;
    s->acked_max = from; /* nothing is issued before the fencing write lands above it */
    s->version = version;
    state_raise_floor(s, from);
    s->phase = SEQUENCE_FENCING;
}

static void state_done_read(struct sequence_state *s, int64_t now_ms, enum sequence_result r,
                            int64_t max, const char *moved, int32_t version) {
    if (r == SEQUENCE_RESULT_NONODE) {
        s->phase = s->create_start > 0 ? SEQUENCE_CREATING : SEQUENCE_MISSING;
        s->phase_since_ms = now_ms;
        return;
    }
    if (r != SEQUENCE_RESULT_OK) {
        state_retry_later(s, now_ms);
        return;
    }
    if (moved[0] != '\0') {
        /* Moved away (by this region's primary, then or earlier): every ID this region issued
         * is <= max, and none is issued here again. */
        memcpy(s->moved_to, moved, sizeof(s->moved_to));
        s->acked_max = s->last = max;
        s->version = version;
        state_raise_floor(s, max);
        s->phase = SEQUENCE_MOVED;
        s->moved_new = 1;
        return;
    }
    /* IDs up to max may have been issued by an older primary: start above. */
    state_start_above(s, max, version);
}

static void state_done_create(struct sequence_state *s, int64_t now_ms, enum sequence_result r) {
    if (r == SEQUENCE_RESULT_OK) {
        state_start_above(s, s->inflight_max, 0);
    } else if (r == SEQUENCE_RESULT_EXISTS || r == SEQUENCE_RESULT_UNKNOWN) {
        s->phase = SEQUENCE_READING; /* someone created it, or we did: read what is there */
    } else {
        state_retry_later(s, now_ms);
    }
}

leaf_status_t sequence_state_done(struct sequence_state *s, struct sequence_lease *l,
                                  uint64_t token, int64_t now_ms, enum sequence_result r,
                                  const char *data, size_t len, int32_t version) {
    if (token == 0 || token != s->inflight) {
        return LEAF_EINVAL;
    }
    s->inflight = 0;
    if (token < s->first_token) {
        return LEAF_OK; /* from before the last start or stop: dropped */
    }
    enum sequence_op op = s->inflight_op;
    if (op != SEQUENCE_OP_READ && r != SEQUENCE_RESULT_UNKNOWN && r != SEQUENCE_RESULT_FAILED) {
        /* The leader decided on it, so the session was alive when it was sent. */
        sequence_lease_answer(l, s->inflight_sent_ms, now_ms);
    }
    s->retry_at_ms = SEQUENCE_NO_TIME;
    int64_t max = 0;
    char moved[SEQUENCE_MOVED_MAX] = "";
    if (op == SEQUENCE_OP_READ && r == SEQUENCE_RESULT_OK &&
        (data == NULL || sequence_record_parse_seq(data, len, &max, moved) != LEAF_OK)) {
        s->phase = SEQUENCE_CORRUPT;
        s->phase_since_ms = now_ms;
        s->move_failed = s->move_failed || s->verify_mark;
        s->verify = 0;
        s->verify_mark = 0;
        return LEAF_OK;
    }
    if (op == SEQUENCE_OP_READ && s->verify) {
        state_done_verify(s, now_ms, r, max, moved, version);
    } else if (op == SEQUENCE_OP_READ) {
        state_done_read(s, now_ms, r, max, moved, version);
    } else if (op == SEQUENCE_OP_CREATE) {
        state_done_create(s, now_ms, r);
    } else {
        state_done_write(s, now_ms, r);
    }
    return LEAF_OK;
}

leaf_status_t sequence_state_move(struct sequence_state *s, const struct sequence_lease *l,
                                  const char *to) {
    size_t n = strlen(to);
    if (n == 0 || n >= sizeof(s->moved_to)) {
        return LEAF_EINVAL;
    }
    if (!l->primary || s->term != l->term) {
        return LEAF_EUNAVAIL;
    }
    switch (s->phase) {
    case SEQUENCE_MOVING:
    case SEQUENCE_MOVED: return strcmp(s->moved_to, to) == 0 ? LEAF_OK : LEAF_EEXIST;
    case SEQUENCE_SERVING: break;
    case SEQUENCE_MISSING: return LEAF_ENOTFOUND;
    case SEQUENCE_READING:
    case SEQUENCE_CREATING:
    case SEQUENCE_FENCING: return LEAF_EAGAIN;
    default: return LEAF_EUNAVAIL;
    }
    /* Under the caller's lock: nothing is issued from here on (issue_from parks every
     * request), so the acknowledged max the mark carries bounds every ID this region issued. */
    memcpy(s->moved_to, to, n + 1);
    s->phase = SEQUENCE_MOVING;
    s->move_failed = 0;
    s->need = 0;
    return LEAF_OK;
}

int64_t sequence_state_headroom(const struct sequence_state *s) {
    return s->phase == SEQUENCE_SERVING ? s->acked_max - s->last : 0;
}

int sequence_state_recheck(struct sequence_state *s, const struct sequence_lease *l,
                           int64_t now_ms) {
    if ((s->phase != SEQUENCE_MISSING && s->phase != SEQUENCE_CORRUPT) || !l->primary ||
        s->term != l->term || now_ms - s->phase_since_ms < SEQUENCE_RECHECK_MS) {
        return 0;
    }
    s->phase = SEQUENCE_READING;
    s->retry_at_ms = SEQUENCE_NO_TIME;
    return 1;
}

void sequence_state_created(struct sequence_state *s) {
    if (s->phase == SEQUENCE_MISSING) {
        s->phase = SEQUENCE_READING;
        s->retry_at_ms = SEQUENCE_NO_TIME;
    }
}

void sequence_state_set_floor(struct sequence_state *s, int64_t floor) {
    s->floor = floor > 0 ? floor : 0;
}

int sequence_state_giveback(struct sequence_state *s, struct sequence_action *a) {
    if (s->giveback_ok != 1 || s->phase != SEQUENCE_IDLE) {
        return 0;
    }
    s->giveback_ok = 0;
    *a = (struct sequence_action){
        .op = SEQUENCE_OP_WRITE, .version = s->giveback_version, .max = s->giveback_max};
    a->len = sequence_record_format_max(a->data, sizeof(a->data), a->max);
    s->giveback_ok = a->len > 0 ? 2 : 0; /* 2: sent, waiting for the answer */
    return a->len > 0;
}

void sequence_state_giveback_done(struct sequence_state *s, enum sequence_result r) {
    if (s->giveback_ok != 2) {
        return;
    }
    s->giveback_ok = 0;
    if (r != SEQUENCE_RESULT_OK || s->phase != SEQUENCE_IDLE) {
        return;
    }
    s->acked_max = s->giveback_max;
    s->version = state_next_version(s->giveback_version);
    if (s->floor != s->giveback_max) {
        s->floor = s->giveback_max; /* the record says so, and nothing above was issued */
        s->floor_dirty = 1;
    }
}
