#ifndef LEAF_RESP_OUTCOME_H
#define LEAF_RESP_OUTCOME_H

/*
 * The outcomes of a RESP command (resp_outcome.c): the status label of
 * leafd_http_requests_total{protocol="resp"}, and the error replies that
 * record them. "ok", "err" (Redis's ERR), the refusals, then the ID errors
 * by their stable code (RESP_O_IDS + enum ids_error). Below the command
 * table and the AUTH commands, which both answer through it.
 */
#include "auth_decide.h"
#include "ids.h"
#include "resp_conn.h"
#include "status.h"

#define RESP_OUTCOMES(X)                                                                           \
    X(RESP_O_OK, "ok")                                                                             \
    X(RESP_O_ERR, "err")                                                                           \
    X(RESP_O_BAD_KEY, "bad_key")                                                                   \
    X(RESP_O_WRONG_MODE, "wrong_mode")                                                             \
    X(RESP_O_PROTOCOL, "protocol_error")                                                           \
    X(RESP_O_NOAUTH, "noauth")                                                                     \
    X(RESP_O_WRONGPASS, "wrongpass")                                                               \
    X(RESP_O_NOPERM, "noperm")

enum resp_outcome {
#define RESP_OUTCOME_ENUM(e, name) e,
    RESP_OUTCOMES(RESP_OUTCOME_ENUM)
#undef RESP_OUTCOME_ENUM
        RESP_O_IDS /* RESP_O_IDS + enum ids_error: the ID errors, by their stable code */
};

/* The outcomes' labels by index: writes up to cap names, returns how many there are. */
int resp_outcome_names(const char **names, int cap);

/* Writes an error reply and records its outcome; always LEAF_OK (answered). */
leaf_status_t resp_outcome_error(struct resp_request *req, int outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes the refusal v (Redis's words) and records its outcome. */
void resp_outcome_refuse(struct resp_request *req, enum auth_verdict v);

#endif
