# Lease mode: real ZooKeeper, real binaries.
# Worker-ID leases, pure: slot choice, fence arithmetic, clock-step switch.
leaf_unit_test(test_zk_lease leaf_zk_core)

# zk_fill: registers many forever-mode identities at once (the exhaustion test).
add_executable(zk_fill tools/zk_fill.c)
target_link_libraries(zk_fill PRIVATE zk_client)

foreach(t claims exhaustion partition clock migration lead all_held)
  leaf_zk_integration_test(test_zk_lease_${t})
  set_property(TEST it.test_zk_lease_${t} APPEND PROPERTY ENVIRONMENT "ZK_FILL_BIN=$<TARGET_FILE:zk_fill>")
endforeach()
leaf_clock_test(test_zk_lease_clock)
leaf_clock_test(test_zk_lease_lead)

# The full exhaustion run: 1,100 successive forever-mode nodes and
# 2,000 successive lease-mode starts, every one a real leafd process. Under
# the sanitizers a start costs three times the CPU of a release build's, and
# 3,100 of them would not fit in a minute on two cores, so this entry runs a
# release build of the same sources (built here, in release/, with the test
# build); it.test_zk_lease_exhaustion above runs the same script, smaller,
# under ASan. A heavy test (leaf_heavy_test): it keeps both cores busy for its whole run.
# (tools/checks/tsan leaves both out: the ThreadSanitizer tree builds no release copy.)
if(LEAFD_SANITIZE)
  include(ExternalProject)
  ExternalProject_Add(leafd_release
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${CMAKE_BINARY_DIR}/release
    CMAKE_ARGS -DCMAKE_BUILD_TYPE=Release -DLEAFD_TESTS=OFF
    BUILD_ALWAYS ON
    INSTALL_COMMAND ""
    BUILD_BYPRODUCTS ${CMAKE_BINARY_DIR}/release/leafd)
  set(leafd_release_bin ${CMAKE_BINARY_DIR}/release/leafd)
else()
  set(leafd_release_bin $<TARGET_FILE:leafd>)
endif()
add_test(NAME it.test_zk_lease_exhaustion_full
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_zk_lease_exhaustion.py)
set_tests_properties(it.test_zk_lease_exhaustion_full PROPERTIES TIMEOUT 400
  LABELS "integration;zk"
  ENVIRONMENT "LEAFD_BIN=${leafd_release_bin};ZK_FILL_BIN=$<TARGET_FILE:zk_fill>;PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib;PYTHONDONTWRITEBYTECODE=1;EXHAUSTION=full")
leaf_heavy_test(it.test_zk_lease_exhaustion_full 40)
