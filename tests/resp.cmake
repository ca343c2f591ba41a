# Unit tests of the Redis protocol module (src/resp), pure: no server, no socket.
leaf_unit_test(test_resp_proto leaf_resp)

# Integration tests of the RESP port with the real Redis clients. They run
# under Debian's /usr/bin/python3, the interpreter python3-redis installs for
# (another python3 first in PATH, e.g. pyenv's, cannot import it). ioredis is
# installed by the test itself into LEAFD_NODE_DIR, a cache in the build tree.
find_program(DEBIAN_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT DEBIAN_PYTHON3)
  set(DEBIAN_PYTHON3 ${PYTHON3})
endif()
function(leaf_resp_test name)
  add_test(NAME it.${name}
           COMMAND ${DEBIAN_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/${name}.py)
  set_tests_properties(it.${name} PROPERTIES TIMEOUT 300 LABELS "integration;resp"
    ENVIRONMENT "LEAFD_BIN=$<TARGET_FILE:leafd>;PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib;PYTHONDONTWRITEBYTECODE=1;LEAFD_NODE_DIR=${CMAKE_BINARY_DIR}/node")
endfunction()
leaf_resp_test(test_resp_clients)
leaf_resp_test(test_resp_ids)
# Users and permissions over HTTP and RESP, three nodes, ZooKeeper and MariaDB.
leaf_resp_test(test_auth)
# TLS for clients, secrets from files, the failed-authentication limit (docs/SECURITY.md).
leaf_resp_test(test_tls)
# March's clients (docs/reference/resp.md): default mode, MULTI/EXEC, README's ioredis example.
leaf_resp_test(test_resp_march)
