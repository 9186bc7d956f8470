# SPDX-License-Identifier: Apache-2.0
# Licence and metadata (issue 12): every source file has its SPDX line
# (scripts/spdx.sh lists any without; `--fix` adds them), and the licence,
# citation and changelog files are there, the licence being Apache-2.0's full text.
add_test(NAME spdx_headers COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/spdx.sh
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME licence_files COMMAND sh -c
  "grep -q 'Apache License' LICENSE && grep -q 'END OF TERMS AND CONDITIONS' LICENSE && grep -q '^cff-version:' CITATION.cff && grep -q '^license: Apache-2.0' CITATION.cff && grep -q '^## \\[' CHANGELOG.md"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
