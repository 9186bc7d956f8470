// SPDX-License-Identifier: Apache-2.0
// kernel.cu -- the plain CUDA entry of the example plugin (plugin.c): one
// thread per (b, s) row, a loop over the H frequencies, float32 throughout.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "ropegrad_impl.h"

__device__ static float grad_at(const void *g, ropegrad_dtype dt, int64_t i)
{
    if (dt == ROPEGRAD_F32) return static_cast<const float *>(g)[i];
    if (dt == ROPEGRAD_BF16) return __bfloat162float(static_cast<const __nv_bfloat16 *>(g)[i]);
    return __half2float(static_cast<const __half *>(g)[i]);
}

__global__ static void plain014_kernel(ropegrad_rope_backward_problem p)
{
    const int64_t rows = p.batch_size * p.seq_len, H = p.head_dim / 2;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const int64_t b = r / p.seq_len, base = r * p.head_dim;
    const float *inv = p.inv_freq + b * p.inv_freq_batch_stride;
    float acc = 0.0f;
    for (int64_t d = 0; d < H; d++) {
        const float gc = grad_at(p.grad_cos, p.grad_dtype, base + d) + grad_at(p.grad_cos, p.grad_dtype, base + d + H);
        const float gs = grad_at(p.grad_sin, p.grad_dtype, base + d) + grad_at(p.grad_sin, p.grad_dtype, base + d + H);
        const float e = p.emb[base + d];
        acc += inv[d] * (gs * cosf(e) - gc * sinf(e));
    }
    p.grad_position_ids[r] = p.attention_scaling * acc;
}

extern "C" int plain014_cuda(const void *problem, void *cuda_stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    if (!p) return ROPEGRAD_ERR_NULL_PROBLEM;
    const int64_t rows = p->batch_size * p->seq_len;
    if (rows < 1) return ROPEGRAD_ERR_BAD_SIZE;
    const unsigned threads = 256, blocks = static_cast<unsigned>((rows + threads - 1) / threads);
    plain014_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(cuda_stream)>>>(*p);
    return cudaGetLastError() == cudaSuccess ? ROPEGRAD_OK : ROPEGRAD_ERR_CUDA;
}
