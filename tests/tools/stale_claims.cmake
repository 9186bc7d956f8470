# SPDX-License-Identifier: Apache-2.0
# tests/tools/stale_claims.py (issue 28): dead public functions, comments naming
# files that do not exist or kernels the code does not launch, the README's
# count of its parts. Skipped (77) without python3.
rg_python_test(stale_claims tests/tools/stale_claims.py ${PROJECT_SOURCE_DIR})
set_tests_properties(stale_claims PROPERTIES TIMEOUT 60)
