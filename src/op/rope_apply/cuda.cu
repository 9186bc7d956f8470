/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the C API of the apply ops' CUDA paths (088, 068); the
// kernels are in kernels.cuh. Same contract as rope_backward/cuda.cu: validate on
// the host, launch on the caller's stream, return; no allocation, no sync.
#include "internal_cuda.h"
#include "kernels.cuh"

// ROPEGRAD_OK when every non-NULL pointer of ptrs[n] is GPU-accessible.
static int rg_apply_check_device(const void *const *ptrs, int n)
{
    for (int i = 0; i < n; i++) {
        if (!ptrs[i]) continue;
        int rc = rg_check_device_ptr(ptrs[i]);
        if (rc != ROPEGRAD_OK) return rc;
    }
    return ROPEGRAD_OK;
}

extern "C" {

int ropegrad_rope_apply_cuda(const ropegrad_rope_apply_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_validate(p);
    if (rc) return rc;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[6] = {p->q, p->k, p->cos, p->sin, p->q_out, p->k_out};
    if ((rc = rg_apply_check_device(ptrs, 6)) != ROPEGRAD_OK) return rc;
    if (rg_rope_apply_launch(p, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_backward_cuda(const ropegrad_rope_apply_backward_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_backward_validate(p);
    if (rc) return rc;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[10] = {p->grad_q_out, p->grad_k_out, p->q, p->k, p->cos, p->sin,
                            p->grad_q, p->grad_k, p->grad_cos, p->grad_sin};
    if ((rc = rg_apply_check_device(ptrs, 10)) != ROPEGRAD_OK) return rc;
    if (rg_rope_apply_backward_launch(p, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

}  // extern "C"
