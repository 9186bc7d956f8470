# SPDX-License-Identifier: Apache-2.0
# tests/tools/no_diary.py: no tracked text file reads as a working diary or
# says how the machines were obtained or driven (recorded data excepted).
# Skipped (77) without python3 or outside a git checkout.
rg_python_test(no_diary tests/tools/no_diary.py ${PROJECT_SOURCE_DIR})
set_tests_properties(no_diary PROPERTIES TIMEOUT 60)
