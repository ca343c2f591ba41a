#ifndef CLIENT_LOG_H
#define CLIENT_LOG_H

/*
 * A handle's lines for the program (a node fails or serves again, a key is refused, a node
 * answered an ID out of order): to its log callback (leafd_client_set_log), else to standard
 * error; none with log=0 (docs/man/leafd_client.3). Called by the refill thread and by the
 * callers that lead a strict key's batch (client_strict.c), never under the handle's lock.
 */
struct leafd_client;
struct leafd_client_key;

void client_log_say(struct leafd_client *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The last failure of key k, kept for the callers' leafd_client_error() (under the handle's
 * lock), and logged as a line too when loud. */
void client_log_key(struct leafd_client *c, struct leafd_client_key *k, int loud, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

#endif
