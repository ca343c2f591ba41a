#ifndef LEAF_COMMAND_CLIENT_H
#define LEAF_COMMAND_CLIENT_H

/*
 * What a RESP connection keeps for the commands: resp_client.app points at
 * one struct command_client (command_client_size() bytes, zeroed at accept: the
 * server's resp_conn_config.app_size). Who AUTHed is command_auth.c's, the
 * MULTI queue (its limits and state, below) command_multi.c's: the lowest
 * floor of src/commands, so both reach their part without including each
 * other. command_client_close releases what it holds when the connection closes
 * (resp_conn_config.app_close).
 *
 * Ownership: the connection's loop thread, as the connection.
 */
#include <stddef.h>
#include <stdint.h>

#include "auth_decide.h"
#include "resp_conn.h"
#include "sbuf.h"
#include "user_service.h"

/* A queued command has at most this many arguments (the ID commands, PING, ECHO). */
#define RESP_MULTI_ARGS_MAX 3
/* At most this many queued commands, and IDs asked for by them, per transaction. */
#define RESP_MULTI_COMMANDS_MAX 1000
#define RESP_MULTI_IDS_MAX 100000
/*
 * At most this many bytes of queued arguments (each with its NUL) per
 * transaction: 1000 of the largest ID command (LEAF.IDS sequence:<128-byte
 * tag> 10000 stores 153), so every transaction of ID commands fits and only
 * ECHO and PING can reach it. With the entries, a queue holds at most
 * 224,000 bytes (docs/reference/resp.md, "Memory per connection").
 */
#define RESP_MULTI_BYTES_MAX ((size_t)RESP_MULTI_COMMANDS_MAX * 160)

struct command_multi_entry {
    resp_handler_fn fn;
    int argc;
    int ids;  /* an ID command: its right on the key is checked again at EXEC */
    int bare; /* 1 + the mode of its bare key (LEAF.UUID), 0: the key names its mode */
    size_t off[RESP_MULTI_ARGS_MAX]; /* into command_multi_queue.args */
    size_t len[RESP_MULTI_ARGS_MAX];
};

/*
 * The transaction of a connection. The queue's memory is allocated by the
 * first queued command and given back when the transaction ends (EXEC,
 * DISCARD, RESET) or fails (dirty: nothing more is stored), so a
 * connection outside a transaction holds none of it.
 */
struct command_multi_queue {
    int active;  /* between MULTI and EXEC / DISCARD */
    int dirty;   /* a command was refused: EXEC answers -EXECABORT; the queue is dropped */
    int n, cap;  /* queued commands, room in q */
    int64_t ids; /* IDs the queued commands ask for */
    struct command_multi_entry *q;
    struct sbuf args; /* the queued arguments, each NUL-terminated */
    /* EXEC in progress: the next command, its first dispatch and parkings, the replies so far. */
    int next;
    int64_t sub_first_seen_ms;
    int sub_retries;
    struct sbuf replies;
};

/*
 * Snowflake IDs taken ahead for identical INCRs pipelined right behind the
 * one that took them (resp_request_repeats): one reservation and one clock
 * reading for a batch of 16 instead of 16. Only the command whose bytes
 * start at next_raw in read read_seq may take the next one, so no other ID
 * of the connection comes between them and they stay increasing per
 * connection; what the read does not use is dropped (a gap, as any unused
 * snowflake ID: snowflake IDs are not dense).
 */
#define RESP_STASH_MAX 64
struct command_stash {
    const char *next_raw;
    uint64_t read_seq;
    int n, next;
    int64_t ids[RESP_STASH_MAX];
};

/*
 * How far the commands pipelined behind the current one in read read_seq
 * were made ready (door_ids_prepare): up to the byte until. Loop thread.
 */
struct command_ahead {
    const char *until;
    uint64_t read_seq;
};

struct command_client {
    struct auth_session auth;
    struct command_multi_queue multi;
    struct command_stash stash;
    struct command_ahead ahead;
};

size_t command_client_size(void);
void command_client_close(void *app);

#endif
