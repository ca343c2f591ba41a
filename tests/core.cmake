# Unit tests of the pure parts of src/ (config parsing, input validation).
leaf_unit_test(test_config leaf_config)
leaf_unit_test(test_validate leaf_base)
leaf_unit_test(test_base leaf_base)
