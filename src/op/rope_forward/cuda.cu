/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the C API of 011's CUDA path; the kernels are in kernels.cuh.
// Same contract as every op's: validate on the host, launch on the caller's
// stream, return; no allocation, no sync.
#include "internal_cuda.h"
#include "kernels.cuh"

extern "C" {

int ropegrad_rope_forward_cuda(const ropegrad_rope_forward_problem *p, void *cuda_stream)
{
    int rc = ropegrad_rope_forward_validate(p);
    if (rc) return rc;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[3] = {p->position_ids, p->inv_freq, p->cos_sin};
    for (int i = 0; i < 3; i++)
        if ((rc = rg_check_device_ptr(ptrs[i])) != ROPEGRAD_OK) return rc;
    if (rg_rope_forward_launch(p, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

}  // extern "C"
