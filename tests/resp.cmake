# Unit tests of the Redis protocol module (src/resp), pure: no server, no socket;
# and the RESP commands on a real API context (tests/support/api_fixture.c).
leaf_unit_test(test_resp_codec leaf_resp)
leaf_unit_test(test_resp_api leaf_api_fixture)

# Integration tests of the RESP port with the real Redis clients (leaf_resp_test:
# Debian's python3, tests/CMakeLists.txt).
leaf_resp_test(test_resp_clients)
leaf_resp_test(test_resp_ids)
# March's clients: default mode, MULTI/EXEC, README's ioredis example.
leaf_resp_test(test_resp_march)
leaf_integration_test(test_resp_limits)
# What a RESP connection may make the node hold (docs/reference/resp.md, "Memory per connection").
leaf_integration_test(test_resp_memory)
