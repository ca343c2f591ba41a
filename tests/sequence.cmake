# Sequences (docs/cluster.md, "Sequences"): unit tests of the pure core (state machine with an
# injected clock and a fake ZooKeeper store, election decision, znode payloads).
leaf_unit_test(test_sequence leaf_sequence_core)
leaf_unit_test(test_sequence_shard leaf_sequence_core)

# Sequences on three real nodes, with redis-py's and ioredis' cluster clients
# (Debian's python3, as the RESP tests: resp.cmake).
leaf_resp_test(test_sequence_basic)
leaf_resp_test(test_sequence_sharded)
