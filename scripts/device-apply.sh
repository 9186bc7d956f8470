#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The apply ops' device call (issue 27), sized for one 10-minute device command:
# the GPU tests of every op and the torch drop-in on CUDA, then scripts/device-ops.sh's
# steps apply (088/068 suites + floors), hf (real client on CUDA + bench/hf_step.py) and
# applypeers (eager, torch.compile, Liger: bench/vs_torch_apply.py), each under its own
# time limit, each step's files in $OUT/<step>/results.tar.gz.
#   run(command="bash scripts/device-apply.sh", carry=["build-device", "bench/wheels"])
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/device-apply}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/build-device/lib
( for t in test_gpu_rope_apply test_gpu_kernel test_gpu_forward test_plugin_gpu; do echo "== $t"; timeout 60 build-device/tests/$t 2>&1 | tail -4; done
  echo "== test_rope_apply_torch (cuda)"; ROPEGRAD_LIB=$PWD/build-device/libropegrad.so PYTHONPATH=$PWD/python timeout 90 python3 python/tests/test_rope_apply_torch.py 2>&1 | tail -6 ) > $OUT/gpu-tests.txt 2>&1
unset LD_LIBRARY_PATH
run_step() { local s=$1 t=$2; mkdir -p $OUT/$s /tmp/rgw-$s; W=/tmp/rgw-$s OUT=$OUT/$s timeout -k 5 $t env STEPS=$s bash scripts/device-ops.sh > /tmp/rgw-$s/ops-stdout.txt 2>&1; echo "exit $?" >> /tmp/rgw-$s/ops-stdout.txt; [ -f $OUT/$s/results.tar.gz ] || tar -czf $OUT/$s/results.tar.gz -C /tmp/rgw-$s .; tail -30 /tmp/rgw-$s/ops-stdout.txt; }
run_step apply 240
run_step hf 220
run_step applypeers 250
rm -f $OUT/*/logs.tar.gz
cat $OUT/gpu-tests.txt
