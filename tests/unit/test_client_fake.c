/*
 * libleafd-client (src/client) against a fake node: a thread of this test that answers the
 * library's requests on a loopback port, with ranges and batches from one counter, or with one
 * hostile answer. What it checks (docs/man/leafd_client.3, docs/reference/guarantees.md, "The
 * client library"):
 * - a child of fork() never hands out an ID its parent buffered (its buffers are a gap), and
 *   serves: its own refill, while a thread of the parent takes IDs all along;
 * - a count the library cannot serve (a negative int passed as size_t) is refused and moves no
 *   counter back;
 * - a hostile answer (a negative or huge Content-Length, a short one, a batch of another size than
 *   asked, a range larger than asked) is refused: no crash, no read past a buffer, no ID from it;
 * - credentials that would overflow the Authorization line are taken whole, and a CR or LF in
 *   them is refused at open;
 * - every call on a key handle (leafd_client_key_get, _next, _next_many, _waits) serves and
 *   refuses as the header says.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <leafd/client.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

/* A fake node: its answers are honest ranges and batches of the one counter below, or `hostile`
 * for the requests whose line holds `match` (NULL: every request). Set by the tests between
 * handles; read by the node's threads. */
struct fake_node {
    char endpoint[64];
    const char *_Atomic hostile;
    const char *_Atomic match;
    _Atomic int delay_us; /* before each hostile answer: a node far away */
};

static struct fake_node node_a, node_b;
static const char HANG[] = "hang";
static char *endpoint = node_a.endpoint;
static pthread_mutex_t node_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t node_next = 1000; /* the nodes' counter: every honest answer takes from it */
static char node_last_auth[256]; /* the last Authorization line a node received (node_lock) */

/* The count=N of a request line (1 when absent). */
static int64_t request_count(const char *req) {
    const char *p = strstr(req, "count=");
    return p != NULL ? strtoll(p + 6, NULL, 10) : 1;
}

/* The honest answer to req: a range (segment) or a batch, one ID a line (snowflake). */
static size_t honest_answer(const char *req, char *out, size_t cap) {
    char body[65536];
    int64_t n = request_count(req);
    size_t len = 0;
    pthread_mutex_lock(&node_lock);
    int64_t start = node_next;
    if (strstr(req, "/api/snowflake/") != NULL) {
        n = n > 2000 ? 2000 : n;
        for (int64_t i = 0; i < n; i++) {
            len +=
                (size_t)snprintf(body + len, sizeof(body) - len, "%lld\n", (long long)(start + i));
        }
    } else {
        len = (size_t)snprintf(body, sizeof(body),
                               "{\"biz_tag\":\"t\",\"start\":\"%lld\",\"end\":\"%lld\"}",
                               (long long)start, (long long)(start + n - 1));
    }
    node_next += n;
    pthread_mutex_unlock(&node_lock);
    return (size_t)snprintf(out, cap, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%.*s", len,
                            (int)len, body);
}

struct conn_arg {
    struct fake_node *node;
    int fd;
};

static void *serve_conn(void *arg) {
    struct conn_arg ca = *(struct conn_arg *)arg;
    free(arg);
    int fd = ca.fd;
    char req[4096], out[70000];
    for (;;) {
        size_t got = 0;
        while (got < sizeof(req) - 1) {
            ssize_t n = recv(fd, req + got, sizeof(req) - 1 - got, 0);
            if (n <= 0) {
                goto done;
            }
            got += (size_t)n;
            req[got] = '\0';
            if (strstr(req, "\r\n\r\n") != NULL) {
                break;
            }
        }
        const char *auth = strstr(req, "Authorization: ");
        pthread_mutex_lock(&node_lock);
        snprintf(node_last_auth, sizeof(node_last_auth), "%.*s",
                 auth ? (int)strcspn(auth, "\r") : 0, auth ? auth : "");
        pthread_mutex_unlock(&node_lock);
        const char *hostile = ca.node->hostile, *match = ca.node->match;
        if (match != NULL && strstr(req, match) == NULL) {
            hostile = NULL;
        }
        /* A hung node (SIGSTOP): the connection is taken, no answer ever comes. */
        while (hostile == HANG && ca.node->hostile == HANG) {
            usleep(10000);
        }
        size_t len = hostile ? strlen(hostile) : honest_answer(req, out, sizeof(out));
        if (hostile != NULL && ca.node->delay_us > 0) {
            usleep((useconds_t)ca.node->delay_us);
        }
        if (send(fd, hostile ? hostile : out, len, MSG_NOSIGNAL) != (ssize_t)len) {
            break;
        }
    }
done:
    close(fd);
    return NULL;
}

