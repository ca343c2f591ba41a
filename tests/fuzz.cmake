# libFuzzer harnesses: configure with CC=clang -DLEAFD_FUZZ=ON (tools/checks/fuzz does,
# and also compiles every library with -fsanitize=fuzzer-no-link so that
# libFuzzer sees the coverage of the code under test, not just the harness).
# Each harness links only what it tests: the pure libraries where it can.
set(LEAFD_FUZZERS fuzz_http fuzz_config fuzz_znode fuzz_zk_cache fuzz_admin fuzz_resp fuzz_resp_api fuzz_auth fuzz_client_reply)
set(LEAFD_FUZZ_LIBS_fuzz_http leaf_api_fixture)
set(LEAFD_FUZZ_LIBS_fuzz_config leaf_config)
set(LEAFD_FUZZ_LIBS_fuzz_znode leaf_zk_core)
set(LEAFD_FUZZ_LIBS_fuzz_zk_cache leaf_zk_core)
set(LEAFD_FUZZ_LIBS_fuzz_admin leaf_segment_request PkgConfig::CJSON)
set(LEAFD_FUZZ_LIBS_fuzz_resp leaf_resp)
set(LEAFD_FUZZ_LIBS_fuzz_resp_api leaf_api_fixture)
set(LEAFD_FUZZ_LIBS_fuzz_auth leaf_auth_core)
set(LEAFD_FUZZ_LIBS_fuzz_client_reply leaf_client_core)
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
  leaf_test_registered(${f} fuzz/${f}.c)
  add_test(NAME fuzz.${f}
           COMMAND ${CMAKE_SOURCE_DIR}/tools/checks/fuzz --short ${f})
  set_tests_properties(fuzz.${f} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS fuzz)
endforeach()
