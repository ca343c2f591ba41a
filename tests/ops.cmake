# Operating leafd: leafctl, zk-inspect, metrics and logs.
leaf_integration_test(test_ops_leafctl)
# leafctl with secrets and root: acl's verbs, /etc/leafd under the prefix /usr, the token file,
# no write through a symbolic link in the data dir, the warn line for an inline secret.
leaf_integration_test(test_ops_leafctl_safety)
leaf_integration_test(test_ops_observability)
leaf_integration_test(test_ops_zk_inspect)
leaf_integration_test(test_ops_quickstart)
leaf_integration_test(test_ops_pages)
# tools/packaging/package: the Debian package (file list, conffile, lintian, the extracted leafd runs).
# Its release build lives in this build tree (package-build/) and is reused by later runs.
leaf_integration_test(test_ops_package)
# package-build/ is tools/packaging/image's too (tests/container.cmake): one of them at a time.
set_tests_properties(it.test_ops_package PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77 RESOURCE_LOCK package-build
  ENVIRONMENT "LEAFD_PACKAGE_BUILD=${CMAKE_BINARY_DIR}/package-build;PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib;PYTHONDONTWRITEBYTECODE=1")

# The alert rules: promtool check rules + the promtool unit tests in tests/alerts/.
add_test(NAME ops.alert_rules COMMAND ${PROJECT_SOURCE_DIR}/tools/checks/check-alerts)
set_tests_properties(ops.alert_rules PROPERTIES TIMEOUT 60 LABELS ops)
# The systemd unit: systemd-analyze verify (skipped, exit 77, without systemd-analyze).
add_test(NAME ops.systemd_unit COMMAND ${PROJECT_SOURCE_DIR}/tools/checks/check-unit)
set_tests_properties(ops.systemd_unit PROPERTIES TIMEOUT 60 LABELS ops SKIP_RETURN_CODE 77)

# cmake --install: every file where OPERATIONS.md says, and the installed pieces work.
add_test(NAME ops.install COMMAND ${PROJECT_SOURCE_DIR}/tools/checks/check-install ${CMAKE_BINARY_DIR})
set_tests_properties(ops.install PROPERTIES TIMEOUT 60 LABELS ops)

# The code itself: clang-format and clang-tidy, zero findings (tools/lint).
add_test(NAME lint.format COMMAND ${PROJECT_SOURCE_DIR}/tools/lint format)
set_tests_properties(lint.format PROPERTIES TIMEOUT 120 LABELS lint)
add_test(NAME lint.tidy COMMAND ${PROJECT_SOURCE_DIR}/tools/lint tidy ${CMAKE_BINARY_DIR})
set_tests_properties(lint.tidy PROPERTIES TIMEOUT 600 LABELS lint)
leaf_test_cost(lint.tidy 170)
# Every repository path a doc, a man page or a comment cites exists, and every function a header
# exports is called outside its own .c file by more than the tests (tools/lint refs).
add_test(NAME lint.refs COMMAND ${PROJECT_SOURCE_DIR}/tools/lint refs)
set_tests_properties(lint.refs PROPERTIES TIMEOUT 60 LABELS lint)
# tools/lint refs fails on a planted dead path citation and a planted dead export (in a copy).
leaf_integration_test(test_ops_lint)
set_property(TEST it.test_ops_lint APPEND PROPERTY LABELS lint)

# systemd Type=notify (READY=1, STATUS=, STOPPING=1) against a stand-in socket; JSON logs;
# the database outage logged once.
leaf_integration_test(test_ops_systemd_notify)
# Kubernetes' probes: /ready?mode= through a ZooKeeper outage, leafd.stop.delay.ms after SIGTERM.
leaf_integration_test(test_ops_probes)
# docs/OPERATIONS.md lists exactly the families a node with every mode on exports; the
# Grafana dashboard and the alert rules use only exported ones.
leaf_integration_test(test_ops_metrics_families)
# The shell examples of README.md and the guide pages in docs/, run against a node
# (tests/integration/test_ops_readme.py).
leaf_integration_test(test_ops_readme)
# docs/reference/'s generated tables are what `leafd --print-reference KIND` prints, for every
# kind (tools/checks/gen-reference BUILD_DIR rewrites them); every relative link of the docs resolves.
leaf_integration_test(test_ops_reference)
# Every refusal (exit non-zero) ends with a line naming the cause and the key or action that
# fixes it: docs/OPERATIONS.md, "When a node refuses to start".
leaf_integration_test(test_ops_refusals)
