# Users and permissions (issue 13): the pure core and the secret helper.
leaf_unit_test(test_auth leaf_auth_core leaf_auth_secret)
# Issue 26's review findings over real clients: CSRF, pages, audit, tenants, /metrics.
leaf_integration_test(test_security)
