# SPDX-License-Identifier: Apache-2.0
# The examples of the README and of every docs page, run as written, top to
# bottom, one page at a time, each in a scratch folder laid out like a fresh
# clone (scripts/readme_examples.sh); a page without examples is still checked
# for sh blocks that say neither that they run nor why not. Serial: examples
# start `ropegrad serve` on port 8080.
if(NOT ROPEGRAD_SANITIZE)
  set(RG_EXAMPLES ${PROJECT_SOURCE_DIR}/scripts/readme_examples.sh)
  add_test(NAME readme_examples COMMAND bash ${RG_EXAMPLES} ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}/README.md)
  set_tests_properties(readme_examples PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
  file(GLOB_RECURSE RG_EXAMPLE_PAGES LIST_DIRECTORIES false CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
  list(SORT RG_EXAMPLE_PAGES)
  foreach(page ${RG_EXAMPLE_PAGES})
    file(RELATIVE_PATH rg_page ${PROJECT_SOURCE_DIR}/docs ${page})
    string(REGEX REPLACE "\\.md$" "" rg_page ${rg_page})
    string(REGEX REPLACE "[^A-Za-z0-9_]" "_" rg_page ${rg_page})
    add_test(NAME docs_examples_${rg_page} COMMAND bash ${RG_EXAMPLES} ${CMAKE_BINARY_DIR} ${page})
    set_tests_properties(docs_examples_${rg_page} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
  endforeach()
endif()
