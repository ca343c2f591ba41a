# The HTTP protocol alone (leaf_http: no daemon code).
leaf_unit_test(test_http_conn leaf_http)

# Integration tests of the HTTP server: the real leafd binary driven over HTTP on loopback.
leaf_integration_test(test_http_ids)
leaf_integration_test(test_http_pipeline)
leaf_integration_test(test_http_errors)
leaf_integration_test(test_http_limits)
leaf_integration_test(test_http_signals)
leaf_integration_test(test_http_rfc9112)
leaf_integration_test(test_http_head_routes)
leaf_integration_test(test_http_abuse)
leaf_integration_test(test_http_emfile)
leaf_integration_test(test_http_host)
leaf_integration_test(test_http_no_store)
leaf_integration_test(test_http_audit_actor)
# Connection slots per client address (leafd.http.max.connections.per.address).
leaf_integration_test(test_http_conn_limits)
