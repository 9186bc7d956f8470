# SPDX-License-Identifier: Apache-2.0
# test_cli_output also unit-tests the figures the record commands print (src/cli/runs_format.c).
target_sources(test_cli_output PRIVATE ${PROJECT_SOURCE_DIR}/src/cli/runs_format.c)
target_include_directories(test_cli_output PRIVATE ${PROJECT_SOURCE_DIR}/src/cli)
