/* SPDX-License-Identifier: Apache-2.0 */
/* internal_cuda.h -- host helpers shared by the ops' CUDA entry points (not public). */
#ifndef ROPEGRAD_OP_INTERNAL_CUDA_H
#define ROPEGRAD_OP_INTERNAL_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/* ROPEGRAD_OK when the GPU can dereference ptr (device, managed or mapped
 * host memory), else ROPEGRAD_ERR_NOT_DEVICE_POINTER (cuda_common.cu). */
int rg_check_device_ptr(const void *ptr);

/* rg_check_device_ptr of every non-NULL pointer of ptrs[n]: the first error, else ROPEGRAD_OK. */
int rg_check_device_ptrs(const void *const *ptrs, int n);

#ifdef __cplusplus
}
#endif

#endif
