# SPDX-License-Identifier: Apache-2.0
# The implementation digest: SHA-256 over the kernel's sources and the flags
# they were built with, computed at build time and compiled into the binary
# (rg_implementation_digest()). The custom command depends on every source,
# so editing a kernel file re-makes the digest on the next build; the glob is
# CONFIGURE_DEPENDS so a new file re-runs CMake.
file(GLOB RG_IMPL_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/include/ropegrad.h
  ${PROJECT_SOURCE_DIR}/src/op/*.c ${PROJECT_SOURCE_DIR}/src/op/*.cu
  ${PROJECT_SOURCE_DIR}/src/op/*.cuh ${PROJECT_SOURCE_DIR}/src/op/*.h)
list(SORT RG_IMPL_SOURCES)
string(TOUPPER "${CMAKE_BUILD_TYPE}" _rg_bt)
set(RG_IMPL_FLAGS
  "build_type=${CMAKE_BUILD_TYPE}"
  "c_compiler=${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}"
  "c_flags=${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${_rg_bt}}"
  "cuda=${ROPEGRAD_HAVE_CUDA}"
  "cuda_compiler=${CMAKE_CUDA_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION}"
  "cuda_flags=${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${_rg_bt}}"
  "cuda_archs=${CMAKE_CUDA_ARCHITECTURES}"
  "sanitize=${ROPEGRAD_SANITIZE}")
string(REPLACE ";" "|" RG_IMPL_FLAGS_ARG "${RG_IMPL_FLAGS}")
string(REPLACE ";" "|" RG_IMPL_SOURCES_ARG "${RG_IMPL_SOURCES}")
set(RG_IMPL_OUT ${CMAKE_CURRENT_BINARY_DIR}/rg_impl_digest.c)
add_custom_command(
  OUTPUT ${RG_IMPL_OUT}
  COMMAND ${CMAKE_COMMAND} "-DSOURCES=${RG_IMPL_SOURCES_ARG}" "-DROOT=${PROJECT_SOURCE_DIR}"
          "-DFLAGS=${RG_IMPL_FLAGS_ARG}" "-DOUT=${RG_IMPL_OUT}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/impl_digest.cmake
  DEPENDS ${RG_IMPL_SOURCES} ${CMAKE_CURRENT_SOURCE_DIR}/impl_digest.cmake
  COMMENT "ropegrad: implementation digest of the kernel sources"
  VERBATIM)
target_sources(rg_record PRIVATE ${RG_IMPL_OUT})

# The git revision the binary was built from (src/record/revision.cmake):
# recorded in the implementation object's spec as `revision`, beside (not in)
# the sources digest above, so that digest keeps its meaning.
find_package(Git QUIET)
set(RG_REVISION_OUT ${CMAKE_CURRENT_BINARY_DIR}/rg_revision.c)
add_custom_target(rg_revision
  COMMAND ${CMAKE_COMMAND} "-DGIT=${GIT_EXECUTABLE}" "-DROOT=${PROJECT_SOURCE_DIR}" "-DOUT=${RG_REVISION_OUT}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/revision.cmake
  BYPRODUCTS ${RG_REVISION_OUT}
  COMMENT "ropegrad: git revision of the checkout"
  VERBATIM)
target_sources(rg_record PRIVATE ${RG_REVISION_OUT})
add_dependencies(rg_record rg_revision)
