/*
 * The admin API of contract section 3 (POST /api/leaf, PUT /api/leaf/init/cache,
 * PUT /api/leaf/step) and the /db monitor page, all behind the admin rule of
 * section 2: with leafd.admin.token set, `Authorization: Bearer <token>` is
 * required (401 when missing, 403 when wrong); without one, only loopback
 * clients are answered (others 403).
 *
 * Each needs one database round trip: the first call checks the request and
 * queues a job (segment_service_admin_begin, keyed by the request); later
 * calls (req->retries > 0) poll for the result and answer. Tags are checked
 * before anything reaches the database.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "segment_request.h"
#include "api.h"
#include "leafd.h"
#include "log.h"
#include "segment_service.h"

#define ADMIN_RETRY_MS 1
#define ADMIN_EXTRA_WAIT_MS 1000 /* on top of leafd.db.timeout.ms */

typedef void (*admin_answer_fn)(struct http_request *req, struct segment_db_job *job);

/* Constant-time comparison, so the token cannot be guessed byte by byte. */
static int admin_token_equal(const char *a, size_t alen, const char *b, size_t blen) {
    unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < alen && i < blen; i++) {
        diff |= (unsigned char)(a[i] ^ b[i]);
    }
    return diff == 0;
}

int api_admin_allowed(struct http_request *req) {
    const char *token = leafd.cfg.admin_token;
    static const char bearer[] = "Bearer ";
    size_t blen = sizeof(bearer) - 1;
    if (token[0] == '\0') {
        if (req->loopback) {
            return 1;
        }
        http_respond_error(req, 403, "forbidden",
                           "admin endpoints answer loopback clients only (no leafd.admin.token)");
        return 0;
    }
    if (req->auth_len == 0) {
        http_respond_error(req, 401, "unauthorized",
                           "admin endpoints need 'Authorization: Bearer <token>'");
        return 0;
    }
    if (req->auth_len < blen || strncasecmp(req->auth, bearer, blen) != 0 ||
        !admin_token_equal(req->auth + blen, req->auth_len - blen, token, strlen(token))) {
        http_respond_error(req, 403, "forbidden", "wrong admin token");
        return 0;
    }
    return 1;
}

static int admin_segment_enabled(struct http_request *req) {
    if (!leafd.cfg.segment_enable) {
        http_respond_error(req, 503, "segment_disabled", "segment mode is disabled on this node");
        return 0;
    }
    return 1;
}

/* Writes s as a JSON string (with quotes) at dst; returns the length. cap >= 6 * strlen + 3. */
size_t api_json_string(char *dst, const char *s) {
    size_t n = 0;
    dst[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            dst[n++] = '\\';
            dst[n++] = (char)*p;
        } else if (*p < 0x20) {
            n += (size_t)sprintf(dst + n, "\\u%04x", *p);
        } else {
            dst[n++] = (char)*p;
        }
    }
    dst[n++] = '"';
    return n;
}

static void admin_db_error(struct http_request *req, struct segment_db_job *job) {
    if (job->rc == LEAF_EUNAVAIL) {
        http_respond_error(req, 503, "database_unavailable", "the database is unavailable");
    } else if (job->rc == LEAF_ENOTFOUND) {
        http_respond_error(req, 404, "unknown_tag", "no such biz_tag in leaf_alloc");
    } else {
        log_error("segment", "admin operation on tag '%s' failed: %s", job->tag, job->error);
        http_respond_error(req, 500, "database_error", "the database refused the operation");
    }
}

/* Later calls: answers once the job is back, or 503 when it takes too long. */
static leaf_status_t admin_wait(struct http_request *req, admin_answer_fn answer) {
    struct segment_db_job *job = NULL;
    leaf_status_t rc = segment_service_admin_poll(req, &job);
    if (rc == LEAF_OK) {
        answer(req, job);
        segment_db_job_free(job);
        return LEAF_OK;
    }
    int64_t waited = http_loop_now(req->loop) - req->first_seen_ms;
    if (rc == LEAF_EAGAIN && waited < leafd.cfg.db_timeout_ms + ADMIN_EXTRA_WAIT_MS) {
        req->retry_ms = ADMIN_RETRY_MS;
        return LEAF_EAGAIN;
    }
    segment_service_admin_abandon(req);
    http_respond_error(req, 503, "database_unavailable", "the database did not answer in time");
    return LEAF_OK;
}

