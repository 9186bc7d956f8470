# SPDX-License-Identifier: Apache-2.0
# ROPEGRAD_BUNDLE_RUNTIME: copy the shared libraries that a bare GPU machine
# lacks into <build>/lib, where the binaries' RPATH ($ORIGIN/lib,
# $ORIGIN/../lib) finds them: a build made on one machine runs unchanged on
# another (CMAKE_ARGS=-DROPEGRAD_BUNDLE_RUNTIME=ON scripts/gpu-build.sh).
# Bundled: every library the CLI and the cmocka tests load (SLEEF, cJSON,
# cmocka, SQLite, OpenSSL, libmicrohttpd, libcurl and what they load), less
# the C and C++ runtimes, OpenMP's and CUDA's, which such a machine has
# (cmake/bundle_libs.sh).
find_library(CMOCKA_LIBRARY_FOR_BUNDLE cmocka)
add_custom_target(bundle_runtime ALL
  COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/bundle_libs.sh ${CMAKE_BINARY_DIR}/lib
          $<TARGET_FILE:ropegrad> ${CMOCKA_LIBRARY_FOR_BUNDLE}
  COMMENT "Bundling the non-system shared libraries into ${CMAKE_BINARY_DIR}/lib")
add_dependencies(bundle_runtime ropegrad)
