# Users and permissions (docs/SECURITY.md): the pure core and the secret helper.
leaf_unit_test(test_auth leaf_auth_core leaf_auth_secret)
# The security review's findings over real clients (docs/SECURITY.md): CSRF, pages, audit, tenants, /metrics.
leaf_integration_test(test_security)