struct listener {
    struct fake_node *node;
    int fd;
};

static void *serve(void *arg) {
    struct listener *l = arg;
    for (;;) {
        int fd = accept(l->fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) {
                continue;
            }
            return NULL;
        }
        struct conn_arg *ca = malloc(sizeof(*ca));
        ca->node = l->node;
        ca->fd = fd;
        pthread_t t;
        pthread_create(&t, NULL, serve_conn, ca);
        pthread_detach(t);
    }
}

static int fake_node(struct fake_node *node) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        return -1;
    }
    snprintf(node->endpoint, sizeof(node->endpoint), "http://127.0.0.1:%d", ntohs(a.sin_port));
    static struct listener ls[2];
    static int n_ls;
    struct listener *l = &ls[n_ls++];
    l->node = node;
    l->fd = fd;
    pthread_t t;
    pthread_create(&t, NULL, serve, l);
    pthread_detach(t);
    return 0;
}

/* ---- fork --------------------------------------------------------------------------------- */

#define BUSY_MAX 400000
#define CHILD_IDS 3000

struct busy {
    leafd_client *c;
    _Atomic int stop;
    int64_t *ids;
    size_t n, errors;
};

static void *busy_taker(void *arg) {
    struct busy *b = arg;
    while (!atomic_load(&b->stop) && b->n < BUSY_MAX) {
        if (leafd_client_next(b->c, "segment:f", &b->ids[b->n]) == 0) {
            b->n++;
        } else {
            b->errors++;
        }
    }
    return NULL;
}

/* The child: CHILD_IDS IDs into the pipe, then the number of failed calls; _exit (no LSan). */
static void fork_child(leafd_client *c, int out) {
    int64_t id;
    int64_t errors = 0;
    alarm(20); /* a child that hangs (a lock its parent held at the fork) dies, and says so */
    for (int i = 0; i < CHILD_IDS; i++) {
        int rc = errors < 3 ? leafd_client_next(c, "segment:f", &id) : -1;
        if (rc != 0) {
            errors++;
            id = 0;
        }
        if (write(out, &id, sizeof(id)) != sizeof(id)) {
            _exit(2);
        }
    }
    if (write(out, &errors, sizeof(errors)) != sizeof(errors)) {
        _exit(2);
    }
    leafd_client_close(c);
    _exit(0);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* How many of a[0..na) are in the sorted b[0..nb). */
static size_t common(const int64_t *a, size_t na, const int64_t *b, size_t nb) {
    size_t n = 0;
    for (size_t i = 0; i < na; i++) {
        n += bsearch(&a[i], b, nb, sizeof(*b), cmp_i64) != NULL;
    }
    return n;
}

static void test_fork_child_never_hands_out_the_parents_ids(void) {
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer stops a child of a multi-threaded fork that starts a thread (its
     * die_after_fork): the fork is checked in the other builds. */
    printf("  skipped under ThreadSanitizer\n");
    return;
#endif
    char err[256];
    leafd_client *c =
        leafd_client_open(endpoint, "log=0;wait.ms=2000;prefetch.min=20000", err, sizeof(err));
    CHECK(c != NULL);
    struct busy b = {.c = c, .ids = calloc(BUSY_MAX, sizeof(int64_t))};
    pthread_t t;
    pthread_create(&t, NULL, busy_taker, &b);
    while (b.n < 1000) {
        usleep(1000);
    }
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        fork_child(c, fds[1]);
    }
    close(fds[1]);
    int64_t child[CHILD_IDS + 1];
    size_t got = 0;
    while (got < sizeof(child)) {
        ssize_t n = read(fds[0], (char *)child + got, sizeof(child) - got);
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    /* The parent goes on past everything it had buffered at the fork. */
    usleep(100 * 1000);
    atomic_store(&b.stop, 1);
    pthread_join(t, NULL);
    int64_t more[30000];
    CHECK_EQ_INT(leafd_client_next_many(c, "segment:f", more, 30000), 0);
    size_t np = b.n;
    int64_t *parent = realloc(b.ids, (np + 30000) * sizeof(int64_t));
    memcpy(parent + np, more, sizeof(more));
    np += 30000;
    qsort(parent, np, sizeof(*parent), cmp_i64);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_INT(got, sizeof(child));
    size_t shared = common(child, CHILD_IDS, parent, np);
    printf("  parent %zu IDs (%zu failed calls), child %d IDs (%lld failed calls), %zu in both\n",
           np, b.errors, CHILD_IDS, (long long)child[CHILD_IDS], shared);
    CHECK_EQ_INT(shared, 0);
    CHECK_EQ_INT(child[CHILD_IDS], 0);
    CHECK_EQ_INT(b.errors, 0);
    free(parent);
    leafd_client_close(c);
}

/* ---- counts ------------------------------------------------------------------------------- */

static void check_counts_refused(const char *key) {
    char err[256];
    leafd_client *c = leafd_client_open(endpoint, "log=0;wait.ms=5000", err, sizeof(err));
    CHECK(c != NULL);
    leafd_client_key *k = NULL;
    CHECK_EQ_INT(leafd_client_key_get(c, key, &k), 0);
    int64_t ids[10], last = 0;
    CHECK_EQ_INT(leafd_client_next_many(c, key, ids, 10), 0);
    last = ids[9];
    int neg = -8;
    size_t bad[] = {(size_t)neg, (size_t)INT64_MAX + 1, SIZE_MAX, LEAFD_CLIENT_MANY_MAX + 1};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(leafd_client_next_many(c, key, ids, bad[i]), LEAFD_CLIENT_EINVAL);
        CHECK_EQ_INT(leafd_client_key_next_many(k, ids, bad[i]), LEAFD_CLIENT_EINVAL);
    }
    /* Nothing moved back: every later ID is new and (one handle, one thread) above the last. */
    for (int i = 0; i < 100; i++) {
        int64_t id = 0;
        CHECK_EQ_INT(leafd_client_next(c, key, &id), 0);
        if (id <= last) {
            CHECK(id > last);
            break;
        }
        last = id;
    }
    leafd_client_close(c);
}

