/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_stub.c -- the CUDA entry points of a CPU-only build (no nvcc found). */
#include "internal.h"
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

int ropegrad_cuda_kernel_count(void) { return 0; }
const char *ropegrad_cuda_kernel_name(int kernel) { return NULL; }
int ropegrad_cuda_available(void) { return 0; }

int ropegrad_rope_forward_cuda(const ropegrad_rope_forward_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_forward_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}

int ropegrad_cos_sin_cuda(const ropegrad_cos_sin_problem *p, void *cuda_stream)
{
    int rc = ropegrad_cos_sin_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}

int ropegrad_rope_backward_cuda(const ropegrad_problem *p, void *cuda_stream)
{
    return ropegrad_backward_cuda(p, cuda_stream);
}

int ropegrad_rope_apply_cuda(const ropegrad_rope_apply_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}

int ropegrad_rope_apply_backward_cuda(const ropegrad_rope_apply_backward_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_backward_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}
