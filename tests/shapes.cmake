# ID shapes: layouts, opaque IDs, ranges, zero waste.
# (The unit test of their configuration, test_node_config, is in core.cmake.)
leaf_integration_test(test_shapes_zero_waste)
leaf_integration_test(test_shapes_ranges)
leaf_integration_test(test_shapes_layout)
leaf_integration_test(test_shapes_opaque)
leaf_integration_test(test_shapes_named_layout)
leaf_integration_test(test_shapes_uuid)
leaf_clock_test(test_shapes_uuid)
