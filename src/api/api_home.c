/*
 * The home region of a sequence, keyed space or numbering being created
 * (docs/regions.md, "Homes"): with leafd.region.count > 1 the creation JSON may
 * name its home ("region", default this node's). Another region's name is
 * redirected there (307, the body resent by the client); this region's is
 * claimed in the registry first (the region thread asks, this handler looks
 * again), so that no name is ever homed in two regions. With one region
 * nothing is read or claimed.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "door_http.h"
#include "sbuf.h"

#define HOME_CLAIM_POLL_MS 20
#define HOME_CLAIM_WAIT_MS 5000

/* The body's "region" into buf (this node's region when absent): 1, else 0 (answered 400). */
static int home_region(struct http_request *req, char *buf, size_t cap) {
    const struct leaf_config *cfg = door_ctx(req)->cfg;
    cJSON *root = door_http_body(req);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "region");
    int ok = r == NULL ||
             (cJSON_IsString(r) && zk_region_name_ok(r->valuestring, strlen(r->valuestring)));
    snprintf(buf, cap, "%s", r != NULL && ok ? r->valuestring : cfg->region);
    cJSON_Delete(root);
    if (!ok) {
        door_http_error(req, DOOR_E_BAD_REQUEST,
                        "\"region\" is a region's name: 1 to 63 bytes of [A-Za-z0-9._-]");
    }
    return ok;
}

void api_redirect(struct http_request *req, const char *http, const char *code, const char *key,
                  const char *value) {
    struct sbuf hdr = SBUF_INIT, body = SBUF_INIT;
    sbuf_printf(&hdr, "Location: http://%s%.*s\r\n", http, (int)req->path_len, req->path);
    sbuf_printf(&body, "{\"code\":\"%s\",\"%s\":", code, key);
    sbuf_json_str(&body, value, strlen(value));
    sbuf_puts(&body, ",\"location\":");
    sbuf_json_str(&body, http, strlen(http));
    sbuf_putc(&body, '}');
    if (hdr.failed || body.failed) {
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, NULL);
    } else {
        http_respond_ex(req, 307, "application/json", hdr.data, body.data, body.len);
    }
    sbuf_free(&hdr);
    sbuf_free(&body);
}

leaf_status_t api_home_create(struct http_request *req, enum zk_region_kind k, const char *name,
                              enum door_error exists) {
    const struct door_ctx *ctx = door_ctx(req);
    if (ctx->cfg->region_count <= 1) {
        return LEAF_OK;
    }
    char region[ZK_REGION_NAME_MAX];
    struct region_service_home home;
    if (!home_region(req, region, sizeof(region))) {
        return LEAF_ERR;
    }
    if (strcmp(region, ctx->cfg->region) != 0) {
        if (region_service_peer(ctx->region, region, &home)) {
            /* the same path: a client resends the POST and its body there */
            api_redirect(req, home.http, "home_region", "region", home.region);
        } else {
            char why[200];
            snprintf(why, sizeof(why),
                     "region %s is neither this node's (%s) nor one of "
                     "leafd.region.peers",
                     region, ctx->cfg->region);
            door_http_error(req, DOOR_E_BAD_REQUEST, why);
        }
        return LEAF_ERR;
    }
    switch (region_service_home(ctx->region, k, name, strlen(name), 1, &home)) {
    case REGION_HOME_HERE: return LEAF_OK;
    case REGION_HOME_PENDING:
        if (http_request_now(req) - req->first_seen_ms <= HOME_CLAIM_WAIT_MS) {
            req->retry_ms = HOME_CLAIM_POLL_MS;
            return LEAF_EAGAIN;
        }
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "the registry (leafd.region.registry.zk.address) did not confirm the "
                        "home in time");
        return LEAF_ERR;
    default: {
        char why[200];
        snprintf(why, sizeof(why), "%s %s is homed in region %s", zk_region_kind_name(k), name,
                 home.region);
        door_http_error(req, exists, why);
        return LEAF_ERR;
    }
    }
}
