# Unit tests of the Redis protocol module (src/resp), pure: no server, no socket.
leaf_unit_test(test_resp_proto leaf_resp)
