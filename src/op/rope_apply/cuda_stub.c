/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_stub.c -- 088's CUDA entry point in a build without CUDA (compiled
 * instead of the .cu files when nvcc is not found: src/op/CMakeLists.txt). */
#include "ropegrad.h"

int ropegrad_rope_apply_cuda(const ropegrad_rope_apply_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}