static void test_counts_a_caller_cannot_have(void) {
    check_counts_refused("segment:n");
    check_counts_refused("snowflake:n");
}

/* ---- hostile answers ------------------------------------------------------------------------ */

/* One call on key against a node that answers only `answer`: refused, and no ID comes out. */
static void check_hostile(const char *key, const char *answer) {
    char err[256];
    node_a.hostile = answer;
    leafd_client *c = leafd_client_open(endpoint, "log=0;wait.ms=300;prefetch.min=5;prefetch.max=5",
                                        err, sizeof(err));
    CHECK(c != NULL);
    int64_t id = -1;
    int rc = leafd_client_next(c, key, &id);
    if (rc == 0) {
        fprintf(stderr, "  %s: took %lld from %.40s...\n", key, (long long)id, answer);
    }
    CHECK(rc != 0);
    leafd_client_close(c);
    node_a.hostile = NULL;
}

static void test_hostile_answers(void) {
    static const char *lengths[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: -8\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: +4\r\n\r\n1\n2\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 4x\r\n\r\n1\n2\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 2\r\n\r\n1\n2\n",
    };
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        check_hostile("segment:h", lengths[i]);
        check_hostile("snowflake:h", lengths[i]);
    }
    /* prefetch.min=prefetch.max=5: the library asks for 5; anything else is not the node's. */
    static char a[16][256];
    static const struct {
        const char *key, *body;
        int clen_delta; /* the Content-Length announced: the body's length plus this */
    } shapes[] = {
        {"snowflake:h", "7\n8\n9\n10\n11\n12\n", -3},    /* short: "12" cut to "1" */
        {"snowflake:h", "7\n8\n9\n10\n1", 0},            /* not ascending */
        {"snowflake:h", "7\n8\n\n9\n", 0},               /* an empty line */
        {"snowflake:h", "7\n8\n9\n10\n11\n12\n13\n", 0}, /* more than asked */
        {"snowflake:h", "7\n8\n0\n10\n11\n", 0},         /* 0 is no ID */
        {"segment:h", "{\"biz_tag\":\"h\",\"start\":\"1\",\"end\":\"900\"}", 0},
        {"segment:h", "{\"biz_tag\":\"h\",\"start\":\"1\",\"end\":\"5\"}", -8},
        {"segment:h", "{\"biz_tag\":\"h\",\"start\":\"0\",\"end\":\"4\"}", 0},
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        int len = (int)strlen(shapes[i].body);
        /* One buffer per answer: a connection of the previous handle may still be sending. */
        snprintf(a[i], sizeof(a[i]), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s",
                 len + shapes[i].clen_delta, shapes[i].body);
        check_hostile(shapes[i].key, a[i]);
    }
}

