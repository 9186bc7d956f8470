/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the C API of 014's CUDA path. The kernel itself is in
// kernels.cuh (one file, also embedded verbatim by `ropegrad export-solution`).
//
// Contract: validate on the host, launch on the caller's stream, return. No
// allocation, no synchronization, no global mutable state: two host threads
// may call this at once on two streams.
#include "internal_cuda.h"
#include "kernels.cuh"

extern "C" {

int ropegrad_rope_backward_cuda(const ropegrad_rope_backward_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_backward_validate(p);
    if (rc) return rc;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[5] = {p->grad_cos, p->grad_sin, p->emb, p->inv_freq, p->grad_position_ids};
    for (int i = 0; i < 5; i++)
        if ((rc = rg_check_device_ptr(ptrs[i])) != ROPEGRAD_OK) return rc;
    if (rg_cuda_launch(p, 0, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

}  // extern "C"
