/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_stub.c -- the backward's CUDA entry point in a build without CUDA
 * (compiled instead of the .cu files when nvcc is not found). */
#include "ropegrad.h"

int ropegrad_rope_apply_pos_backward_cuda(const ropegrad_rope_apply_pos_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_pos_backward_validate(p);
    return rc ? rc : ROPEGRAD_ERR_NO_CUDA;
}
