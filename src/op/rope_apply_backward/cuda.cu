/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the C API of 068's CUDA path; the kernels are in kernels.cuh.
// Same contract as rope_backward/cuda.cu: validate on the host, launch on the
// caller's stream, return; no allocation, no sync.
#include "internal_cuda.h"
#include "kernels.cuh"

extern "C" {

int ropegrad_rope_apply_backward_cuda(const ropegrad_rope_apply_backward_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_backward_validate(p);
    if (rc) return rc;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[10] = {p->grad_q_out, p->grad_k_out, p->q, p->k, p->cos, p->sin,
                            p->grad_q, p->grad_k, p->grad_cos, p->grad_sin};
    if ((rc = rg_check_device_ptrs(ptrs, 10)) != ROPEGRAD_OK) return rc;
    if (rg_rope_apply_backward_launch(p, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

}  // extern "C"
