# Sequences: unit tests of the pure core (state machine with an injected clock
# and a fake ZooKeeper store, election decision, znode payloads; keyed sequences'
# sections, floor and eviction, with a fake store that loses writes).
leaf_unit_test(test_sequence leaf_sequence_core)
leaf_unit_test(test_sequence_shard leaf_sequence_core)
leaf_unit_test(test_sequence_shard_gate leaf_sequence_core)
leaf_unit_test(test_sequence_numbering leaf_sequence_core)
leaf_unit_test(test_sequence_keyed leaf_sequence_core)
leaf_unit_test(test_sequence_move leaf_sequence_core)

# Sequences on three real nodes, with redis-py's and ioredis' cluster clients
# (leaf_resp_test: Debian's python3, tests/CMakeLists.txt).
leaf_resp_test(test_sequence_basic)
leaf_resp_test(test_sequence_sharded)
leaf_test_cost(it.test_sequence_sharded 44)
# Keyed sequences' doors (docs/keyed-sequences.md, "The API"): the admin calls, HTTP and RESP,
# the errors, the redirects, the grants and the metrics, every call through the order checker.
leaf_resp_test(test_keyed_basic)
set_property(TEST it.test_keyed_basic APPEND PROPERTY LABELS sequence)
# Keyed sequences through a kill -9 of the primary and a graceful stop: HTTP and RESP client
# processes on 200 keys, the order checker over every call, the largest jump per key measured.
leaf_resp_test(test_keyed_failover)
set_property(TEST it.test_keyed_failover APPEND PROPERTY LABELS sequence)
# The acceptance test: 1,000,000 keys of one space each take one ID through pipelined RESP;
# fewer than 1,000 section writes, at most 256 ZooKeeper nodes, the RSS per resident key printed.
leaf_resp_test(test_keyed_million)
set_property(TEST it.test_keyed_million APPEND PROPERTY LABELS sequence)
set_tests_properties(it.test_keyed_million PROPERTIES TIMEOUT 900)
leaf_test_cost(it.test_keyed_million 40)
# The bound on resident keys: leafd.keyed.max.keys = 100000 and 1,000,000 keys touched in rounds
# that revisit evicted keys; the RSS stays bounded, every call through the order checker.
leaf_resp_test(test_keyed_evict)
set_property(TEST it.test_keyed_evict APPEND PROPERTY LABELS sequence)
set_tests_properties(it.test_keyed_evict PROPERTIES TIMEOUT 600)
# Keyed spaces created on first use (leafd.sequence.autocreate): two nodes racing to create one
# space both serve it; without autocreate an unknown space is refused naming it.
leaf_resp_test(test_keyed_autocreate)
set_property(TEST it.test_keyed_autocreate APPEND PROPERTY LABELS sequence)
# Keyed sequences at the mode's boundaries: sharded owners with a node joining and one leaving,
# an in-place upgrade (the given-back maxima), wall clock steps (libfaketime) and ZooKeeper out
# past the session timeout, with plain and RedisCluster clients; the order checker over all.
leaf_resp_test(test_keyed_faults)
set_property(TEST it.test_keyed_faults APPEND PROPERTY LABELS sequence)
leaf_clock_test(test_keyed_faults)
# The acceptance on sharded nodes: two nodes, 8 client processes on 10,000 hot keys and 100,000
# cold ones, a kill -9 of the owner of half the slots, a node joining, an in-place upgrade of each
# node; the order checker over all, failures only in the failover window, the jump bound per phase.
leaf_resp_test(test_keyed_sharded)
set_property(TEST it.test_keyed_sharded APPEND PROPERTY LABELS sequence)
set_tests_properties(it.test_keyed_sharded PROPERTIES PROCESSORS 2)
leaf_test_cost(it.test_keyed_sharded 60)

# The partition proxy's own test, and the failover tests against the real
# binary (three leafd nodes, real ZooKeeper, HTTP and RESP clients that follow
# redirects; see tests/lib/seqclients.py and tests/lib/seqcluster.py). They get
# ZK_EXPIRE_BIN for the session-expiry case (zk_expire is built in zk.cmake: a
# generator expression may name a target defined later) and run one at a time
# (RESOURCE_LOCK seqfail), each beside ordinary tests, never beside a heavy one
# (their bounds on failover windows hold on a loaded machine, not beside a chaos
# run); the one that times a failover to the millisecond runs alone.
function(leaf_sequence_integration_test name)
  leaf_integration_test(${name})
  set_property(TEST it.${name} APPEND PROPERTY ENVIRONMENT "ZK_EXPIRE_BIN=$<TARGET_FILE:zk_expire>")
  set_property(TEST it.${name} APPEND PROPERTY LABELS sequence)
  set_tests_properties(it.${name} PROPERTIES RESOURCE_LOCK "seqfail;heavy")
endfunction()

foreach(t proxy harness failover_kill failover_demote failover_zk failover_partition failover_timing heal
          zk_restore)
  leaf_sequence_integration_test(test_sequence_${t})
endforeach()
# The failover's timeline: five kills -9, three demotes, three SIGTERMs with a 2 s session.
leaf_test_cost(it.test_sequence_failover_timing 30)
set_tests_properties(it.test_sequence_failover_timing PROPERTIES RUN_SERIAL TRUE)
# A failed sequence start with ZooKeeper down exits 1 instead of hanging (found by chaos).
leaf_integration_test(test_sequence_start_zk_down)
set_property(TEST it.test_sequence_start_zk_down APPEND PROPERTY LABELS sequence)
# A node restarted after kill -9 (and after an in-place upgrade's new process was killed) deletes
# its previous process's election node at start instead of redirecting to itself until that
# session times out; a copied data dir's record of another node's session is left alone.
leaf_integration_test(test_sequence_restart_self)
set_property(TEST it.test_sequence_restart_self APPEND PROPERTY LABELS sequence)
leaf_resp_test(test_sequence_numbers)
leaf_clock_test(test_sequence_numbers)
# Business numbers through a kill -9 of the primary (no period ahead, no repeat) and a
# numbering's counter out of the sequence routes' reach.
leaf_integration_test(test_sequence_numbers_failover)
set_property(TEST it.test_sequence_numbers_failover APPEND PROPERTY LABELS sequence)
# Business numbers' admin calls: what a definition may hold, update, delete, the limit, and a
# zone cache that only holds zones.
leaf_integration_test(test_sequence_numbers_admin)
set_property(TEST it.test_sequence_numbers_admin APPEND PROPERTY LABELS sequence)

# The order checker of the tests' library (tests/lib/ordercheck.py) on planted histories, without
# leafd: every kind of violation found and printed, good histories pass, 1,000,000 calls in
# seconds. Python only, a few seconds: in the unit and quick tiers.
leaf_test_registered(test_sequence_order unit/test_sequence_order.py)
add_test(NAME unit.test_sequence_order
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_sequence_order.py)
set_tests_properties(unit.test_sequence_order PROPERTIES TIMEOUT 120 LABELS "unit;quick;sequence"
  ENVIRONMENT "PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib;PYTHONDONTWRITEBYTECODE=1")
