# Segment IDs: unit tests of the pure parts, and integration tests
# against a real MariaDB started by the harness.
leaf_unit_test(test_segment_buffer leaf_segment_core)
leaf_unit_test(test_segment_giveback leaf_segment_core)
leaf_unit_test(test_segment_region leaf_segment_core)
leaf_unit_test(test_segment_request leaf_segment_request)
leaf_integration_test(test_segment_basic)
leaf_integration_test(test_segment_admin)
leaf_integration_test(test_segment_init_cache)
leaf_integration_test(test_segment_multinode)
leaf_integration_test(test_segment_outage)
leaf_integration_test(test_segment_delete)
leaf_unit_test(test_segment_opaque leaf_segment_opaque)
leaf_integration_test(test_segment_hang)
leaf_unit_test(test_segment_known leaf_segment_core)
leaf_unit_test(test_segment_hosts leaf_segment_core leaf_config)
leaf_integration_test(test_segment_flood)
leaf_integration_test(test_segment_scale)
# Three Galera members, two nodes, kill -9 / clean stop / rejoin. RUN_SERIAL: its checks are
# timings of Galera's own failure detection (2 s), which a test beside it on two cores stretches.
leaf_integration_test(test_segment_galera)
set_tests_properties(it.test_segment_galera PROPERTIES RUN_SERIAL TRUE)
