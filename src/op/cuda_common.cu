/* SPDX-License-Identifier: Apache-2.0 */
// cuda_common.cu -- what every op's CUDA path shares: the device-pointer check
// and whether a GPU is there. (A build without CUDA: cuda_stub.c.)
#include <cuda_runtime.h>

#include "internal_cuda.h"
#include "ropegrad.h"

extern "C" {

// Every tensor must be memory this GPU can dereference: device or managed
// allocations (or host memory mapped into the device's address space). Plain
// pageable host memory would fault inside the kernel, so it is refused here.
int rg_check_device_ptr(const void *ptr)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
        (void)cudaGetLastError();  // clear the error this query may leave behind
        return ROPEGRAD_ERR_NOT_DEVICE_POINTER;
    }
    if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) return ROPEGRAD_OK;
    if (a.type == cudaMemoryTypeHost && a.devicePointer == ptr) return ROPEGRAD_OK;
    return ROPEGRAD_ERR_NOT_DEVICE_POINTER;
}

int rg_check_device_ptrs(const void *const *ptrs, int n)
{
    for (int i = 0; i < n; i++) {
        if (!ptrs[i]) continue;
        int rc = rg_check_device_ptr(ptrs[i]);
        if (rc != ROPEGRAD_OK) return rc;
    }
    return ROPEGRAD_OK;
}

int ropegrad_cuda_available(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n > 0;
}

}  // extern "C"
