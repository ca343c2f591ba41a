# Operating leafd: leafctl, zk-inspect, metrics and logs.
leaf_integration_test(test_ops_leafctl)
leaf_integration_test(test_ops_observability)
leaf_integration_test(test_ops_zk_inspect)
