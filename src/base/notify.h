#ifndef LEAF_NOTIFY_H
#define LEAF_NOTIFY_H

/*
 * systemd's service notification protocol (sd_notify(3)), spoken directly:
 * one datagram of "KEY=value" lines to the AF_UNIX socket named by
 * $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace). systemd
 * documents the protocol as stable, and it is a dozen lines, so leafd needs
 * no libsystemd: every build speaks it, and the one code path is the tested
 * one. Without $NOTIFY_SOCKET (not run by systemd with Type=notify) there
 * is no one to tell and nothing is sent.
 *
 * libc only; any thread may call it (each call opens and closes its socket).
 */
#include "status.h"

/* 1 when $NOTIFY_SOCKET names somewhere to send to. */
int notify_enabled(void);

/*
 * Sends state (e.g. "READY=1\nSTATUS=ready"): LEAF_OK, LEAF_ENOTFOUND when
 * $NOTIFY_SOCKET is unset, LEAF_EINVAL when it is not a usable address,
 * LEAF_ERR when the send failed (errno says why). Logs nothing: the caller
 * knows what the message was for.
 */
leaf_status_t notify_send(const char *state);

#endif
