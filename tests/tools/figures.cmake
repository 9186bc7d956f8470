# SPDX-License-Identifier: Apache-2.0
# The benchmark figures of the README, of the docs pages that hold figures
# blocks and of bench/NOTES.md come from the result files
# (bench/readme_figures.py); readme_figures_check fails when a marked block
# differs from what the files give, figures_drift that the check notices a
# changed figure. Skipped (77, with the reason) when there is no python3.
find_package(Python3 COMPONENTS Interpreter QUIET)
set(RG_FIGURE_PAGES ${PROJECT_SOURCE_DIR}/README.md)
file(GLOB_RECURSE RG_DOC_PAGES LIST_DIRECTORIES false ${PROJECT_SOURCE_DIR}/docs/*.md)
list(SORT RG_DOC_PAGES)
foreach(page ${RG_DOC_PAGES})
  file(STRINGS ${page} rg_has_figures REGEX "<!-- figures:[a-z0-9-]+ -->" LIMIT_COUNT 1)
  if(rg_has_figures)
    list(APPEND RG_FIGURE_PAGES ${page})
  endif()
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${RG_DOC_PAGES})
foreach(t check drift)
  if(NOT Python3_Interpreter_FOUND)
    add_test(NAME readme_figures_${t}
             COMMAND sh -c "echo 'skip: python3 not found, bench/readme_figures.py needs it'; exit 77")
  elseif(t STREQUAL "check")
    add_test(NAME readme_figures_${t} COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/bench/readme_figures.py
             --check ${RG_FIGURE_PAGES} ${PROJECT_SOURCE_DIR}/bench/NOTES.md)
  else()
    add_test(NAME readme_figures_${t} COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/tests/tools/figures_drift.py
             ${PROJECT_SOURCE_DIR})
  endif()
  set_tests_properties(readme_figures_${t} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endforeach()
