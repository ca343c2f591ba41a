#ifndef LEAF_COMMAND_OUTCOME_H
#define LEAF_COMMAND_OUTCOME_H

/*
 * The outcomes of a RESP command (command_outcome.c): the status label of
 * leafd_http_requests_total{protocol="resp"}, and the error replies that
 * record them. "ok", "err" (Redis's ERR), the refusals, then the ID errors
 * by their stable code (RESP_O_IDS + enum door_error, IDS_ERRORS). Below the command
 * table and the AUTH commands, which both answer through it.
 */
#include <stdio.h>

#include "auth_decide.h"
#include "door_errors.h"
#include "resp_conn.h"
#include "status.h"

/* X(enum, status label, the error reply's first words, what it means) */
#define RESP_OUTCOMES(X)                                                                           \
    X(RESP_O_OK, "ok", "", "answered")                                                             \
    X(RESP_O_ERR, "err", "ERR",                                                                    \
      "Redis's own errors, in Redis's words: an unknown command, a wrong number of arguments, "    \
      "a syntax error, EXEC without MULTI (and NOPROTO for a HELLO version other than 2 or 3)")    \
    X(RESP_O_BAD_KEY, "bad_key", "BAD_KEY",                                                        \
      "the key starts with no mode's prefix (snowflake:, segment:, ...) and "                      \
      "leafd.resp.default.mode names none")                                                        \
    X(RESP_O_WRONG_MODE, "wrong_mode", "WRONG_MODE",                                               \
      "the command does not fit the key's mode: INCRBY of a block of scattered IDs, GET of "       \
      "anything but a sequence")                                                                   \
    X(RESP_O_PROTOCOL, "protocol_error", "ERR Protocol error:",                                    \
      "not RESP, a bulk string over 64 KiB, more than 1024 arguments or a command over its "       \
      "size limit; the connection is closed")                                                      \
    X(RESP_O_NOAUTH, "noauth", "NOAUTH",                                                           \
      "no credentials (no AUTH yet or no Authorization header), or the session lapsed")            \
    X(RESP_O_WRONGPASS, "wrongpass", "WRONGPASS",                                                  \
      "wrong credentials: malformed, an unknown user or a wrong secret")                           \
    X(RESP_O_NOPERM, "noperm", "NOPERM",                                                           \
      "the user lacks the right the command or route needs (on the key)")

enum command_outcome {
#define RESP_OUTCOME_ENUM(e, name, resp, meaning) e,
    RESP_OUTCOMES(RESP_OUTCOME_ENUM)
#undef RESP_OUTCOME_ENUM
        RESP_O_IDS /* RESP_O_IDS + an ID error (IDS_ERRORS): the ID errors, by their stable code */
};

/* The outcomes' labels by index: writes up to cap names, returns how many there are. */
int command_outcome_names(const char **names, int cap);

/* Writes an error reply and records its outcome; always LEAF_OK (answered). */
leaf_status_t command_outcome_error(struct resp_request *req, int outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * RESP's one writer of an ID error (IDS_ERRORS, door_errors.h): "-<RESP> <message>", the row's
 * message when message is NULL, recorded under the row's code. Always LEAF_OK (answered).
 */
leaf_status_t command_outcome_ids_error(struct resp_request *req, enum door_error e,
                                        const char *message);

/* Writes the refusal v (Redis's words) and records its outcome. */
void command_outcome_refuse(struct resp_request *req, enum auth_verdict v);

/*
 * Every error as a Markdown table, each with its HTTP status, its RESP error
 * and what it means: the ID requests' of both protocols (IDS_ERRORS), the RESP
 * commands' (the outcomes but ok), then the HTTP admin API's and pages'
 * (HTTP_ERRORS) (leafd --print-reference errors, docs/reference/errors.md).
 */
void command_outcome_print_reference(FILE *out);

#endif
