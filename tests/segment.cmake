# Segment IDs: unit tests of the pure parts, and integration tests
# against a real MariaDB started by the harness.
leaf_unit_test(test_segment_buffer leaf_segment_core)
leaf_unit_test(test_segment_giveback leaf_segment_core)
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
leaf_integration_test(test_segment_flood)
leaf_integration_test(test_segment_scale)
# Database TLS from leaf.jdbc.url (sslMode, useSSL/requireSSL) against MariaDB with and without TLS.
leaf_integration_test(test_db_tls)
