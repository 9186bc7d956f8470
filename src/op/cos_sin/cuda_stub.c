/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_stub.c -- 012's CUDA entry points in a build without CUDA (compiled
 * instead of the .cu files when nvcc is not found: src/op/CMakeLists.txt). */
#include "ropegrad.h"

int ropegrad_cos_sin_cuda(const ropegrad_cos_sin_problem *p, void *cuda_stream)
{
    int rc = ropegrad_cos_sin_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}

int ropegrad_cos_sin_cuda_kernel(const ropegrad_cos_sin_problem *p, int kernel, void *cuda_stream)
{
    (void)cuda_stream;
    int rc = ropegrad_cos_sin_validate(p);
    if (rc) return rc;
    return ropegrad_cos_sin_kernel_name(kernel) ? ROPEGRAD_ERR_NO_CUDA : ROPEGRAD_ERR_BAD_KERNEL;
}
