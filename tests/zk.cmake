# ZooKeeper worker IDs and clock safety across restarts.
leaf_unit_test(test_zk_core leaf_zk_core)
# Worker-ID leases: slot choice, fence arithmetic, clock-step switch (issue 14).
leaf_unit_test(test_zk_lease leaf_zk_core)

# zk_expire: forces a leafd session to expire (a second handle with the same
# session id, then closed). Used by tests/integration/test_zk_expiry.py.
add_executable(zk_expire tools/zk_expire.c)
target_link_libraries(zk_expire PRIVATE zk_client)

function(leaf_zk_integration_test name)
  leaf_integration_test(${name})
  set_property(TEST it.${name} APPEND PROPERTY ENVIRONMENT "ZK_EXPIRE_BIN=$<TARGET_FILE:zk_expire>")
  set_property(TEST it.${name} APPEND PROPERTY LABELS zk)
endfunction()

foreach(t restart expiry clock peers ensemble outage names lost one_session lead forever_fence acl tenants)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_zk_${t}.py)
    leaf_zk_integration_test(test_zk_${t})
  endif()
endforeach()
leaf_integration_test(test_zk_pause)
