# Lease mode (contract section 12, issue 14): real ZooKeeper, real binaries.
# Uses leaf_zk_integration_test from zk.cmake (included before this file).

# zk_fill: registers many forever-mode identities at once (the exhaustion test).
add_executable(zk_fill tools/zk_fill.c)
target_link_libraries(zk_fill PRIVATE zk_client)

foreach(t claims exhaustion partition clock migration)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_zk_lease_${t}.py)
    leaf_zk_integration_test(test_zk_lease_${t})
    set_property(TEST it.test_zk_lease_${t} APPEND PROPERTY ENVIRONMENT "ZK_FILL_BIN=$<TARGET_FILE:zk_fill>")
  endif()
endforeach()