/* ---- one node's answer about one key ------------------------------------------------------- */

#define NOT_FOUND                                                                                  \
    "HTTP/1.1 404 Not Found\r\nContent-Length: 42\r\n\r\n"                                         \
    "{\"code\":\"unknown_tag\",\"message\":\"no such\"}"
#define BUSY_503                                                                                   \
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 38\r\n\r\n"                               \
    "{\"code\":\"overloaded\",\"message\":\"busy\"}"

/* A stale first endpoint (a node of another cluster, that does not know the tag) and a second
 * that serves: the calls are served. */
static void test_404_from_one_node_tries_the_next(void) {
    char eps[160], err[256];
    snprintf(eps, sizeof(eps), "%s,%s", node_a.endpoint, node_b.endpoint);
    node_a.hostile = NOT_FOUND;
    leafd_client *c = leafd_client_open(eps, "log=0;wait.ms=1000", err, sizeof(err));
    CHECK(c != NULL);
    int64_t ids[100];
    for (int i = 0; i < 20; i++) {
        CHECK_EQ_INT(leafd_client_next_many(c, "segment:stale", ids, 100), 0);
    }
    leafd_client_close(c);
    /* Every node says 404: the key is unknown. */
    node_b.hostile = NOT_FOUND;
    c = leafd_client_open(eps, "log=0;wait.ms=1000", err, sizeof(err));
    CHECK_EQ_INT(leafd_client_next(c, "segment:stale", ids), LEAFD_CLIENT_ENOTFOUND);
    leafd_client_close(c);
    node_a.hostile = node_b.hostile = NULL;
}

/* One node, a 503 about one key (a locked row of its tag): the node's other keys are served. */
static void test_503_about_one_key_spares_the_others(void) {
    char err[256];
    node_a.match = "/locked";
    node_a.hostile = BUSY_503;
    leafd_client *c = leafd_client_open(
        endpoint, "log=0;wait.ms=300;retry.min.ms=2000;retry.max.ms=4000", err, sizeof(err));
    CHECK(c != NULL);
    int64_t id;
    CHECK_EQ_INT(leafd_client_next(c, "segment:locked", &id), LEAFD_CLIENT_EUNAVAILABLE);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(leafd_client_next(c, "segment:ok", &id), 0);
    }
    leafd_client_close(c);
    node_a.hostile = NULL;
    node_a.match = NULL;
}

/* The first node hung, the second serving: with the default options, no call fails. */
static void test_hung_node_fails_no_call_by_default(void) {
    char eps[160], err[256];
    snprintf(eps, sizeof(eps), "%s,%s", node_a.endpoint, node_b.endpoint);
    node_a.hostile = HANG;
    leafd_client *c = leafd_client_open(eps, "log=0", err, sizeof(err));
    CHECK(c != NULL);
    char key[32];
    int64_t id;
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "segment:hung%d", i);
        CHECK_EQ_INT(leafd_client_next(c, key, &id), 0);
    }
    node_a.hostile = NULL;
    leafd_client_close(c);
}

/* A flood of unknown tags (1,000 keys the node answers 404 about, 2 ms each) beside one key
 * taken at a steady rate: the steady key's calls never fail while the refill asks about the
 * others. */
struct steady {
    leafd_client *c;
    _Atomic int stop;
    long ok, failed;
};

static void *steady_taker(void *arg) {
    struct steady *st = arg;
    int64_t id;
    while (!st->stop) {
        for (int i = 0; i < 20; i++) {
            if (leafd_client_next(st->c, "segment:steady", &id) == 0) {
                st->ok++;
            } else {
                st->failed++;
            }
        }
        usleep(1000);
    }
    return NULL;
}

