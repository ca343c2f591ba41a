#ifndef CLIENT_OPTIONS_H
#define CLIENT_OPTIONS_H

/*
 * The client's settings: the endpoints list and the "key=value;..." options
 * string of leafd_client_open(), parsed into one struct. Pure: no I/O, so the
 * unit tests check every key and every refusal in microseconds. The keys and
 * their defaults are one table (CLIENT_OPTIONS_MAP in client_options.c), which
 * leafd_client(3) lists.
 */
#include <stddef.h>
#include <stdint.h>

#define CLIENT_NODES_MAX 16
#define CLIENT_HOST_MAX 256
#define CLIENT_SECRET_MAX 512
#define CLIENT_PATH_MAX 1024

/* One node of the endpoints list. */
struct client_endpoint {
    int tls;                    /* https:// */
    char host[CLIENT_HOST_MAX]; /* a name or an address, without brackets */
    int port;
};

/* Owned by the handle; written once by client_options_parse, read-only after. */
struct client_options {
    struct client_endpoint nodes[CLIENT_NODES_MAX];
    int n_nodes;
    char user[CLIENT_SECRET_MAX];      /* user= (Basic, with secret=) */
    char secret[CLIENT_SECRET_MAX];    /* secret=, or read from secret.file= at open (client.c) */
    char secret_file[CLIENT_PATH_MAX]; /* secret.file=: a file holding the secret */
    char token[CLIENT_SECRET_MAX];     /* token= (Bearer: the admin token) */
    char ca_file[CLIENT_PATH_MAX];     /* ca= (TLS: the CA to trust; else the system's) */
    int64_t timeout_ms;                /* timeout.ms: one request, connect to answer */
    int64_t wait_ms;                   /* wait.ms: how long a caller waits on an empty buffer */
    int64_t prefetch_min;              /* prefetch.min: IDs kept ahead at the least */
    int64_t prefetch_max;              /* prefetch.max: IDs kept ahead at the most */
    int64_t prefetch_window_ms;        /* prefetch.window.ms: the rate is measured over this */
    int64_t retry_min_ms;              /* retry.min.ms: a failed node is skipped this long first */
    int64_t retry_max_ms;              /* retry.max.ms: ... doubling up to this */
    int64_t keys_max;                  /* keys.max: distinct keys per handle */
    int64_t batch_max;                 /* batch.max: the most IDs of one segment range request */
    int64_t log;            /* log: 1 writes a line to stderr when a node fails or comes back */
    int64_t strict_wait_us; /* strict.wait.us: how long a strict call waits to gather others */
};

/* One node's URL, "http://host:port" or "https://[::1]:port" (a trailing slash taken, a path
 * refused), of len bytes, into e. 0, or -1 with the reason in err. */
int client_options_endpoint(struct client_endpoint *e, const char *s, size_t len, char *err,
                            size_t errlen);

/* Fills o from endpoints and options (NULL: none). 0, or -1 with the reason in err. */
int client_options_parse(struct client_options *o, const char *endpoints, const char *options,
                         char *err, size_t errlen);

#endif
