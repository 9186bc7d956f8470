/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the C API of 088's CUDA path; the kernels are in kernels.cuh.
// Same contract as rope_backward/cuda.cu: validate on the host, launch on the
// caller's stream, return; no allocation, no sync.
#include "internal_cuda.h"
#include "kernels.cuh"

extern "C" {

int ropegrad_rope_apply_cuda(const ropegrad_rope_apply_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_apply_validate(p);
    if (rc) return rc;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[6] = {p->q, p->k, p->cos, p->sin, p->q_out, p->k_out};
    if ((rc = rg_check_device_ptrs(ptrs, 6)) != ROPEGRAD_OK) return rc;
    if (rg_rope_apply_launch(p, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

}  // extern "C"
