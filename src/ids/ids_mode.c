#include "ids_mode.h"

#include <string.h>
#include <strings.h>

static const struct ids_mode_info ids_modes[IDS_MODE_COUNT] = {
/* The issue and text functions are src/door/door_ids.c's: only their names pass through here. */
#define IDS_MODE_ROW(e, name, http, key, dense, batch, metric, textcmd, what, issue, text)         \
    [e] = {name,  name ":", sizeof(name),      http,   sizeof(http) - 1, key, dense,               \
           batch, metric,   (textcmd) != NULL, textcmd},
    IDS_MODES(IDS_MODE_ROW)
#undef IDS_MODE_ROW
};

const struct ids_mode_info *ids_mode_info(enum ids_mode mode) {
    return (int)mode >= 0 && mode < IDS_MODE_COUNT ? &ids_modes[mode] : NULL;
}

const char *ids_mode_name(enum ids_mode mode) {
    const struct ids_mode_info *m = ids_mode_info(mode);
    return m ? m->name : NULL;
}

enum ids_mode ids_mode_find(const char *s, size_t n) {
    for (int m = 0; m < IDS_MODE_COUNT; m++) {
        if (ids_modes[m].key_prefix_len - 1 == n && memcmp(ids_modes[m].name, s, n) == 0) {
            return (enum ids_mode)m;
        }
    }
    return IDS_MODE_NONE;
}

enum ids_mode ids_mode_find_text_command(const char *s, size_t n) {
    for (int m = 0; m < IDS_MODE_COUNT; m++) {
        const char *cmd = ids_modes[m].text_command;
        if (cmd != NULL && strlen(cmd) == n && strncasecmp(cmd, s, n) == 0) {
            return (enum ids_mode)m;
        }
    }
    return IDS_MODE_NONE;
}
