#include "version.h"

#include "leafd_revision.h" /* LEAFD_VERSION, LEAFD_REVISION: written at build time by revision.cmake */

const char *leafd_version(void) {
    return LEAFD_VERSION;
}

const char *leafd_revision(void) {
    return LEAFD_REVISION;
}
