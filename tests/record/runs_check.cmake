# SPDX-License-Identifier: Apache-2.0
# test_runs_check times two CPU runs of the same code and expects SAME: it runs
# alone (RUN_SERIAL) so other tests do not load the machine meanwhile.
set_tests_properties(test_runs_check PROPERTIES RUN_SERIAL TRUE)
