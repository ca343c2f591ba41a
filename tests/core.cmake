# The tests whose names name no other area (tests/CMakeLists.txt says the rule):
# the pure parts of src/ (config parsing, input validation), the route table, the
# command line, TLS and secrets, and the quick tier's smoke run of every mode.
leaf_unit_test(test_config leaf_config)
leaf_unit_test(test_validate leaf_base)
leaf_unit_test(test_base leaf_base)
# The count of connections per client address (src/net/net_peercount.c), pure.
leaf_unit_test(test_net_peercount leaf_net_peercount)
# The ID mode table (src/ids), built with one test-only row: what a new mode costs.
leaf_unit_test(test_ids_mode leaf_base)
target_include_directories(test_ids_mode PRIVATE ${PROJECT_SOURCE_DIR}/src/ids)
# The pure parts of the security work: TLS and secret keys, database TLS modes, secret files,
# the failed-authentication limit.
leaf_unit_test(test_security leaf_config leaf_auth_core)
# The node's ID-shape configuration (layouts, opaque IDs, ranges).
leaf_unit_test(test_node_config leaf_node_config)
# The parked jobs of the node's services (src/node/common/node_jobs.c).
leaf_unit_test(test_node_jobs leaf_node_jobs)
# The route table with its handlers on a real API context (tests/support/api_fixture.c).
leaf_unit_test(test_api leaf_api_fixture)
# The daemon's table of objects: built forward, unwound backward from the step that failed.
leaf_unit_test(test_daemon_table leaf_daemon_table)

# The command line and configuration files of the real binary.
leaf_integration_test(test_cli_config)
# Security review findings over real clients: CSRF, pages, audit, tenants, /metrics.
leaf_integration_test(test_security)
# TLS for clients, secrets from files, the failed-authentication limit.
leaf_resp_test(test_tls)
leaf_integration_test(test_tls_hardening)
# Database TLS from leaf.jdbc.url (sslMode, useSSL/requireSSL) against MariaDB with and without TLS.
leaf_integration_test(test_db_tls)
leaf_integration_test(test_db_mitm)
# The quick tier's smoke run: one node with every mode on, real ZooKeeper and MariaDB.
leaf_integration_test(test_smoke_modes)
# The in-place binary upgrade (kill -USR2) under HTTP, redis-py and sequence load.
leaf_resp_test(test_reload_inplace)
# The in-place upgrade in a cluster: the sequence primary stays primary (ioredis, HTTPS, a
# sequence client), and a lease-mode node keeps its slot.
leaf_resp_test(test_reload_cluster)
# The in-place upgrade of sharded sequence nodes: each keeps its election node, its owner node
# and its slots (the map's epoch the same), under clients that follow redirects.
leaf_resp_test(test_reload_sharded)
# Two upgrades in a row, the second SIGUSR2 sent to the new process while it starts: held until
# it accepts, under HTTP, redis-py, pipelined RESP and sequence load.
leaf_resp_test(test_reload_twice)
# ZooKeeper stopped at SIGUSR2 (refused, still serving) and paused across the hand-over (the new
# process waits for it): an upgrade never leaves the node down.
leaf_resp_test(test_reload_zk_trouble)
# The old process killed during the hand-over: the new one carries on alone, and says so.
leaf_resp_test(test_reload_old_killed)
# The new process killed after it adopted the listeners, before the hand-over: the old one serves on,
# says so, and a later upgrade goes through.
leaf_resp_test(test_reload_new_killed)
# Signals during an upgrade's hand-over (SIGTERM and SIGHUP to the draining old process, leafctl
# stop) and clients that never read during one: the accept gap stays short.
leaf_resp_test(test_reload_signals)
# Two regions (docs/regions.md), each its own ZooKeeper and MariaDB, and the registry: no ID
# twice across the regions in any mode, the registry stopped under load, cached and refused claims.
leaf_integration_test(test_regions)
leaf_test_cost(it.test_regions 40)
# Home regions (docs/regions.md, "Homes"): sequences homed in one region, redirected (307,
# -MOVED) from the other, the IDs in order through the order checker; the link between the
# regions cut: 503 home_region_unreachable, snowflake and segment unharmed.
leaf_integration_test(test_region_homes)
leaf_test_cost(it.test_region_homes 30)
# The cut between two regions, measured (docs/regions.md, "A cut between regions"): two nodes
# per region, a 40 ms link, 60 s of snowflake, segment, UUIDv7 and sequence clients in both with
# the link cut for the middle 30 s and the registry unreachable for 10 s of it: no duplicate, no
# failure but us's 503 home_region_unreachable, the sequence's order through the order checker.
# Five servers, four nodes and a 60 s run: one heavy test at a time.
leaf_integration_test(test_region_cut)
leaf_heavy_test(it.test_region_cut 70)
# Moving a sequence's home (docs/regions.md, "Moving a home"): leafctl region move under clients
# in both regions, the old home fenced by its mark, the IDs in order through the order checker.
leaf_integration_test(test_region_move)
leaf_test_cost(it.test_region_move 25)
