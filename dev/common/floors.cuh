/* SPDX-License-Identifier: Apache-2.0 */
// floors.cuh -- floor kernels of the three ops for the developer tools
// (dev/common/probe.cu, dev/rope_forward/dev_forward.cu, dev/rope_backward/dev_kernels.cu): kernels that move
// exactly the bytes an op must move -- every input byte it must read, every
// output byte it must write -- and compute nothing, in a few access patterns.
// Each folds what it read into what it stores, so no load can be dropped. The
// best of them, timed the protocol's way, is the figure a kernel is held to.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

static __device__ __forceinline__ uint32_t fl_fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

// 011: per row, position_ids (8 B) read and 512 B written (32 x 16 B), and the
// 256 B of inv_freq (the same for every row) read by every thread group.
static __global__ void fl11_t16(const int64_t *pos, const uint4 *inv, uint4 *out, int64_t rows)  // ropegrad's pattern
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, r = t >> 4;
    const int k = (int)(t & 15);
    if (r >= rows) return;
    const uint32_t p = (uint32_t)pos[r] ^ fl_fold(__ldg(inv + k));
    const uint4 v = make_uint4(p, p + 1, p + 2, (uint32_t)k);
    out[r * 32 + k] = v;
    out[r * 32 + k + 16] = v;
}
static __global__ void fl11_t32(const int64_t *pos, const uint4 *inv, uint4 *out, int64_t rows)
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, r = t >> 5;
    if (r >= rows) return;
    const uint32_t p = (uint32_t)pos[r] ^ fl_fold(__ldg(inv + (t & 15)));
    out[t] = make_uint4(p, p + 1, p + 2, (uint32_t)t);
}
static __global__ void fl11_grid(const int64_t *pos, const uint4 *inv, uint4 *out, int64_t rows)
{
    const uint32_t f = fl_fold(__ldg(inv + (threadIdx.x & 15)));
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows * 32; i += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t p = (uint32_t)pos[i >> 5] ^ f;
        out[i] = make_uint4(p, p + 1, p + 2, (uint32_t)i);
    }
}

// 012: per row, 256 B read (freqs), 2 x 256 B written (cos, sin).
static __global__ void fl12_t8(const uint4 *in, uint4 *cos_out, uint4 *sin_out, int64_t rows)  // ropegrad's pattern
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, r = t >> 3;
    const int k = (int)(t & 7);
    if (r >= rows) return;
    const uint4 a = in[r * 16 + 2 * k], b = in[r * 16 + 2 * k + 1];
    const uint4 c = make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
    const uint4 s = make_uint4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    cos_out[r * 16 + k] = c;
    cos_out[r * 16 + k + 8] = c;
    sin_out[r * 16 + k] = s;
    sin_out[r * 16 + k + 8] = s;
}
static __global__ void fl12_t16(const uint4 *in, uint4 *cos_out, uint4 *sin_out, int64_t rows)
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, r = t >> 4;
    const int k = (int)(t & 15);
    if (r >= rows) return;
    const uint4 a = in[r * 16 + k];
    const int kk = k >> 1;   // 16 threads cover the 8 output uint4 of each half: thread pairs split cos / sin
    const uint4 v = make_uint4(a.x, a.y ^ (uint32_t)k, a.z, a.w);
    uint4 *o = (k & 1) ? sin_out : cos_out;
    o[r * 16 + kk] = v;
    o[r * 16 + kk + 8] = v;
}
static __global__ void fl12_t32(const uint4 *in, uint4 *cos_out, uint4 *sin_out, int64_t rows)
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, r = t >> 5;
    const int l = (int)(t & 31), q = l & 15;
    if (r >= rows) return;
    const uint4 a = in[r * 16 + 2 * (q & 7)], b = in[r * 16 + 2 * (q & 7) + 1];
    const uint4 v = make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
    ((l >> 4) ? sin_out : cos_out)[r * 16 + q] = v;
}

// 014 (head_dim 128, 2-byte grads): 16 threads per row read its bytes any
// kernel must read -- grad_cos and grad_sin (256 B each), emb's first half
// (256 B), its batch's inv_freq (256 B, 64 floats at batch stride 64) -- with
// 16-byte stream loads, and one float is stored per row. S: rows per batch.
static __global__ void fl14_read_store(const uint4 *gc, const uint4 *gs, const uint4 *emb, const uint4 *inv, int64_t S,
                                       int64_t rows, float *out)
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, r = t >> 4;
    const int j = t & 15;
    if (r >= rows) return;
    uint4 a, b, c;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a.x), "=r"(a.y), "=r"(a.z), "=r"(a.w) : "l"(gc + r * 16 + j));
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(b.x), "=r"(b.y), "=r"(b.z), "=r"(b.w) : "l"(gs + r * 16 + j));
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(c.x), "=r"(c.y), "=r"(c.z), "=r"(c.w) : "l"(emb + r * 32 + j));
    const uint4 d = __ldg(inv + (r / S) * 16 + j);
    float v = __uint_as_float((fl_fold(a) ^ fl_fold(b) ^ fl_fold(c) ^ fl_fold(d)) & 0x3fffffffu);
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (j == 0) out[r] = v;
}
