# Lease mode (contract section 12, issue 14): real ZooKeeper, real binaries.
# Uses leaf_zk_integration_test from zk.cmake (included before this file).
foreach(t claims exhaustion partition clock migration)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_zk_lease_${t}.py)
    leaf_zk_integration_test(test_zk_lease_${t})
  endif()
endforeach()
