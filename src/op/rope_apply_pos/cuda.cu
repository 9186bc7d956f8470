/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the CUDA path of applying the rotary embedding from positions:
// the forward's C API, and rg_pos_cuda, which the backward's entry point
// (rope_apply_pos_backward/) calls with the sign -1; the kernel is in
// kernels.cuh. Validate on the host, launch on the caller's stream, return:
// no allocation, no sync.
#include "internal_cuda.h"
#include "kernels.cuh"

extern "C" {

int rg_pos_cuda(const ropegrad_rope_apply_pos_problem *p, float sign, void *cuda_stream)
{
    if (p->shape.num_heads + p->shape.num_kv_heads >= ((int64_t)1 << 30)) return ROPEGRAD_ERR_UNSUPPORTED;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[7] = {p->q,        p->k,       p->cu_seqlens ? NULL : p->position_ids, p->cu_seqlens,
                           p->inv_freq, p->q_out,   p->k_out};
    int rc = rg_check_device_ptrs(ptrs, 7);
    if (rc != ROPEGRAD_OK) return rc;
    if (rg_pos_launch(p, sign, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_pos_cuda(const ropegrad_rope_apply_pos_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_pos_validate(p);
    return rc ? rc : rg_pos_cuda(p, 1.0f, cuda_stream);
}

}  // extern "C"
