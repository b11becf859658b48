# Project-wide compiler flags and the one helper that declares a test.

function(hsns_set_global_flags)
  add_compile_options(-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wformat=2)
  if(HSNS_WERROR)
    add_compile_options(-Werror)
  endif()
  # Hardening: stack protector, fortified libc calls, full RELRO, PIE.
  add_compile_options(-fstack-protector-strong)
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    add_compile_definitions(_FORTIFY_SOURCE=2)
  endif()
  add_link_options(-Wl,-z,relro,-z,now -pie)
  if(HSNS_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
  endif()
  # The test build (sanitizers, fuzz targets included) is built on every CI run: line tables only (-g1, the last -g
  # option wins over the Debug type's -g) are what a sanitizer's or libFuzzer's stack trace needs, and
  # cost about a fifth less compile time and much smaller objects than full debug info; lld links them
  # about twice as fast as GNU ld. Release and package builds keep the default toolchain and -g;
  # -DHSNS_TEST_LINE_TABLES=OFF keeps full debug info and GNU ld for a debugger session.
  if(HSNS_SANITIZE AND HSNS_TEST_LINE_TABLES)
    add_compile_options(-g1)
    find_program(HSNS_LLD ld.lld)
    if(HSNS_LLD)
      add_link_options(-fuse-ld=lld)
    endif()
  endif()
  # Boost.Asio without deprecated interfaces.
  add_compile_definitions(BOOST_ASIO_NO_DEPRECATED)
endfunction()

# hsns_add_test(NAME name SOURCES ... LIBS ... [LABELS ...] [TIMEOUT seconds])
# Builds one GoogleTest executable and registers its tests with ctest individually.
function(hsns_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  # Where tests find the binaries and source files they use (the environment may override these).
  target_compile_definitions(${T_NAME} PRIVATE HSNS_TEST_BUILD_DIR="${CMAKE_BINARY_DIR}"
                                               HSNS_TEST_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  # Labels are set after discovery: gtest_discover_tests' PROPERTIES keeps only the first item of a list
  # value, so a test with LABELS "unit;daemon" would lose "daemon". The generated file runs after the
  # discovered tests' own include file, whose TEST_LIST variable names them.
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 30 PROPERTIES TIMEOUT ${T_TIMEOUT}
                       TEST_LIST ${T_NAME}_TESTS)
  if(T_LABELS)
    set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_labels.cmake")
    file(WRITE "${labels_file}"
         "foreach(test_name IN LISTS ${T_NAME}_TESTS)\n"
         "  set_tests_properties(\"\${test_name}\" PROPERTIES LABELS \"${T_LABELS}\")\n"
         "endforeach()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
  endif()
endfunction()

# hsns_quiet_libbpf_idioms(<imported libbpf target>): libbpf's option macros (LIBBPF_OPTS, a compound literal
# in a statement expression) and bpftool's skeletons (the BPF object as one long string literal) are C idioms
# that clang's -Wpedantic reports in C++ sources (GCC accepts them); every user of that libbpf target gets
# the three warnings off, and nothing else.
function(hsns_quiet_libbpf_idioms target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_COMPILE_OPTIONS
                 $<$<COMPILE_LANGUAGE:CXX>:-Wno-c99-extensions> $<$<COMPILE_LANGUAGE:CXX>:-Wno-gnu-statement-expression>
                 $<$<COMPILE_LANGUAGE:CXX>:-Wno-overlength-strings>)
  endif()
endfunction()
