/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_stub.c -- the CUDA path of the packed-sequence table ops in a build
 * without CUDA (compiled instead of the .cu files when nvcc is not found):
 * the forward's entry point and rg_thd_cuda, which the backward's calls. */
#include "rope_apply_thd.h"

int rg_thd_cuda(const ropegrad_rope_apply_thd_problem *p, float sign, void *cuda_stream)
{
    (void)p, (void)sign, (void)cuda_stream;
    return ROPEGRAD_ERR_NO_CUDA;
}

int ropegrad_rope_apply_thd_cuda(const ropegrad_rope_apply_thd_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_thd_validate(p);
    return rc ? rc : rg_thd_cuda(p, 1.0f, cuda_stream);
}
