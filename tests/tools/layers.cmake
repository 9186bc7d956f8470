# SPDX-License-Identifier: Apache-2.0
# The layers (tests/tools/layers.py, issue 39): the library includes nothing
# of the harness, the record and the index nothing of the harness or the CLI,
# and rg_util, rg_result, rg_record and rg_index neither link nor call
# rg_harness, libropegrad, cudart or CUPTI (their link lines as CMake has them,
# and their undefined symbols against what those define). layers_selftest:
# the checker finds violations planted in small trees and archives.
# Skipped (77) without python3.
set(RG_LAYER_LIBS rg_util rg_result rg_record rg_index)
set(_rg_lines "")
foreach(t ${RG_LAYER_LIBS})
  string(APPEND _rg_lines "${t}: $<TARGET_PROPERTY:${t},LINK_LIBRARIES>\n")
endforeach()
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/tests/layers-links.txt CONTENT "${_rg_lines}")
set(_rg_args --root ${PROJECT_SOURCE_DIR} --links ${CMAKE_BINARY_DIR}/tests/layers-links.txt)
foreach(t ${RG_LAYER_LIBS})
  list(APPEND _rg_args --lib ${t} --check ${t}=$<TARGET_FILE:${t}>)
endforeach()
list(APPEND _rg_args --forbid rg_harness=$<TARGET_FILE:rg_harness> --forbid libropegrad=$<TARGET_FILE:libropegrad>)
if(ROPEGRAD_HAVE_CUDA)
  list(APPEND _rg_args --forbid cudart=$<TARGET_FILE:CUDA::cudart_static> --forbid cupti=$<TARGET_FILE:CUDA::cupti>)
endif()
rg_python_test(layers tests/tools/layers.py ${_rg_args})
add_test(NAME layers_selftest COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/layers_selftest.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(layers layers_selftest PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
