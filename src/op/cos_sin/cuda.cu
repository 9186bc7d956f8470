/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the C API of 012's CUDA path; the kernels are in kernels.cuh.
// Same contract as every op's: validate on the host, launch on the caller's
// stream, return; no allocation, no sync.
#include "internal_cuda.h"
#include "kernels.cuh"

extern "C" {

int ropegrad_cos_sin_cuda_kernel(const ropegrad_cos_sin_problem *p, int kernel, void *cuda_stream)
{
    int rc = ropegrad_cos_sin_validate(p);
    if (rc) return rc;
    if (!ropegrad_cos_sin_kernel_name(kernel)) return ROPEGRAD_ERR_BAD_KERNEL;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[3] = {p->freqs, p->cos, p->sin};
    for (int i = 0; i < 3; i++)
        if ((rc = rg_check_device_ptr(ptrs[i])) != ROPEGRAD_OK) return rc;
    if (rg_cos_sin_launch_kernel(p, kernel, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

int ropegrad_cos_sin_cuda(const ropegrad_cos_sin_problem *p, void *cuda_stream)
{
    return ropegrad_cos_sin_cuda_kernel(p, 0, cuda_stream);
}

}  // extern "C"
