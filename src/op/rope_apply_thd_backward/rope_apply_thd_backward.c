/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_thd_backward.c -- the backward of applying the rotary embedding
 * to packed sequences from one table: grad_x = the incoming gradient rotated
 * by minus the angle (ropegrad.h; no table gradient). Its checks, reference
 * and CPU path are the forward's with the rotation's sign -1
 * (rope_apply_thd/rope_apply_thd.h), and so is its CUDA path
 * (rope_apply_thd/cuda.cu, or its stub without CUDA). */
#include "rope_apply_thd/rope_apply_thd.h"

int ropegrad_rope_apply_thd_backward_validate(const ropegrad_rope_apply_thd_problem *p)
{
    return rg_thd_validate(p, 1);
}

int ropegrad_rope_apply_thd_backward_reference(const ropegrad_rope_apply_thd_problem *p, double *out)
{
    return rg_thd_reference(p, -1.0f, out);
}

int ropegrad_rope_apply_thd_backward_cpu(const ropegrad_rope_apply_thd_problem *p, int num_threads)
{
    return rg_thd_cpu(p, -1.0f, num_threads);
}

int ropegrad_rope_apply_thd_backward_cuda(const ropegrad_rope_apply_thd_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_thd_backward_validate(p);
    return rc ? rc : rg_thd_cuda(p, -1.0f, cuda_stream);
}
