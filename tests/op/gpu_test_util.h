/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_test_util.h -- what the ops' GPU tests share: CK (a CUDA call that must
 * succeed, else the test fails with its error), device buffers made from host
 * values or poisoned, their copies back, and the bit-for-bit check of a device
 * output. Include after cmocka.h and cuda_runtime_api.h, in a CUDA build.
 * Header-only (static inline): a .h is not a test executable.
 */
#ifndef RG_TEST_OP_GPU_TEST_UTIL_H
#define RG_TEST_OP_GPU_TEST_UTIL_H

#include <stdlib.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #x, cudaGetErrorString(e_));                     \
    } while (0)

/* Device memory of bytes (+ shift bytes before it, freed through *base):
 * a copy of src, or (src NULL) 0xff bytes. */
static inline void *dev_at(const void *src, size_t bytes, size_t shift, void **base)
{
    char *p = NULL;
    CK(cudaMalloc((void **)&p, bytes + shift + 1));
    *base = p;
    p += shift;
    if (src) CK(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice));
    else CK(cudaMemset(p, 0xff, bytes));
    return p;
}

/* A host copy (malloc'd) of bytes of device memory, after the device is idle. */
static inline void *host_copy(const void *dev, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    assert_non_null(p);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(p, dev, bytes, cudaMemcpyDeviceToHost));
    return p;
}

/* Device output dev (bytes) equal to host values h. */
static inline void assert_dev_equal(const void *dev, const void *h, size_t bytes)
{
    void *x = host_copy(dev, bytes);
    assert_memory_equal(x, h, bytes);
    free(x);
}

#endif
