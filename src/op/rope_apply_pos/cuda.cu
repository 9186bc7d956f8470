/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the C API of the forward's CUDA path (applying the rotary embedding
// from positions); the kernel is rope_apply_pos/kernels.cuh. Validate on the
// host, launch on the caller's stream, return: no allocation, no sync.
#include "internal_cuda.h"
#include "kernels.cuh"

extern "C" {

int ropegrad_rope_apply_pos_cuda(const ropegrad_rope_apply_pos_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_pos_validate(p);
    if (rc) return rc;
    if (p->shape.num_heads + p->shape.num_kv_heads >= ((int64_t)1 << 30)) return ROPEGRAD_ERR_UNSUPPORTED;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[7] = {p->q, p->k, p->cu_seqlens ? NULL : p->position_ids, p->cu_seqlens, p->inv_freq, p->q_out, p->k_out};
    if ((rc = rg_check_device_ptrs(ptrs, 7)) != ROPEGRAD_OK) return rc;
    if (rg_pos_launch(p, 1.0f, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

}  // extern "C"
