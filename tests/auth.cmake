# Users and permissions: the pure core and the secret helper.
leaf_unit_test(test_auth leaf_auth_core leaf_auth_secret)
# Users and permissions over HTTP and RESP, three nodes, ZooKeeper and MariaDB.
leaf_resp_test(test_auth)
