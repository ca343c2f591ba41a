#include "resp_outcome.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const outcome_names[RESP_O_IDS] = {
#define RESP_OUTCOME_NAME(e, name) name,
    RESP_OUTCOMES(RESP_OUTCOME_NAME)
#undef RESP_OUTCOME_NAME
};

int resp_outcome_names(const char **names, int cap) {
    for (int i = 0; i < RESP_O_IDS + IDS_E_COUNT && i < cap; i++) {
        names[i] = i < RESP_O_IDS ? outcome_names[i]
                                  : ids_error_info((enum ids_error)(i - RESP_O_IDS))->code;
    }
    return RESP_O_IDS + IDS_E_COUNT;
}

leaf_status_t resp_outcome_error(struct resp_request *req, int outcome, const char *fmt, ...) {
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    resp_reply_error(req->out, msg);
    req->outcome = outcome;
    return LEAF_OK;
}

void resp_outcome_refuse(struct resp_request *req, enum auth_verdict v) {
    int outcome = v == AUTH_NOAUTH      ? RESP_O_NOAUTH
                  : v == AUTH_WRONGPASS ? RESP_O_WRONGPASS
                                        : RESP_O_NOPERM;
    resp_outcome_error(req, outcome, "%s", auth_verdict_resp(v));
}
