# SPDX-License-Identifier: Apache-2.0
# The index in a real browser: tests/index/index_browser.py drives Debian's
# chromium (chromium-driver, python3-selenium) against `ropegrad serve`.
# It exits 77 (skipped, with the reason) when any of them is missing.
# Debian's python3 (where python3-selenium lives), not one earlier on PATH.
if(NOT ROPEGRAD_SANITIZE)
  if(EXISTS /usr/bin/python3)
    set(_rg_py /usr/bin/python3)
  else()
    set(_rg_py python3)
  endif()
  add_test(NAME index_browser COMMAND ${_rg_py} ${CMAKE_CURRENT_SOURCE_DIR}/index_browser.py $<TARGET_FILE:ropegrad>)
  set_tests_properties(index_browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()

# The load benchmark's filler (bench/serve_load.sh), built with the tests; not a test.
add_executable(serve_fill ${PROJECT_SOURCE_DIR}/bench/serve_fill.c)
target_link_libraries(serve_fill PRIVATE rg_record rg_harness libropegrad ${M_LIBRARY})
set_target_properties(serve_fill PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
# The CPU time of an uncached run page, without HTTP (bench/serve_load.sh); not a test.
add_executable(serve_page_cost ${PROJECT_SOURCE_DIR}/bench/serve_page_cost.c)
target_link_libraries(serve_page_cost PRIVATE rg_index rg_record rg_harness libropegrad ${M_LIBRARY})
set_target_properties(serve_page_cost PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
