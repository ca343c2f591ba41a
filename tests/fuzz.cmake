# The protocol harness: the daemon's sources without main.c and the socket
# side (http.c), plus stubs for both. Used by the request-parsing unit test
# and by the libFuzzer harnesses.
get_target_property(LEAFD_SRCS leafd SOURCES)
list(REMOVE_ITEM LEAFD_SRCS main.c http.c)
list(TRANSFORM LEAFD_SRCS PREPEND ${CMAKE_SOURCE_DIR}/src/)
get_target_property(LEAFD_LIBS leafd LINK_LIBRARIES)
add_library(leafd_harness STATIC ${LEAFD_SRCS} support/stub_daemon.c)
target_include_directories(leafd_harness PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/support ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(leafd_harness PUBLIC ${LEAFD_LIBS})

leaf_unit_test(test_http_proto leafd_harness)

# libFuzzer harnesses: configure with CC=clang -DLEAFD_FUZZ=ON (tools/fuzz does,
# and also compiles every library with -fsanitize=fuzzer-no-link so that
# libFuzzer sees the coverage of the code under test, not just the harness).
# Each harness links only what it tests: the pure libraries where it can.
set(LEAFD_FUZZERS fuzz_http fuzz_config fuzz_znode fuzz_zk_cache fuzz_admin fuzz_auth)
set(LEAFD_FUZZ_LIBS_fuzz_http leafd_harness)
set(LEAFD_FUZZ_LIBS_fuzz_config leaf_core)
set(LEAFD_FUZZ_LIBS_fuzz_znode leaf_zk_core)
set(LEAFD_FUZZ_LIBS_fuzz_zk_cache leaf_zk_core)
set(LEAFD_FUZZ_LIBS_fuzz_admin leaf_segment_request PkgConfig::CJSON)
set(LEAFD_FUZZ_LIBS_fuzz_auth leaf_auth_core)
if(LEAFD_FUZZ)
  set(LEAFD_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
  foreach(f ${LEAFD_FUZZERS})
    add_executable(${f} fuzz/${f}.c)
    target_compile_options(${f} PRIVATE ${LEAFD_FUZZ_FLAGS})
    target_link_options(${f} PRIVATE ${LEAFD_FUZZ_FLAGS})
    target_link_libraries(${f} PRIVATE ${LEAFD_FUZZ_LIBS_${f}})
  endforeach()
endif()

# A short bounded run of each fuzzer inside ctest, when tools/test has built
# them (LEAFD_FUZZ_BIN_DIR); skipped otherwise.
foreach(f ${LEAFD_FUZZERS})
  string(REPLACE "fuzz_" "" corpus ${f})
  add_test(NAME fuzz.${f}
           COMMAND ${CMAKE_SOURCE_DIR}/tools/fuzz --short ${f})
  set_tests_properties(fuzz.${f} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS fuzz)
endforeach()
