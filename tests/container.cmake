# Where users run it: the image (tools/packaging/image) and the Kubernetes manifests (deploy/kubernetes/),
# docs/kubernetes.md. Label container (ctest -L container).
#
# The manifests against the Kubernetes API's schema, offline (npm kubernetes-models, installed
# once into the build tree); skipped (77) without node and npm.
leaf_integration_test(test_container_manifests)
set_property(TEST it.test_container_manifests APPEND PROPERTY LABELS container)
set_property(TEST it.test_container_manifests APPEND PROPERTY ENVIRONMENT
  "LEAFD_NODE_DIR=${CMAKE_BINARY_DIR}/node-k8s")
set_tests_properties(it.test_container_manifests PROPERTIES SKIP_RETURN_CODE 77
  FIXTURES_SETUP leafd_k8s_modules)

# The image, built once per run by test_container_image (the fixture's setup) and used by
# test_container_kube. tools/packaging/image keeps its root filesystem in image-cache/ and its release
# build in package-build/, shared with it.test_ops_package (one of them at a time: the lock).
# Both need root for podman; skipped (77) otherwise.
set(LEAFD_IMAGE_ENV
  "LEAFD_PACKAGE_BUILD=${CMAKE_BINARY_DIR}/package-build"
  "LEAFD_IMAGE_CACHE=${CMAKE_BINARY_DIR}/image-cache")
leaf_integration_test(test_container_image)
set_property(TEST it.test_container_image APPEND PROPERTY LABELS container)
set_property(TEST it.test_container_image APPEND PROPERTY ENVIRONMENT ${LEAFD_IMAGE_ENV})
set_tests_properties(it.test_container_image PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77
  FIXTURES_SETUP leafd_image RESOURCE_LOCK package-build)
# The longest of the suite with the package build (about 100 s), and test_container_kube waits on it.
leaf_test_cost(it.test_container_image 101)

# The Deployment's pod template (lease mode, three pods) and the StatefulSet's (named identities;
# skipped with a message while leafd has no leafd.snowflake.identity) under podman kube play,
# on the image above, against real ZooKeeper and MariaDB on loopback.
leaf_integration_test(test_container_kube)
set_property(TEST it.test_container_kube APPEND PROPERTY LABELS container)
set_property(TEST it.test_container_kube APPEND PROPERTY ENVIRONMENT
  "LEAFD_NODE_DIR=${CMAKE_BINARY_DIR}/node-k8s")
set_tests_properties(it.test_container_kube PROPERTIES SKIP_RETURN_CODE 77
  FIXTURES_REQUIRED "leafd_image;leafd_k8s_modules")
