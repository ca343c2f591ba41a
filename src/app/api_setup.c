#include "api_setup.h"

#include "resp_api.h"
#include "resp_outcome.h"
#include "router.h"

leaf_status_t api_setup_metrics(struct metrics **out) {
    struct metrics_names names = {0};
    names.nroutes = router_names(names.routes, METRICS_MAX_ROUTES);
    names.ncommands = resp_api_command_names(names.commands, METRICS_MAX_COMMANDS);
    router_kinds(names.route_ids, METRICS_MAX_ROUTES);
    resp_api_command_kinds(names.command_ids, METRICS_MAX_COMMANDS);
    names.noutcomes = resp_outcome_names(names.outcomes, METRICS_MAX_OUTCOMES);
    return metrics_create(out, &names);
}
