# The headers nearly every test includes, compiled once per test target: gmock and nlohmann are
# about 3.5 s of every test TU on the CI's 2 cores. Every module reaches nlohmann and tl::expected
# through acco::core.
function(acco_test_pch target)
  target_precompile_headers(${target} PRIVATE <gmock/gmock.h> <gtest/gtest.h>
                            <nlohmann/json.hpp> <tl/expected.hpp> <algorithm> <filesystem>
                            <fstream> <map> <memory> <sstream> <string> <thread> <vector>)
endfunction()

# acco_add_module(NAME m SOURCES ... DEPS ... PRIVATE_DEPS ... TESTS ... [TEST_DEPS ...]
#                 [NO_UNITY ...])
# One module = one folder = one target acco_<m> (alias acco::<m>) = one namespace acco::<m>.
# Every preset builds unity batches (CMAKE_UNITY_BUILD: several sources of a target compiled as
# one, about half the CPU time): NO_UNITY lists the sources (or tests) that must be compiled alone
# because a name in their anonymous namespace is also one of a sibling's.
function(acco_add_module)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;PRIVATE_DEPS;TESTS;TEST_DEPS;NO_UNITY"
                        ${ARGN})
  set(lib acco_${ARG_NAME})
  if(ARG_NO_UNITY)
    set_source_files_properties(${ARG_NO_UNITY} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
  add_library(${lib} ${ARG_SOURCES})
  add_library(acco::${ARG_NAME} ALIAS ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${ARG_NAME} OUTPUT_NAME acco_${ARG_NAME})
  target_include_directories(${lib}
    PRIVATE src
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${lib} PUBLIC ${ARG_DEPS} PRIVATE $<BUILD_INTERFACE:acco_warnings>
                                                          ${ARG_PRIVATE_DEPS})
  install(TARGETS ${lib} EXPORT accoTargets)
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  if(ACCO_BUILD_TESTS AND ARG_TESTS)
    add_executable(${lib}_test ${ARG_TESTS})
    target_include_directories(${lib}_test PRIVATE src)
    target_link_libraries(${lib}_test PRIVATE ${lib} ${ARG_TEST_DEPS} acco_testing GTest::gmock
                                              GTest::gtest_main acco_warnings)
    acco_test_pch(${lib}_test)
    gtest_discover_tests(${lib}_test TEST_PREFIX "${ARG_NAME}." PROPERTIES LABELS unit
                         DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
