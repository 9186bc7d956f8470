# SPDX-License-Identifier: Apache-2.0
# test_install: what it needs to install this build and build against it.
target_compile_definitions(test_install PRIVATE RG_CMAKE_COMMAND="${CMAKE_COMMAND}"
  "RG_CMAKE_GENERATOR=\"${CMAKE_GENERATOR}\"" "RG_CMAKE_MAKE_PROGRAM=\"${CMAKE_MAKE_PROGRAM}\""
  RG_C_COMPILER="${CMAKE_C_COMPILER}" RG_INSTALL_LIBDIR="${CMAKE_INSTALL_LIBDIR}")
if(ROPEGRAD_SANITIZE OR ROPEGRAD_FUZZ)
  # An instrumented libropegrad cannot be linked into a plain consumer; the
  # normal build (scripts/test.sh) runs this test.
  target_compile_definitions(test_install PRIVATE
    "RG_INSTALL_TEST_SKIP=\"instrumented build, sanitizers or fuzzing: the install test runs in the normal build\"")
endif()
# Installs the whole build tree: it must be complete, so no other test may be
# rebuilding it; it takes a while (a CMake configure of the consumer).
set_tests_properties(test_install PROPERTIES TIMEOUT 300)
