# SPDX-License-Identifier: Apache-2.0
# test_worker: the supervised worker (src/harness/worker.h) against plugins
# that end, crash or sleep from inside (tests/harness/plugins/worker_attack.c,
# one per ATTACK_* variant: tests/plugins/libattack_<variant>.so; the
# function is plugin.cmake's).
rg_test_plugin_variants(test_worker worker_attack.c attack ATTACK exit0 _exit0 quick_exit0 segv abort sleep_ctor sleep_desc)
add_dependencies(test_worker plain014)
set_tests_properties(test_worker PROPERTIES TIMEOUT 300)
