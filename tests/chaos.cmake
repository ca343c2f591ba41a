# Chaos: three leafd nodes on a three-server ZooKeeper ensemble and
# one MariaDB, clients pulling IDs while faults are injected at random; see
# tests/chaos/chaos.py. ./tools/test runs a 60 s pass with a random seed,
# printed first; `CHAOS_SEED=S ./tools/test -R chaos` replays one (chaos.py
# reads CHAOS_SEED at run time). tools/checks/chaos runs it for as long as asked.
# it.chaos_lease_short is the lease-mode node set (chaos.py --lease, 45 s:
# worker-ID leases with partitions, clock-step switches, new identities and
# the fence check; same seed handling; tools/checks/tsan's "chaos" excludes it too).
# Both also run the operator errors of docs/IDENTITY.md on a side track of the seed
# (tests/chaos/chaos_identity.py): a twin with a live node's identity must
# exit 1 issuing nothing (forever set), a sequence's stored max bumped behind
# the primary's back must heal (both sets).
# One chaos run at a time, beside one ordinary test (leaf_heavy_test, tests/CMakeLists.txt).
leaf_test_registered(chaos_short chaos/chaos.py)
add_test(NAME it.chaos_short
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/chaos/chaos.py --seconds 60)
set_tests_properties(it.chaos_short PROPERTIES TIMEOUT 400
  LABELS "integration;chaos"
  ENVIRONMENT "LEAFD_BIN=$<TARGET_FILE:leafd>;PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib;PYTHONDONTWRITEBYTECODE=1;ZK_EXPIRE_BIN=$<TARGET_FILE:zk_expire>")
leaf_heavy_test(it.chaos_short 78)
leaf_test_registered(chaos_lease_short chaos/chaos.py)
add_test(NAME it.chaos_lease_short
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/chaos/chaos.py --lease --seconds 45)
set_tests_properties(it.chaos_lease_short PROPERTIES TIMEOUT 400
  LABELS "integration;chaos"
  ENVIRONMENT "LEAFD_BIN=$<TARGET_FILE:leafd>;PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib;PYTHONDONTWRITEBYTECODE=1;ZK_EXPIRE_BIN=$<TARGET_FILE:zk_expire>")
leaf_heavy_test(it.chaos_lease_short 62)
# it.chaos_galera_short: the same faults with segments on a three-node Galera cluster
# (chaos.py --galera, 45 s): db_kill kills one member with kill -9 and starts it again
# (tests/lib/galera.py). About 90 s in all with the cluster's start.
leaf_test_registered(chaos_galera_short chaos/chaos.py)
add_test(NAME it.chaos_galera_short
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/chaos/chaos.py --galera --seconds 45)
set_tests_properties(it.chaos_galera_short PROPERTIES TIMEOUT 400
  LABELS "integration;chaos"
  ENVIRONMENT "LEAFD_BIN=$<TARGET_FILE:leafd>;PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib;PYTHONDONTWRITEBYTECODE=1;ZK_EXPIRE_BIN=$<TARGET_FILE:zk_expire>")
leaf_heavy_test(it.chaos_galera_short 80)
# it.chaos_numbering_short: business numbers at a period boundary (tests/chaos/chaos_numbering.py):
# three sequence nodes under one libfaketime offset reach a Shanghai midnight while the primary
# is killed (-9) four times around it; every answer is checked for repeats, order in real time
# and a period ahead of the clock. A test of its own: the chaos cluster's clock faults step
# each node's clock apart. About 36 s. Its checks are of order and dates against each answer's
# own send and receive times, none of a duration, so it runs beside one other test (counted as
# two jobs, as a clock test) instead of alone.
leaf_test_registered(chaos_numbering_short chaos/chaos_numbering.py)
add_test(NAME it.chaos_numbering_short
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/chaos/chaos_numbering.py)
set_tests_properties(it.chaos_numbering_short PROPERTIES TIMEOUT 200 PROCESSORS 2 COST 60
  LABELS "integration;chaos"
  ENVIRONMENT "LEAFD_BIN=$<TARGET_FILE:leafd>;PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib;PYTHONDONTWRITEBYTECODE=1")
