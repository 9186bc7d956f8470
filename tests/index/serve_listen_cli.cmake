# SPDX-License-Identifier: Apache-2.0
# `ropegrad serve --listen` end to end: a name that does not resolve refused in
# one line, localhost:0 and [::1]:0 answering at the printed URL (tests/index/serve_listen_cli.sh).
add_test(NAME serve_listen_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/serve_listen_cli.sh $<TARGET_FILE:ropegrad>)
set_tests_properties(serve_listen_cli PROPERTIES TIMEOUT 120)
