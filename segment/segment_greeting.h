#ifndef LEAF_SEGMENT_GREETING_H
#define LEAF_SEGMENT_GREETING_H

/*
 * The first packet a MySQL/MariaDB server sends (the "initial handshake",
 * protocol 10): whether it offers TLS. Connector/C, asked for TLS without
 * certificate checks, carries on in plain text with a server that offers
 * none, after sending the login; segment_db.c reads the greeting first so
 * that a connection that must be encrypted never sends anything in plain
 * text. Pure code.
 */
#include <stddef.h>

/*
 * The packet as read from the socket (4-byte header included), n bytes of
 * it: 1 when the server sets CLIENT_SSL, 0 when it does not, -1 when the
 * bytes are not a greeting (an error packet, say, or too short).
 */
int segment_greeting_offers_tls(const unsigned char *p, size_t n);

#endif
