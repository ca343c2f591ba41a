# libleafd-client (src/client): unit tests of its pure parts, and integration tests of the
# library against real nodes and MariaDB, driven by tests/tools/client_load.c (a program that
# takes IDs from the library in threads and checks them) and by the Python binding.
leaf_unit_test(test_client leaf_client_core Threads::Threads)
# The by-name calls on the real library, against a loopback port that refuses connections.
leaf_unit_test(test_client_names leafd_client_static)
# The real library against a fake node in a thread of the test: fork, counts, hostile answers.
leaf_unit_test(test_client_fake leafd_client_static)
# The error codes: one table in <leafd/client.h>; the Python binding and the manual page list the
# same codes with the same numbers (read from the source tree).
leaf_unit_test(test_client_codes leafd_client_static)
target_compile_definitions(test_client_codes PRIVATE LEAF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# The library accepts exactly the keys the daemon's rule accepts (src/base/validate.c), for every
# mode of src/ids.
leaf_unit_test(test_client_keys leafd_client_static leaf_ids leaf_base)
# Strict keys (sequence, keyed): the batches' pure rules, and the real library against a fake
# sequence node: shared round trips, arrival order, strict.wait.us, EORDER, redirects, 503.
leaf_unit_test(test_client_strict leafd_client_static)
target_include_directories(test_client_strict PRIVATE ${PROJECT_SOURCE_DIR}/src/client
                           ${PROJECT_SOURCE_DIR}/src/ids)
set_property(TEST unit.test_client unit.test_client_names unit.test_client_fake
             unit.test_client_codes unit.test_client_keys unit.test_client_strict
             APPEND PROPERTY LABELS client)
# The built shared library exports exactly the functions of src/client/exports.txt (nm -D;
# tools/checks/check-exports --library).
add_test(NAME lint.client_exports COMMAND ${PROJECT_SOURCE_DIR}/tools/checks/check-exports
         --library $<TARGET_FILE:leafd_client> ${PROJECT_SOURCE_DIR})
set_tests_properties(lint.client_exports PROPERTIES TIMEOUT 30 LABELS "client;lint")
add_executable(client_load tools/client_load.c)
target_link_libraries(client_load PRIVATE leafd_client)
# The strict keys' driver, shared with tools/bench strict: threads calling, histories for the order
# checker (tests/lib/ordercheck.py).
add_executable(bench_strict ${PROJECT_SOURCE_DIR}/tools/benchmarks/bench-strict.c)
target_link_libraries(bench_strict PRIVATE leafd_client)
function(leaf_client_test name)
  leaf_integration_test(${name})
  set_property(TEST it.${name} APPEND PROPERTY ENVIRONMENT
    "CLIENT_LOAD_BIN=$<TARGET_FILE:client_load>;LIBLEAFD_CLIENT=$<TARGET_FILE:leafd_client>"
    "STRICT_LOAD_BIN=$<TARGET_FILE:bench_strict>")
  set_property(TEST it.${name} APPEND PROPERTY LABELS client)
endfunction()
leaf_client_test(test_client_failover)
leaf_client_test(test_client_restart)
leaf_client_test(test_client_outage)
leaf_client_test(test_client_python)
leaf_client_test(test_client_auth)
leaf_client_test(test_client_fakenode)
# Strict keys through the real cluster: 64 threads in 2 processes on one sequence through a kill -9
# of the primary; and on 10,000 keys of a keyed space on two sharded owners through a kill -9 of
# one. Every call through the order checker; failures only inside the failover window.
leaf_client_test(test_client_strict_failover)
set_property(TEST it.test_client_strict_failover APPEND PROPERTY LABELS sequence)
leaf_client_test(test_client_strict_sharded)
set_property(TEST it.test_client_strict_sharded APPEND PROPERTY LABELS sequence)
# 64 caller threads and two nodes each: two processors, as it.test_keyed_sharded.
set_tests_properties(it.test_client_strict_failover it.test_client_strict_sharded
                     PROPERTIES PROCESSORS 2)
