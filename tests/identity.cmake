# One identity, one node; migrations that cannot collide (docs/IDENTITY.md).
# The pure cores (zk_identity, zk_marker, zk_shape, zk_compat, the clock witness, dirlock) are
# unit-tested here; the integration tests run real nodes on a real ZooKeeper against them.
leaf_unit_test(test_zk_identity leaf_zk_core)

foreach(t twin twin_zk_down named named_paused named_takeover datadir_lock leaf_compat peers_every_start mixed_lease cache_owner lost_tree
          shape clock_witness)
  leaf_zk_integration_test(test_identity_${t})
  set_tests_properties(it.test_identity_${t} PROPERTIES TIMEOUT 120)
endforeach()
leaf_clock_test(test_identity_peers_every_start)
leaf_clock_test(test_identity_clock_witness)
