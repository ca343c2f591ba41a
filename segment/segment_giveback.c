#include "segment_giveback.h"

#include <string.h>

leaf_status_t segment_giveback_build(const struct segment_buffer *b, const char *tag,
                                     size_t tag_len, struct segment_giveback *out) {
    if (!validate_tag(tag, tag_len)) {
        return LEAF_EINVAL;
    }
    int64_t first, last;
    if (!segment_buffer_unused_tail(b, &first, &last)) {
        return LEAF_ENOTFOUND;
    }
    out->sql = SEGMENT_GIVEBACK_SQL;
    out->new_max = first;
    memcpy(out->biz_tag, tag, tag_len);
    out->biz_tag[tag_len] = '\0';
    out->expected_max = last;
    out->ids = last - first;
    return LEAF_OK;
}
