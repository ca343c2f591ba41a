# Sequences (issue 12): unit tests of the pure core (state machine with an
# injected clock and a fake ZooKeeper store, election decision, znode payloads).
leaf_unit_test(test_sequence leaf_sequence_core)
