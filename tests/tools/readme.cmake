# SPDX-License-Identifier: Apache-2.0
# The README's examples, run as written, top to bottom, in a scratch folder
# laid out like a fresh clone (scripts/readme_examples.sh). Serial: an
# example starts `ropegrad serve` on the README's port 8080.
if(NOT ROPEGRAD_SANITIZE)
  add_test(NAME readme_examples COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/readme_examples.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(readme_examples PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
endif()
