/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_pos_backward.c -- the backward of applying the rotary embedding
 * from positions: grad_x = the incoming gradient rotated by minus the angle
 * (ropegrad.h). Its checks, reference and CPU path are the forward's with
 * the rotation's sign -1 (rope_apply_pos/rope_apply_pos.h), and so is its
 * CUDA path (rope_apply_pos/cuda.cu, or its stub without CUDA). */
#include "rope_apply_pos/rope_apply_pos.h"

int ropegrad_rope_apply_pos_backward_validate(const ropegrad_rope_apply_pos_problem *p)
{
    return rg_pos_validate(p, 1);
}

int ropegrad_rope_apply_pos_backward_reference(const ropegrad_rope_apply_pos_problem *p, double *out)
{
    return rg_pos_reference(p, -1.0f, out);
}

int ropegrad_rope_apply_pos_backward_cpu(const ropegrad_rope_apply_pos_problem *p, int num_threads)
{
    int rc = ropegrad_rope_apply_pos_backward_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    if ((rc = rg_pos_check_seqlens(p)) != ROPEGRAD_OK) return rc;
    rg_pos_cpu(p, -1.0f, num_threads);
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_pos_backward_cuda(const ropegrad_rope_apply_pos_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_pos_backward_validate(p);
    return rc ? rc : rg_pos_cuda(p, -1.0f, cuda_stream);
}
