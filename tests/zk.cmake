# ZooKeeper worker IDs and clock safety across restarts.
leaf_unit_test(test_zk_core leaf_zk_core)
leaf_unit_test(test_zk_region leaf_zk_core)

# zk_expire: forces a leafd session to expire (a second handle with the same
# session id, then closed). Used by tests/integration/test_zk_expiry.py.
add_executable(zk_expire tools/zk_expire.c)
target_link_libraries(zk_expire PRIVATE zk_client)

# leaf_zk_integration_test (tests/CMakeLists.txt) gives a test ZK_EXPIRE_BIN.
foreach(t restart expiry clock peers ensemble outage names lost one_session lead forever_fence acl tenants)
  leaf_zk_integration_test(test_zk_${t})
endforeach()
foreach(t clock peers lead)
  leaf_clock_test(test_zk_${t})
endforeach()
leaf_test_cost(it.test_zk_tenants 44)
leaf_integration_test(test_zk_pause)