static void test_unknown_tags_flood_spares_a_served_key(void) {
    char err[256], name[32];
    node_a.match = "/unk";
    node_a.hostile = NOT_FOUND;
    node_a.delay_us = 2000;
    leafd_client *c = leafd_client_open(
        endpoint, "log=0;wait.ms=300;prefetch.min=100;prefetch.max=400", err, sizeof(err));
    CHECK(c != NULL);
    struct steady st = {.c = c};
    int64_t id;
    CHECK_EQ_INT(leafd_client_next(c, "segment:steady", &id), 0);
    pthread_t t;
    pthread_create(&t, NULL, steady_taker, &st);
    usleep(200 * 1000);
    leafd_client_key *k;
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "segment:unk%d", i);
        CHECK_EQ_INT(leafd_client_key_get(c, name, &k), 0);
    }
    usleep(2500 * 1000);
    st.stop = 1;
    pthread_join(t, NULL);
    printf("  steady key beside 1,000 unknown tags: %ld IDs, %ld failed calls\n", st.ok, st.failed);
    CHECK_EQ_INT(st.failed, 0);
    leafd_client_close(c);
    node_a.hostile = NULL;
    node_a.match = NULL;
    node_a.delay_us = 0;
}

/* ---- what a failed call says ------------------------------------------------------------- */

struct lines {
    pthread_mutex_t lock;
    char last[512];
    int n;
};

static void log_line(void *arg, const char *line) {
    struct lines *l = arg;
    pthread_mutex_lock(&l->lock);
    snprintf(l->last, sizeof(l->last), "%s", line);
    l->n++;
    pthread_mutex_unlock(&l->lock);
}

static void test_error_text_and_log_callback(void) {
    char err[256], want[128];
    static struct lines lines = {.lock = PTHREAD_MUTEX_INITIALIZER};
    node_a.hostile = NOT_FOUND;
    leafd_client *c =
        leafd_client_open(endpoint, "wait.ms=1000;secret=hunter2;user=app", err, sizeof(err));
    CHECK(c != NULL);
    leafd_client_set_log(c, log_line, &lines);
    CHECK_EQ_STR(leafd_client_error(c), "");
    int64_t id, ids[2];
    CHECK_EQ_INT(leafd_client_next(c, "segment:gone", &id), LEAFD_CLIENT_ENOTFOUND);
    const char *text = leafd_client_error(c);
    printf("  leafd_client_error: %s\n", text);
    snprintf(want, sizeof(want), "%s refused segment:gone: 404 unknown_tag", endpoint + 7);
    CHECK(strstr(text, "segment:gone: unknown key") == text && strstr(text, want) != NULL);
    CHECK(strstr(text, "hunter2") == NULL);
    pthread_mutex_lock(&lines.lock);
    CHECK(lines.n >= 1 && strstr(lines.last, want) != NULL);
    pthread_mutex_unlock(&lines.lock);
    CHECK_EQ_INT(leafd_client_next_many(c, "segment:gone", ids, (size_t)-1), LEAFD_CLIENT_EINVAL);
    CHECK(strstr(leafd_client_error(c), "LEAFD_CLIENT_MANY_MAX") != NULL);
    CHECK_EQ_INT(leafd_client_next(c, "nokind:x", &id), LEAFD_CLIENT_EINVAL);
    CHECK(strstr(leafd_client_error(c), "\"nokind:x\"") != NULL);
    node_a.hostile = NULL;
    leafd_client_close(c);
}

/* ---- credentials ---------------------------------------------------------------------------- */

