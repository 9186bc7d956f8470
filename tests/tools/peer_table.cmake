# SPDX-License-Identifier: Apache-2.0
# scripts/figures/peer_table.py (the peer scripts' shared rows and tables) without
# torch: tests/tools/peer_table_test.py. Skipped (77) without python3.
rg_python_test(peer_table tests/tools/peer_table_test.py ${PROJECT_SOURCE_DIR})
set_tests_properties(peer_table PROPERTIES TIMEOUT 60)
