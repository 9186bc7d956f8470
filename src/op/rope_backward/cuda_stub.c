/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_stub.c -- 014's CUDA entry points in a build without CUDA (compiled
 * instead of the .cu files when nvcc is not found: src/op/CMakeLists.txt). */
#include "ropegrad.h"

int ropegrad_backward_cuda(const ropegrad_problem *p, void *cuda_stream)
{
    int rc = ropegrad_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}

int ropegrad_backward_cuda_kernel(const ropegrad_problem *p, int kernel, void *cuda_stream)
{
    int rc = ropegrad_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}

int ropegrad_rope_backward_cuda(const ropegrad_problem *p, void *cuda_stream)
{
    return ropegrad_backward_cuda(p, cuda_stream);
}

int ropegrad_cuda_kernel_count(void) { return 0; }
const char *ropegrad_cuda_kernel_name(int kernel) { return NULL; }