static void test_credentials(void) {
    char opts[1200], err[256];
    snprintf(opts, sizeof(opts), "log=0;wait.ms=300;user=%0511d;secret=%0511d", 1, 2);
    leafd_client *c = leafd_client_open(endpoint, opts, err, sizeof(err));
    CHECK(c != NULL);
    int64_t id;
    CHECK_EQ_INT(leafd_client_next(c, "segment:cred", &id), 0);
    leafd_client_close(c);
    /* secret.file=: the secret read from a file (a ';' in it needs no escape), one trailing
     * newline dropped; "app:s3;cr=t" in base64. */
    char path[] = "/tmp/leafd-client-secret-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "s3;cr=t\n", 8) == 8);
    close(fd);
    snprintf(opts, sizeof(opts), "log=0;wait.ms=1000;user=app;secret.file=%s", path);
    c = leafd_client_open(endpoint, opts, err, sizeof(err));
    CHECK(c != NULL);
    if (c != NULL) {
        CHECK_EQ_INT(leafd_client_next(c, "segment:credfile", &id), 0);
        pthread_mutex_lock(&node_lock);
        CHECK_EQ_STR(node_last_auth, "Authorization: Basic YXBwOnMzO2NyPXQ=");
        pthread_mutex_unlock(&node_lock);
        leafd_client_close(c);
    }
    unlink(path);
    c = leafd_client_open(endpoint, opts, err, sizeof(err));
    CHECK(c == NULL && strstr(err, path) != NULL);
    static const char *bad[] = {"token=abc\r\nX-Injected: 1", "token=abc\nX: 1",
                                "user=u\r\nX: 1;secret=s", "user=u;secret=s\r"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        c = leafd_client_open(endpoint, bad[i], err, sizeof(err));
        CHECK(c == NULL);
        if (c != NULL) {
            leafd_client_close(c);
        }
        CHECK(err[0] != '\0' && strstr(err, "abc") == NULL && strstr(err, "X-") == NULL);
    }
}

/* ---- key handles ----------------------------------------------------------------------------- */

/* n IDs strictly ascending, all above *last (segment: one handle, one thread); *last the top. */
static void check_ascending(const int64_t *ids, size_t n, int64_t *last) {
    for (size_t i = 0; i < n; i++) {
        if (ids[i] <= *last) {
            CHECK(ids[i] > *last);
            return;
        }
        *last = ids[i];
    }
}

/* Every call of <leafd/client.h> on a key handle: leafd_client_key_get() (the same handle for
 * the same name, EINVAL for a malformed key or a NULL, ENOMEM past keys.max),
 * leafd_client_key_next() and leafd_client_key_next_many() (IDs from the key's own buffer, shared
 * with the calls by name; EINVAL for a NULL or a count out of range; the nodes' refusal as by
 * name), leafd_client_key_waits() (0 before the first call, counted per key). */
