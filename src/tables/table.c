#include "table.h"

#include "command_outcome.h"
#include "table_http.h"
#include "table_resp.h"

leaf_status_t table_metrics_create(struct metrics **out) {
    struct metrics_names names = {0};
    names.nroutes = table_http_names(names.routes, METRICS_MAX_ROUTES);
    names.ncommands = table_resp_names(names.commands, METRICS_MAX_COMMANDS);
    table_http_kinds(names.route_ids, METRICS_MAX_ROUTES);
    table_resp_kinds(names.command_ids, METRICS_MAX_COMMANDS);
    names.noutcomes = command_outcome_names(names.outcomes, METRICS_MAX_OUTCOMES);
    return metrics_create(out, &names);
}
