# SPDX-License-Identifier: Apache-2.0
# ROPEGRAD_BUNDLE_RUNTIME: copy the Debian shared libraries that a bare GPU
# machine lacks (SLEEF, cJSON, cmocka) into <build>/lib, where the binaries'
# RPATH ($ORIGIN/lib, $ORIGIN/../lib) finds them: a build made on one machine
# runs unchanged on another (CMAKE_ARGS=-DROPEGRAD_BUNDLE_RUNTIME=ON scripts/gpu-build.sh).
find_library(CMOCKA_LIBRARY_FOR_BUNDLE cmocka)
set(_rg_bundle_cmds)
foreach(lib ${SLEEF_LIBRARY} ${CJSON_LIBRARY} ${CMOCKA_LIBRARY_FOR_BUNDLE})
  get_filename_component(_dir ${lib} DIRECTORY)
  get_filename_component(_name ${lib} NAME)
  file(GLOB _sonames ${_dir}/${_name}.[0-9])
  foreach(so ${_sonames})
    list(APPEND _rg_bundle_cmds COMMAND cp -L ${so} ${CMAKE_BINARY_DIR}/lib/)
  endforeach()
endforeach()
add_custom_target(bundle_runtime ALL
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/lib
  ${_rg_bundle_cmds}
  COMMENT "Bundling SLEEF/cJSON/cmocka shared libraries into ${CMAKE_BINARY_DIR}/lib")
