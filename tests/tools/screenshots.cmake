# SPDX-License-Identifier: Apache-2.0
# The docs' screenshots are as new as the renderer: docs/img/screenshots.sha256
# (written by scripts/screenshot.sh) must equal the digest of the page
# sources now (scripts/page_sources.sh); else rerun the script.
add_test(NAME screenshots_fresh COMMAND bash -c
  "now=$(bash scripts/page_sources.sh) && shot=$(cat docs/img/screenshots.sha256) && [ \"$now\" = \"$shot\" ] || { echo \"docs/img/*.png are older than the page sources ($shot, now $now): run bash scripts/screenshot.sh\"; exit 1; }"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
