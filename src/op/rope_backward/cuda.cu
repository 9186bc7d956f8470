/* SPDX-License-Identifier: Apache-2.0 */
// cuda.cu -- the C API of 014's CUDA path. The kernels themselves are in
// kernels.cuh (one file, also embedded verbatim by `ropegrad export-solution`).
//
// Contract: validate on the host, launch on the caller's stream, return. No
// allocation, no synchronization, no global mutable state: two host threads
// may call this at once on two streams.
#include "internal_cuda.h"
#include "kernels.cuh"

// The versions the library ships: 14 (the default, also asked for as 0) in
// kernels.cuh, with its fallbacks 12, 10 and 2; every other version lives in
// dev/rope_backward/backward_kernels.cuh, built by dev/rope_backward/dev_kernels.cu.
#define RG_KERNEL_COUNT 14    // highest version number shipped
#define RG_KERNEL_DEFAULT 14  // ROPEGRAD_CUDA_KERNEL_DEFAULT (tests/test_gpu_kernel.c checks they agree)
static inline bool rg_kernel_shipped(int kernel) { return kernel == 0 || kernel == RG_KERNEL_DEFAULT; }

extern "C" {

int ropegrad_backward_cuda_kernel(const ropegrad_problem *p, int kernel, void *cuda_stream)
{
    int rc = ropegrad_validate(p);
    if (rc) return rc;
    if (!rg_kernel_shipped(kernel)) return ROPEGRAD_ERR_BAD_KERNEL;
    if (!ropegrad_cuda_available()) return ROPEGRAD_ERR_NO_CUDA;
    const void *ptrs[5] = {p->grad_cos, p->grad_sin, p->emb, p->inv_freq, p->grad_position_ids};
    for (int i = 0; i < 5; i++)
        if ((rc = rg_check_device_ptr(ptrs[i])) != ROPEGRAD_OK) return rc;
    if (rg_cuda_launch(p, kernel, (cudaStream_t)cuda_stream) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    return ROPEGRAD_OK;
}

int ropegrad_backward_cuda(const ropegrad_problem *p, void *cuda_stream)
{
    return ropegrad_backward_cuda_kernel(p, 0, cuda_stream);
}

int ropegrad_rope_backward_cuda(const ropegrad_problem *p, void *cuda_stream)
{
    return ropegrad_backward_cuda_kernel(p, 0, cuda_stream);
}

int ropegrad_cuda_kernel_count(void) { return RG_KERNEL_COUNT; }

const char *ropegrad_cuda_kernel_name(int kernel)
{
    return kernel == 0 ? "default" : kernel == RG_KERNEL_DEFAULT ? "14-2d-ept4" : NULL;
}

}  // extern "C"
