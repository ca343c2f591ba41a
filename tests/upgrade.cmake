# Release-to-release upgrades: the upgrade area.
# Release-to-release upgrades (docs/OPERATIONS.md, "Upgrading a cluster"): the previous releases are built from git
# history into {build}/release-cache (once per commit) and clusters of them upgraded to this
# build under load. Minutes long and a Release build of each old commit the first time: labelled
# "upgrade" only, so they run in the full suite (plain ctest, tools/test) and not in the
# integration subsets (tools/checks/tsan's -L 'integration|threads'). Exit 77 (a shallow clone without the
# history) is a skip.
# One heavy test at a time beside one ordinary test (leaf_heavy_test, tests/CMakeLists.txt): its
# bound on a node's not-ready time (1 s) is far above what it measures (0.02 - 0.14 s).
leaf_integration_test(test_upgrade_release)
set_tests_properties(it.test_upgrade_release PROPERTIES TIMEOUT 900 LABELS upgrade
  SKIP_RETURN_CODE 77)
leaf_heavy_test(it.test_upgrade_release 81)
leaf_integration_test(test_upgrade_zk_down)
set_tests_properties(it.test_upgrade_zk_down PROPERTIES TIMEOUT 600 LABELS upgrade
  SKIP_RETURN_CODE 77)
leaf_test_cost(it.test_upgrade_zk_down 66)
# Sequence sharding turned on mid-rollout: 0.1.0 beside a sharded 1.0 node, then replaced
# (docs/UPGRADING.md, "Sequence sharding in a mixed cluster"); about 30 s.
leaf_integration_test(test_upgrade_shard_gate)
set_tests_properties(it.test_upgrade_shard_gate PROPERTIES TIMEOUT 300 LABELS upgrade
  SKIP_RETURN_CODE 77)
leaf_test_cost(it.test_upgrade_shard_gate 39)
# Users across a rolling upgrade: changes through a 0.2.0 node and a 1.0 node, each applied by
# both within the session timeout (no revocation gap between versions); about 20 s.
leaf_integration_test(test_upgrade_users)
set_tests_properties(it.test_upgrade_users PROPERTIES TIMEOUT 300 LABELS upgrade
  SKIP_RETURN_CODE 77)
# In-place upgrades (kill -USR2) from the previous release, 1.0.0, and back: one node with
# sequences and RESP up, down and up again, then a sharded pair (docs/UPGRADING.md, "In place,
# without a restart"); about 40 s and the first Release build of 1.0.0.
leaf_integration_test(test_upgrade_inplace)
set_tests_properties(it.test_upgrade_inplace PROPERTIES TIMEOUT 600 LABELS upgrade
  SKIP_RETURN_CODE 77)
leaf_test_cost(it.test_upgrade_inplace 90)
