# Integration tests of the HTTP server, the command line and static-worker
# snowflake mode: the real leafd binary driven over HTTP on loopback.
leaf_integration_test(test_http_ids)
leaf_integration_test(test_http_pipeline)
leaf_integration_test(test_http_errors)
leaf_integration_test(test_http_limits)
leaf_integration_test(test_http_signals)
leaf_integration_test(test_cli_config)
leaf_integration_test(test_snowflake_static)
leaf_integration_test(test_snowflake_static_restart)
leaf_integration_test(test_http_rfc9112)
leaf_integration_test(test_snowflake_disk)
leaf_integration_test(test_http_abuse)
leaf_integration_test(test_http_emfile)
