// SPDX-License-Identifier: Apache-2.0
// cheat_cuda.cu -- CUDA plugins for 014 that compute correctly (through the
// library's CUDA kernel) but cheat the measurement, one per CHEAT_*
// definition, and one that is honest but does extra work on a stream of its
// own, for test_gpu_reward_hack (tests/harness/reward_hack.cmake builds each variant
// when CUDA is built):
//
//   CHEAT_CACHE   results cached by input pointer: the same grad_cos address
//                 gets the first call's output back (a device-to-device copy)
//   CHEAT_LAZY    launches the kernel on its first call only, then nothing
//   CHEAT_ALIAS   also keeps its output in an input's memory (grad_cos): the
//                 C counterpart of returning a view of an input
//   CHEAT_SWITCH  launches one more (empty) kernel on every third call: the
//                 timed iterations do not all launch the same kernels
//   SIDE_STREAM   honest, plus a 256 MiB cudaMemsetAsync and a 64 MiB
//                 device-to-device cudaMemcpyAsync on a stream of its own,
//                 every call: counted in the span with --span all only
#include <cuda_runtime.h>

#include "ropegrad_impl.h"

static int compute(const ropegrad_rope_backward_problem *p, cudaStream_t st) { return ropegrad_rope_backward_cuda(p, st); }

#if defined(CHEAT_CACHE) || defined(CHEAT_ALIAS)
static size_t output_bytes(const ropegrad_rope_backward_problem *p)
{
    return static_cast<size_t>(p->batch_size * p->seq_len) * sizeof(float);
}
#endif

#if defined(CHEAT_CACHE)
static const void *cached_at;
static void *cached;
static size_t cached_bytes;
static int cheat(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    const size_t n = output_bytes(p);
    if (cached && cached_at == p->grad_cos && cached_bytes == n)
        return cudaMemcpyAsync(p->grad_position_ids, cached, n, cudaMemcpyDeviceToDevice, st) == cudaSuccess
                   ? ROPEGRAD_OK : ROPEGRAD_ERR_CUDA;
    int rc = compute(p, st);
    if (cached) cudaFree(cached);
    cached = nullptr;
    if (cudaMalloc(&cached, n) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    cached_at = p->grad_cos;
    cached_bytes = n;
    if (cudaMemcpyAsync(cached, p->grad_position_ids, n, cudaMemcpyDeviceToDevice, st) != cudaSuccess)
        return ROPEGRAD_ERR_CUDA;
    return rc;
}
#elif defined(CHEAT_LAZY)
static int calls;
static int cheat(const void *problem, void *stream)
{
    if (++calls > 1) return ROPEGRAD_OK;
    return compute(static_cast<const ropegrad_rope_backward_problem *>(problem), static_cast<cudaStream_t>(stream));
}
#elif defined(CHEAT_ALIAS)
static int cheat(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    int rc = compute(p, st);
    // The "view": the result also lives at the start of grad_cos.
    void *into = const_cast<void *>(p->grad_cos);
    if (cudaMemcpyAsync(into, p->grad_position_ids, output_bytes(p), cudaMemcpyDeviceToDevice, st) != cudaSuccess)
        return ROPEGRAD_ERR_CUDA;
    return rc;
}
#elif defined(CHEAT_SWITCH)
__global__ static void other_kernel(void) {}
static int calls;
static int cheat(const void *problem, void *stream)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    int rc = compute(static_cast<const ropegrad_rope_backward_problem *>(problem), st);
    if (++calls % 3 == 0) other_kernel<<<1, 32, 0, st>>>();
    return rc ? rc : cudaGetLastError() == cudaSuccess ? ROPEGRAD_OK : ROPEGRAD_ERR_CUDA;
}
#elif defined(SIDE_STREAM)
#define SIDE_MEMSET (256u << 20)
#define SIDE_COPY (64u << 20)
static cudaStream_t side;
static char *scratch;
static int cheat(const void *problem, void *stream)
{
    int rc = compute(static_cast<const ropegrad_rope_backward_problem *>(problem), static_cast<cudaStream_t>(stream));
    if (!side && cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    if (!scratch && cudaMalloc(&scratch, SIDE_MEMSET) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    if (cudaMemsetAsync(scratch, 0, SIDE_MEMSET, side) != cudaSuccess ||
        cudaMemcpyAsync(scratch + SIDE_COPY, scratch, SIDE_COPY, cudaMemcpyDeviceToDevice, side) != cudaSuccess)
        return ROPEGRAD_ERR_CUDA;
    return rc;
}
#endif

static const ropegrad_impl descriptor = {
    ROPEGRAD_IMPL_ABI_VERSION,
#if defined(SIDE_STREAM)
    "side-stream",
#else
    "cheat-cuda",
#endif
    "1",
    "014_rotary_embedding_with_attention_scaling_backward",
    cheat,
    nullptr,
};

extern "C" const ropegrad_impl *ropegrad_impl_descriptor(void)
{
    return &descriptor;
}
