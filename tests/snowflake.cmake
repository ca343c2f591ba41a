# Unit tests of the pure snowflake logic (layout, generator, clock policy, UUIDv7).
leaf_unit_test(test_snowflake leaf_snowflake_core)
leaf_unit_test(test_snowflake_layout leaf_snowflake_core)
leaf_unit_test(test_snowflake_lead leaf_snowflake_core)
leaf_unit_test(test_snowflake_fast leaf_snowflake_core Threads::Threads)
leaf_unit_test(test_snowflake_uuid leaf_snowflake_core)

# Static-worker snowflake mode on the real binary: restarts, the on-disk reservation.
leaf_integration_test(test_snowflake_static)
leaf_integration_test(test_snowflake_static_restart)
leaf_clock_test(test_snowflake_static)
leaf_clock_test(test_snowflake_static_restart)
leaf_integration_test(test_snowflake_disk)
