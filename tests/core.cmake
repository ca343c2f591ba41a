# Unit tests of the pure parts of src/ (config parsing, input validation).
leaf_unit_test(test_config leaf_config)
leaf_unit_test(test_validate leaf_base)
leaf_unit_test(test_base leaf_base)
# The pure parts of docs/SECURITY.md: TLS and secret keys, database TLS modes, secret files,
# the failed-authentication limit, the MySQL greeting check.
leaf_unit_test(test_security leaf_config leaf_auth_core leaf_segment_core)
