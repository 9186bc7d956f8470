/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the CUDA path of the packed-sequence table ops: the forward's C
// API, and rg_thd_cuda, which the backward's entry point
// (rope_apply_thd_backward/) calls with the sign -1; the kernel is in
// kernels.cuh. Validate on the host, launch on the caller's stream, return:
// no allocation, no sync.
#include "internal_cuda.h"
#include "kernels.cuh"

extern "C" {

int rg_thd_cuda(const ropegrad_rope_apply_thd_problem *p, float sign, void *cuda_stream)
{
    if (p->shape.num_heads + p->shape.num_kv_heads >= ((int64_t)1 << 30)) return ROPEGRAD_ERR_UNSUPPORTED;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[8] = {p->q,   p->k,   p->cu_seqlens ? NULL : p->position_ids, p->cu_seqlens,
                           p->cos, p->sin, p->q_out,                               p->k_out};
    const int rc = rg_check_device_ptrs(ptrs, 8);
    if (rc != ROPEGRAD_OK) return rc;
    if (rg_thd_launch(p, sign, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_thd_cuda(const ropegrad_rope_apply_thd_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_thd_validate(p);
    return rc ? rc : rg_thd_cuda(p, 1.0f, cuda_stream);
}

}  // extern "C"
