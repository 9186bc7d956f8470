# SPDX-License-Identifier: Apache-2.0
# `cmake --install`: the library (versioned SONAME, no RUNPATH), ropegrad.h,
# a pkg-config file and a CMake package (find_package(ropegrad) gives
# ropegrad::ropegrad). The CLI and the suites are installed where they are
# built (src/cli/CMakeLists.txt, the top-level CMakeLists.txt).
include(CMakePackageConfigHelpers)
install(TARGETS libropegrad EXPORT ropegradTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The plugin ABI (`ropegrad bench --impl`) and the bf16/fp16 widening a plugin
# may use (ropegrad_dtype.h, static inline): headers only, beside ropegrad.h.
install(FILES ${PROJECT_SOURCE_DIR}/include/ropegrad_impl.h ${PROJECT_SOURCE_DIR}/include/ropegrad_dtype.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(RG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ropegrad)
install(EXPORT ropegradTargets NAMESPACE ropegrad:: DESTINATION ${RG_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ropegradConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ropegradConfig.cmake INSTALL_DESTINATION ${RG_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ropegradConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ropegradConfig.cmake ${PROJECT_BINARY_DIR}/ropegradConfigVersion.cmake
  DESTINATION ${RG_CMAKE_DIR})
# pkg-config: relocatable (the prefix is found from the .pc file's own
# folder, so `cmake --install --prefix P` works for any P).
file(RELATIVE_PATH RG_PC_UP /rg/${CMAKE_INSTALL_LIBDIR}/pkgconfig /rg)
string(REGEX REPLACE "/$" "" RG_PC_UP "${RG_PC_UP}")
foreach(v LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${v}}")
    set(RG_PC_${v} "${CMAKE_INSTALL_${v}}")
  else()
    set(RG_PC_${v} "\${prefix}/${CMAKE_INSTALL_${v}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/ropegrad.pc.in ${PROJECT_BINARY_DIR}/ropegrad.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ropegrad.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/CITATION.cff
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