static void test_key_handles(void) {
    char err[256];
    node_a.match = "/gonek";
    node_a.hostile = NOT_FOUND;
    leafd_client *c =
        leafd_client_open(endpoint, "log=0;wait.ms=2000;keys.max=4", err, sizeof(err));
    CHECK(c != NULL);
    if (c == NULL) {
        return;
    }
    leafd_client_key *k = NULL, *again = NULL, *sf = NULL, *gone = NULL, *other = NULL;
    CHECK_EQ_INT(leafd_client_key_get(c, "segment:handle", &k), 0);
    CHECK_EQ_INT(leafd_client_key_get(c, "segment:handle", &again), 0);
    CHECK(k != NULL && again == k);
    CHECK_EQ_INT(leafd_client_key_get(c, "snowflake:handle", &sf), 0);
    CHECK(sf != NULL && sf != k);
    static const char *const bad[] = {"nokind:x", "segment:", "segment:a b", "snowflake:a/b", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(leafd_client_key_get(c, bad[i], &other), LEAFD_CLIENT_EINVAL);
    }
    CHECK_EQ_INT(leafd_client_key_get(NULL, "segment:handle", &other), LEAFD_CLIENT_EINVAL);
    CHECK_EQ_INT(leafd_client_key_get(c, NULL, &other), LEAFD_CLIENT_EINVAL);
    CHECK_EQ_INT(leafd_client_key_get(c, "segment:handle", NULL), LEAFD_CLIENT_EINVAL);

    /* Nothing taken yet: no call waited. */
    CHECK_EQ_INT(leafd_client_key_waits(k), 0);
    CHECK_EQ_INT(leafd_client_key_waits(sf), 0);
    CHECK_EQ_INT(leafd_client_key_waits(NULL), 0);

    /* The first call waits at most once (key_get already woke the refill, which may have filled
     * the buffer first); the IDs ascend across the handle's calls and the calls by name on the
     * same key, which share its buffer. */
    int64_t id = 0, last = 0, ids[50];
    CHECK_EQ_INT(leafd_client_key_next(k, &id), 0);
    check_ascending(&id, 1, &last);
    CHECK(leafd_client_key_waits(k) <= 1);
    CHECK_EQ_INT(leafd_client_key_waits(sf), 0);
    for (int i = 0; i < 100; i++) {
        CHECK_EQ_INT(leafd_client_key_next(k, &id), 0);
        check_ascending(&id, 1, &last);
    }
    CHECK_EQ_INT(leafd_client_key_next_many(k, ids, 50), 0);
    check_ascending(ids, 50, &last);
    CHECK_EQ_INT(leafd_client_next(c, "segment:handle", &id), 0);
    check_ascending(&id, 1, &last);
    CHECK_EQ_INT(leafd_client_key_next(k, &id), 0);
    check_ascending(&id, 1, &last);
    CHECK(leafd_client_key_waits(k) >= 1 && leafd_client_key_waits(k) <= 4);

    /* A snowflake key: its IDs are the node's batches, each once. */
    CHECK_EQ_INT(leafd_client_key_next(sf, &id), 0);
    CHECK_EQ_INT(leafd_client_key_next_many(sf, ids, 50), 0);
    for (int i = 0; i < 50; i++) {
        CHECK(ids[i] != id);
    }
    CHECK(leafd_client_key_waits(sf) <= 2);

    /* Refused arguments, before anything is taken. */
    CHECK_EQ_INT(leafd_client_key_next(NULL, &id), LEAFD_CLIENT_EINVAL);
    CHECK_EQ_INT(leafd_client_key_next(k, NULL), LEAFD_CLIENT_EINVAL);
    CHECK_EQ_INT(leafd_client_key_next_many(NULL, ids, 1), LEAFD_CLIENT_EINVAL);
    CHECK_EQ_INT(leafd_client_key_next_many(k, NULL, 1), LEAFD_CLIENT_EINVAL);
    CHECK_EQ_INT(leafd_client_key_next_many(k, ids, 0), LEAFD_CLIENT_EINVAL);
    CHECK_EQ_INT(leafd_client_key_next_many(k, ids, LEAFD_CLIENT_MANY_MAX + 1),
                 LEAFD_CLIENT_EINVAL);
    CHECK_EQ_INT(leafd_client_key_next(k, &id), 0);
    check_ascending(&id, 1, &last);

    /* A key the nodes do not know: the handle's calls answer what the calls by name do. */
    CHECK_EQ_INT(leafd_client_key_get(c, "segment:gonek", &gone), 0);
    CHECK_EQ_INT(leafd_client_key_next(gone, &id), LEAFD_CLIENT_ENOTFOUND);
    CHECK_EQ_INT(leafd_client_key_next_many(gone, ids, 5), LEAFD_CLIENT_ENOTFOUND);
    CHECK(strstr(leafd_client_error(c), "segment:gonek: unknown key") != NULL);
    /* Each of the two calls found the buffer empty and waited for the refill: counted once. */
    CHECK_EQ_INT(leafd_client_key_waits(gone), 2);

    /* keys.max=4: a fourth key is taken, a fifth refused; the keys already held still serve. */
    CHECK_EQ_INT(leafd_client_key_get(c, "segment:fourth", &other), 0);
    CHECK_EQ_INT(leafd_client_key_get(c, "segment:fifth", &other), LEAFD_CLIENT_ENOMEM);
    CHECK_EQ_INT(leafd_client_key_get(c, "segment:handle", &again), 0);
    CHECK(again == k);
    CHECK_EQ_INT(leafd_client_key_next(k, &id), 0);
    check_ascending(&id, 1, &last);
    leafd_client_close(c);
    node_a.hostile = NULL;
    node_a.match = NULL;
}

/* Every test, or the one named on the command line (a name's start is enough). */
#define ONE(fn)                                                                                    \
    if (argc < 2 || strncmp(#fn, argv[1], strlen(argv[1])) == 0)                                   \
    TEST(fn)

int main(int argc, char **argv) {
    CHECK(fake_node(&node_a) == 0 && fake_node(&node_b) == 0);
    ONE(test_counts_a_caller_cannot_have);
    ONE(test_hostile_answers);
    ONE(test_credentials);
    ONE(test_404_from_one_node_tries_the_next);
    ONE(test_503_about_one_key_spares_the_others);
    ONE(test_hung_node_fails_no_call_by_default);
    ONE(test_error_text_and_log_callback);
    ONE(test_unknown_tags_flood_spares_a_served_key);
    ONE(test_fork_child_never_hands_out_the_parents_ids);
    ONE(test_key_handles);
    return unit_done();
}
