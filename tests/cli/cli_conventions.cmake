# SPDX-License-Identifier: Apache-2.0
# test_cli_conventions also unit-tests the CLI's option helpers (src/cli/cliopt.c).
target_sources(test_cli_conventions PRIVATE ${PROJECT_SOURCE_DIR}/src/cli/cliopt.c)
target_include_directories(test_cli_conventions PRIVATE ${PROJECT_SOURCE_DIR}/src/cli)
