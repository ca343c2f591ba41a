# Operating leafd: leafctl, zk-inspect, metrics and logs.
leaf_integration_test(test_ops_leafctl)
leaf_integration_test(test_ops_observability)
leaf_integration_test(test_ops_zk_inspect)
leaf_integration_test(test_ops_quickstart)
leaf_integration_test(test_ops_pages)

# The alert rules: promtool check rules + the promtool unit tests in tests/alerts/.
add_test(NAME ops.alert_rules COMMAND ${PROJECT_SOURCE_DIR}/tools/check-alerts)
set_tests_properties(ops.alert_rules PROPERTIES TIMEOUT 60 LABELS ops)
# The systemd unit: systemd-analyze verify (skipped, exit 77, without systemd-analyze).
add_test(NAME ops.systemd_unit COMMAND ${PROJECT_SOURCE_DIR}/tools/check-unit)
set_tests_properties(ops.systemd_unit PROPERTIES TIMEOUT 60 LABELS ops SKIP_RETURN_CODE 77)

# cmake --install: every file where OPERATIONS.md says, and the installed pieces work.
add_test(NAME ops.install COMMAND ${PROJECT_SOURCE_DIR}/tools/check-install ${CMAKE_BINARY_DIR})
set_tests_properties(ops.install PROPERTIES TIMEOUT 60 LABELS ops)

# The code itself: clang-format and clang-tidy, zero findings (tools/lint).
add_test(NAME lint.format COMMAND ${PROJECT_SOURCE_DIR}/tools/lint format)
set_tests_properties(lint.format PROPERTIES TIMEOUT 120 LABELS lint)
add_test(NAME lint.tidy COMMAND ${PROJECT_SOURCE_DIR}/tools/lint tidy ${CMAKE_BINARY_DIR})
set_tests_properties(lint.tidy PROPERTIES TIMEOUT 600 LABELS lint)

# systemd Type=notify (READY=1, STATUS=, STOPPING=1) against a stand-in socket; JSON logs;
# the database outage logged once.
leaf_integration_test(test_ops_systemd_notify)
# docs/OPERATIONS.md lists exactly the families a node with every mode on exports; the
# Grafana dashboard and the alert rules use only exported ones.
leaf_integration_test(test_ops_metrics_families)
# README's shell examples, run against a node (tests/integration/test_ops_readme.py).
leaf_integration_test(test_ops_readme)

# Release-to-release upgrades (docs/OPERATIONS.md, "Upgrading a cluster"): the previous releases are built from git
# history into {build}/release-cache (once per commit) and clusters of them upgraded to this
# build under load. Minutes long and a Release build of each old commit the first time: labelled
# "upgrade" only, so they run in the full suite (plain ctest, tools/test) and not in the
# integration subsets (tools/tsan's -L 'unit|integration'). Exit 77 (a shallow clone without the
# history) is a skip.
leaf_integration_test(test_upgrade_release)
set_tests_properties(it.test_upgrade_release PROPERTIES TIMEOUT 900 LABELS upgrade
  SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
leaf_integration_test(test_upgrade_zk_down)
set_tests_properties(it.test_upgrade_zk_down PROPERTIES TIMEOUT 600 LABELS upgrade
  SKIP_RETURN_CODE 77)
