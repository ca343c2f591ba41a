# ID shapes (docs/id-shapes.md): layouts, opaque IDs, ranges, zero waste.
leaf_unit_test(test_node_config leaf_node_config)
leaf_integration_test(test_shapes_zero_waste)
leaf_integration_test(test_shapes_ranges)
leaf_integration_test(test_shapes_layout)
leaf_integration_test(test_shapes_opaque)
