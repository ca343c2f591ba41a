#include "sequence_keyslot.h"

#include <stdint.h>
#include <string.h>

/* CRC16 XMODEM (polynomial 0x1021, initial 0), bit by bit: keys are short. */
static uint16_t crc16(const char *p, size_t n) {
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)((unsigned char)p[i] << 8);
        for (int b = 0; b < 8; b++) {
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
        }
    }
    return crc;
}

unsigned sequence_keyslot(const char *key, size_t len) {
    const char *open = memchr(key, '{', len);
    if (open != NULL) {
        size_t rest = len - (size_t)(open - key) - 1;
        const char *close = memchr(open + 1, '}', rest);
        if (close != NULL && close > open + 1) {
            return crc16(open + 1, (size_t)(close - open - 1)) & (SEQUENCE_KEYSLOTS - 1);
        }
    }
    return crc16(key, len) & (SEQUENCE_KEYSLOTS - 1);
}
