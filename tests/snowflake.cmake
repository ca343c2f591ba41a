# Unit tests of the pure snowflake logic (layout, generator, clock policy).
leaf_unit_test(test_snowflake leaf_snowflake_core)
