# libleafd-client (src/client): unit tests of its pure parts, and integration tests of the
# library against real nodes and MariaDB, driven by tests/tools/client_load.c (a program that
# takes IDs from the library in threads and checks them) and by the Python binding.
leaf_unit_test(test_client leaf_client_core Threads::Threads)
add_executable(client_load tools/client_load.c)
target_link_libraries(client_load PRIVATE leafd_client)
function(leaf_client_test name)
  leaf_integration_test(${name})
  set_property(TEST it.${name} APPEND PROPERTY ENVIRONMENT
    "CLIENT_LOAD_BIN=$<TARGET_FILE:client_load>;LIBLEAFD_CLIENT=$<TARGET_FILE:leafd_client>")
  set_property(TEST it.${name} APPEND PROPERTY LABELS client)
endfunction()
leaf_client_test(test_client_failover)
leaf_client_test(test_client_restart)
leaf_client_test(test_client_outage)
leaf_client_test(test_client_python)
leaf_client_test(test_client_auth)