/* First call: queues the job for this request. */
static leaf_status_t admin_start(struct http_request *req, struct segment_db_job *job) {
    if (job == NULL) {
        http_respond_error(req, 500, "out_of_memory", "out of memory");
        return LEAF_OK;
    }
    if (segment_service_admin_begin(req, job) != LEAF_OK) {
        segment_db_job_free(job);
        http_respond_error(req, 503, "busy", "too many admin requests in flight");
        return LEAF_OK;
    }
    req->retry_ms = ADMIN_RETRY_MS;
    return LEAF_EAGAIN;
}

/* Checks the caller and parses the body; NULL when an error response was written. */
static struct segment_db_job *admin_job(struct http_request *req, enum segment_request_kind kind,
                                        enum segment_db_op op, struct segment_request *r) {
    const char *code;
    char msg[160];
    if (!api_admin_allowed(req) || !admin_segment_enabled(req)) {
        return NULL;
    }
    if (segment_request_parse(kind, req->body, req->body_len, r, &code, msg, sizeof(msg)) !=
        LEAF_OK) {
        http_respond_error(req, 400, code, msg);
        return NULL;
    }
    struct segment_db_job *job = segment_db_job_new(op, r->biz_tag, strlen(r->biz_tag));
    if (job == NULL) {
        http_respond_error(req, 500, "out_of_memory", "out of memory");
        return NULL;
    }
    job->step = r->step;
    job->max_id = r->max_id;
    job->has_description = r->has_description;
    snprintf(job->description, sizeof(job->description), "%s", r->description);
    return job;
}

static void answer_create(struct http_request *req, struct segment_db_job *job) {
    if (job->rc == LEAF_EEXIST) {
        http_respond_error(req, 409, "tag_exists", "biz_tag already exists in leaf_alloc");
        return;
    }
    if (job->rc != LEAF_OK) {
        admin_db_error(req, job);
        return;
    }
    char body[sizeof(job->description) * 6 + 512];
    int n = snprintf(body, sizeof(body),
                     "{\"biz_tag\":\"%s\",\"max_id\":%" PRId64 ",\"step\":%" PRId64
                     ",\"description\":",
                     job->tag, job->max_id, job->step);
    size_t len = (size_t)n;
    if (job->has_description) {
        len += api_json_string(body + len, job->description);
    } else {
        len += (size_t)sprintf(body + len, "null");
    }
    body[len++] = '}';
    http_respond(req, 201, "application/json", body, len);
}

/*
 * The shape of every admin endpoint: parse, check and queue the database job
 * on the first call; on later calls (LEAF_EAGAIN retries) answer once it is done.
 */
static leaf_status_t admin_handle(struct http_request *req, enum segment_request_kind kind,
                                  enum segment_db_op op,
                                  admin_answer_fn answer) {
    struct segment_request r;
    if (req->retries > 0) {
        return admin_wait(req, answer);
    }
    struct segment_db_job *job = admin_job(req, kind, op, &r);
    return job == NULL ? LEAF_OK : admin_start(req, job);
}

leaf_status_t api_admin_create(struct http_request *req) {
    return admin_handle(req, SEGMENT_REQ_CREATE, SEGMENT_DB_CREATE, answer_create);
}

static void answer_init_cache(struct http_request *req, struct segment_db_job *job) {
    if (job->rc != LEAF_OK) {
        admin_db_error(req, job);
        return;
    }
    char body[512];
    int n = snprintf(body, sizeof(body), "{\"biz_tag\":\"%s\",\"step\":%" PRId64 ",\"loaded\":true}",
                     job->tag, job->row_step);
    http_respond(req, 200, "application/json", body, (size_t)n);
}

leaf_status_t api_admin_init_cache(struct http_request *req) {
    return admin_handle(req, SEGMENT_REQ_TAG, SEGMENT_DB_LOOKUP, answer_init_cache);
}

static void answer_step(struct http_request *req, struct segment_db_job *job) {
    if (job->rc != LEAF_OK) {
        admin_db_error(req, job);
        return;
    }
    char body[512];
    int n = snprintf(body, sizeof(body), "{\"biz_tag\":\"%s\",\"step\":%" PRId64 "}", job->tag,
                     job->step);
    http_respond(req, 200, "application/json", body, (size_t)n);
}

leaf_status_t api_admin_step(struct http_request *req) {
    return admin_handle(req, SEGMENT_REQ_STEP, SEGMENT_DB_SET_STEP, answer_step);
}
