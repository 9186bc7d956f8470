# SPDX-License-Identifier: Apache-2.0
# scripts/bench.sh shows the build's progress (issue 28): tests/tools/bench_script.sh
# runs it with stand-ins for cmake and dpkg-query on PATH (no real build) and
# checks a step line per ninja step on stderr, no configure noise, stdout left
# to the bench, and a failed build's output shown with a non-zero exit.
add_test(NAME bench_script_progress COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bench_script.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(bench_script_progress PROPERTIES TIMEOUT 60)
