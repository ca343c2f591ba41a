#include "command_outcome.h"

#include <stdarg.h>
#include <stdio.h>

static const struct {
    const char *name;
    const char *resp;
    const char *meaning;
} outcomes[RESP_O_IDS] = {
#define RESP_OUTCOME_ROW(e, name, resp, meaning) [e] = {name, resp, meaning},
    RESP_OUTCOMES(RESP_OUTCOME_ROW)
#undef RESP_OUTCOME_ROW
};

/* The refusals: each verdict's outcome (AUTH_ALLOW has none). */
static const struct {
    enum auth_verdict verdict;
    int outcome;
} refusals[] = {
    {AUTH_NOAUTH, RESP_O_NOAUTH},
    {AUTH_WRONGPASS, RESP_O_WRONGPASS},
    {AUTH_FORBIDDEN, RESP_O_NOPERM},
};
#define REFUSALS_N (sizeof(refusals) / sizeof(refusals[0]))

int command_outcome_names(const char **names, int cap) {
    for (int i = 0; i < RESP_O_IDS + IDS_E_COUNT && i < cap; i++) {
        names[i] =
            i < RESP_O_IDS ? outcomes[i].name : door_error((enum door_error)(i - RESP_O_IDS))->code;
    }
    return RESP_O_IDS + IDS_E_COUNT;
}

leaf_status_t command_outcome_error(struct resp_request *req, int outcome, const char *fmt, ...) {
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    resp_reply_error(req->out, msg);
    req->outcome = outcome;
    return LEAF_OK;
}

leaf_status_t command_outcome_ids_error(struct resp_request *req, enum door_error e,
                                        const char *message) {
    const struct door_error_info *info = door_error(e);
    return command_outcome_error(req, RESP_O_IDS + (int)e, "%s %s", info->resp,
                                 message != NULL ? message : info->message);
}

void command_outcome_refuse(struct resp_request *req, enum auth_verdict v) {
    int outcome = RESP_O_NOPERM; /* anything unexpected is a denial */
    for (size_t i = 0; i < REFUSALS_N; i++) {
        outcome = refusals[i].verdict == v ? refusals[i].outcome : outcome;
    }
    command_outcome_error(req, outcome, "%s", auth_verdict_resp(v));
}

/* The HTTP answer of an outcome: a refusal's status and code, else none (RESP only). */
static void outcome_http(int outcome, char *buf, size_t cap) {
    static const struct {
        int status;
        const char *code;
    } verdicts[] = {
#define AUTH_VERDICT_HTTP(name, text, status, code, resp) [name] = {status, code},
        AUTH_VERDICT_MAP(AUTH_VERDICT_HTTP)
#undef AUTH_VERDICT_HTTP
    };
    snprintf(buf, cap, "-");
    for (size_t i = 0; i < REFUSALS_N; i++) {
        if (refusals[i].outcome == outcome) {
            snprintf(buf, cap, "%d `%s`", verdicts[refusals[i].verdict].status,
                     verdicts[refusals[i].verdict].code);
        }
    }
}

void command_outcome_print_reference(FILE *out) {
    fprintf(out, "| Code | HTTP | RESP | Meaning |\n"
                 "|---|---|---|---|\n");
    for (int e = 0; e < IDS_E_COUNT; e++) {
        const struct door_error_info *info = door_error((enum door_error)e);
        if (e != IDS_E_NONE) {
            fprintf(out, "| `%s` | %d | `-%s` | %s |\n", info->code, info->http_status, info->resp,
                    info->message);
        }
    }
    for (int o = 0; o < RESP_O_IDS; o++) {
        char http[64];
        outcome_http(o, http, sizeof(http));
        if (o != RESP_O_OK) {
            fprintf(out, "| `%s` | %s | `-%s` | %s |\n", outcomes[o].name, http, outcomes[o].resp,
                    outcomes[o].meaning);
        }
    }
    for (int e = IDS_E_COUNT + 1; e < DOOR_E_COUNT; e++) {
        const struct door_error_info *info = door_error((enum door_error)e);
        fprintf(out, "| `%s` | %d | - | %s |\n", info->code, info->http_status, info->message);
    }
}
