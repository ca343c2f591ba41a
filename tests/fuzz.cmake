# The protocol harness: the daemon's sources without main.c and the socket
# side (http.c), plus stubs for both. Used by the request-parsing unit test
# and by the libFuzzer harnesses.
get_target_property(LEAFD_SRCS leafd SOURCES)
list(REMOVE_ITEM LEAFD_SRCS main.c http.c)
list(TRANSFORM LEAFD_SRCS PREPEND ${CMAKE_SOURCE_DIR}/src/)
get_target_property(LEAFD_LIBS leafd LINK_LIBRARIES)
add_library(leafd_harness STATIC ${LEAFD_SRCS} support/stub_daemon.c)
target_link_libraries(leafd_harness PUBLIC ${LEAFD_LIBS})

leaf_unit_test(test_http_proto leafd_harness)

# libFuzzer harnesses: configure with CC=clang -DLEAFD_FUZZ=ON (tools/fuzz does).
set(LEAFD_FUZZERS fuzz_http)
if(LEAFD_FUZZ)
  foreach(f ${LEAFD_FUZZERS})
    add_executable(${f} fuzz/${f}.c)
    target_compile_options(${f} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(${f} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${f} PRIVATE leafd_harness)
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
