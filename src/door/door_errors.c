#include "door_errors.h"

#include <string.h>

#include "status.h"

static const struct door_error_info door_errors[DOOR_E_COUNT] = {
#define DOOR_ERROR_INFO(e, status, code, resp, msg) [e] = {status, code, resp, msg},
    IDS_ERRORS(DOOR_ERROR_INFO) HTTP_ERRORS(DOOR_ERROR_INFO)
#undef DOOR_ERROR_INFO
#define DOOR_PROTO_ERROR_INFO(e, status, code, meaning) [DOOR_##e] = {status, code, NULL, meaning},
        HTTP_CONN_ERRORS(DOOR_PROTO_ERROR_INFO)
#undef DOOR_PROTO_ERROR_INFO
};

const struct door_error_info *door_error(enum door_error e) {
    int ok = (int)e >= 0 && e < DOOR_E_COUNT && door_errors[e].code != NULL;
    return &door_errors[ok ? e : IDS_E_NONE];
}

int door_error_by_code(const char *code, enum door_error *out) {
    for (int e = 0; e < DOOR_E_COUNT; e++) {
        if (door_errors[e].code != NULL && strcmp(door_errors[e].code, code) == 0) {
            *out = (enum door_error)e;
            return LEAF_OK;
        }
    }
    return LEAF_ENOTFOUND;
}
