#ifndef LEAF_STATUS_H
#define LEAF_STATUS_H

/*
 * One status convention for the whole code base, in libuv's style: a function
 * returns LEAF_OK (0) or a negative LEAF_E* code. "Not now" (LEAF_EAGAIN) is
 * kept apart from failure, as in twemproxy and nginx. The error is logged
 * where it happens, by the function that saw it, naming what failed; callers
 * only decide what to do next.
 *
 * This header includes nothing, so pure code (snowflake/, segment/ cores,
 * config parsing) can use it.
 */
typedef int leaf_status_t;

#define LEAF_STATUS_MAP(X)                                                                         \
    X(LEAF_OK, 0, "ok")                                                                            \
    X(LEAF_ERR, -1, "failed")                                                                      \
    X(LEAF_EAGAIN, -2, "not now, try again")                                                       \
    X(LEAF_ENOMEM, -3, "out of memory")                                                            \
    X(LEAF_EINVAL, -4, "invalid argument")                                                         \
    X(LEAF_ENOTFOUND, -5, "not found")                                                             \
    X(LEAF_EEXIST, -6, "already exists")                                                           \
    X(LEAF_ECLOCK, -7, "clock moved backwards")                                                    \
    X(LEAF_EUNAVAIL, -8, "dependency unavailable")                                                 \
    X(LEAF_ERANGE, -9, "out of range")                                                             \
    X(LEAF_EBUSY, -10, "over budget, refused without trying")

enum leaf_status {
#define LEAF_STATUS_ENUM(name, value, text) name = (value),
    LEAF_STATUS_MAP(LEAF_STATUS_ENUM)
#undef LEAF_STATUS_ENUM
};

static inline const char *leaf_strstatus(leaf_status_t s) {
#define LEAF_STATUS_TEXT(name, value, text)                                                        \
    if (s == (value))                                                                              \
        return text;
    LEAF_STATUS_MAP(LEAF_STATUS_TEXT)
#undef LEAF_STATUS_TEXT
    return "unknown status";
}

#endif
