// SPDX-License-Identifier: Apache-2.0
// gpu_bad.cu -- two plugins whose CUDA kernels misbehave, for
// test_plugin_gpu (tests/harness/plugin.cmake builds each variant):
//   GPU_FAULT  writes through a wild pointer: cudaErrorIllegalAddress, sticky
//   GPU_HANG   never finishes: stopped only by --timeout
// Their descriptors are valid; the launch itself succeeds.
#include <cuda_runtime.h>

#include "ropegrad_impl.h"

__global__ static void misbehave(float *out)
{
#if defined(GPU_FAULT)
    float *wild = reinterpret_cast<float *>(static_cast<uintptr_t>(0x10));
    wild[threadIdx.x] = 1.0f;
    out[threadIdx.x] = 0.0f;
#else
    for (;;) __nanosleep(1000000);   // asm volatile: the loop stays
#endif
}

static int launch(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    misbehave<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(p->grad_position_ids);
    return cudaGetLastError() == cudaSuccess ? ROPEGRAD_OK : ROPEGRAD_ERR_CUDA;
}

static const ropegrad_impl descriptor = {
    ROPEGRAD_IMPL_ABI_VERSION,
#if defined(GPU_FAULT)
    "gpu-fault",
#else
    "gpu-hang",
#endif
    "1",
    "014_rotary_embedding_with_attention_scaling_backward",
    launch,
    nullptr,
};

extern "C" const ropegrad_impl *ropegrad_impl_descriptor(void)
{
    return &descriptor;
}
