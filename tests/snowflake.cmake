# Unit tests of the pure snowflake logic (layout, generator, clock policy).
leaf_unit_test(test_snowflake leaf_snowflake_core)
leaf_unit_test(test_snowflake_layout leaf_snowflake_core)
leaf_unit_test(test_snowflake_lead leaf_snowflake_core)
leaf_unit_test(test_snowflake_fast leaf_snowflake_core Threads::Threads)
