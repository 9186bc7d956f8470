# SPDX-License-Identifier: Apache-2.0
# test_cpu_floor runs the bench tool build/bench/cpu_floor (bench/CMakeLists.txt).
add_dependencies(test_cpu_floor cpu_floor)
