#include "segment_greeting.h"

#include <string.h>

#define GREETING_PROTOCOL 10
#define GREETING_CLIENT_SSL 0x0800u

int segment_greeting_offers_tls(const unsigned char *p, size_t n) {
    /* header(4) protocol(1) version(NUL-terminated) thread-id(4) scramble(8)
     * filler(1) capabilities, lower 2 bytes */
    if (n < 5 || p[4] != GREETING_PROTOCOL) {
        return -1;
    }
    const unsigned char *v = p + 5, *end = p + n;
    const unsigned char *nul = memchr(v, '\0', (size_t)(end - v));
    if (nul == NULL || end - (nul + 1) < 4 + 8 + 1 + 2) {
        return -1;
    }
    const unsigned char *caps = nul + 1 + 4 + 8 + 1;
    unsigned lower = (unsigned)caps[0] | ((unsigned)caps[1] << 8);
    return (lower & GREETING_CLIENT_SSL) != 0;
}
