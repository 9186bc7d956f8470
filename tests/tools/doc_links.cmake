# SPDX-License-Identifier: Apache-2.0
# tests/tools/doc_links.py: every relative link of the README and of docs/
# names a file of the tree, and every #anchor a heading of its page. Skipped
# (77) without python3.
rg_python_test(doc_links tests/tools/doc_links.py ${PROJECT_SOURCE_DIR})
set_tests_properties(doc_links PROPERTIES TIMEOUT 60)
