# SPDX-License-Identifier: Apache-2.0
# The documentation's benchmark figures come from the result files
# (scripts/figures.py); readme_figures_check fails when a marked block
# differs from what the files give, figures_drift that the check notices a
# changed figure. Skipped (77, with the reason) when there is no python3.
find_package(Python3 COMPONENTS Interpreter QUIET)
foreach(t check drift)
  if(NOT Python3_Interpreter_FOUND)
    add_test(NAME readme_figures_${t}
             COMMAND sh -c "echo 'skip: python3 not found, scripts/figures.py needs it'; exit 77")
  elseif(t STREQUAL "check")
    add_test(NAME readme_figures_${t} COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/scripts/figures.py --check)
  else()
    add_test(NAME readme_figures_${t} COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/tests/tools/figures_drift.py
             ${PROJECT_SOURCE_DIR})
  endif()
  set_tests_properties(readme_figures_${t} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endforeach()
