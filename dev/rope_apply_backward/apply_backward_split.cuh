/* SPDX-License-Identifier: Apache-2.0 */
// apply_backward_split.cuh -- development version of 068's kernel with
// grad_cos/grad_sin (its "even" variant shipped as rg_apply_columns_split,
// now the fallback of the staged kernel; dev/rope_apply/apply_floor.cu times these
// beside the shipped kernel and the floors).
//
// The former shipped kernel (rg_apply_columns_vec) gave one thread a VEC-wide column of one
// cos/sin row and loops over every head of q and k (40 in the suite): a
// B=1, S=293 workload is then 9,376 threads, about 70 per SM, each with a
// serial chain of 40 head rows -- too few loads in flight to cover HBM
// latency. Here one block owns one cos/sin row: its L = H/VEC lanes cover the
// row's pairs and its G = 256/L groups split the heads between them (head
// g, g+G, ...), so the same workload runs 75,008 threads; each group's sums
// of the four products are added across groups in shared memory, and the
// row's grad_cos/grad_sin are written once, contiguously. The head sum's
// order changes (groups, then across groups), not the rotation's bits.
#pragma once

#include "rope_apply_backward/kernels.cuh"

// fp32 loads and stores of 4 values, cached normally or streamed (evict first:
// q, k and the gradients are touched once).
template <bool STREAM>
static __device__ __forceinline__ void dev_ld4(const float *p, uint32_t i, float (&f)[4])
{
    const float4 v = STREAM ? __ldcs(reinterpret_cast<const float4 *>(p + i)) : *reinterpret_cast<const float4 *>(p + i);
    f[0] = v.x, f[1] = v.y, f[2] = v.z, f[3] = v.w;
}
template <bool STREAM>
static __device__ __forceinline__ void dev_st4(float *p, uint32_t i, const float (&f)[4])
{
    const float4 v = make_float4(f[0], f[1], f[2], f[3]);
    if (STREAM)
        __stcs(reinterpret_cast<float4 *>(p + i), v);
    else
        *reinterpret_cast<float4 *>(p + i) = v;
}

template <typename T, typename C, int VEC, bool STREAM>
__global__ void __launch_bounds__(256) dev_apply_columns_split(ropegrad_rope_apply_shape s, const T *gq, const T *gk,
                                                               const T *__restrict__ q, const T *__restrict__ k,
                                                               const C *__restrict__ cos, const C *__restrict__ sin,
                                                               T *gqo, T *gko, C *__restrict__ gcos, C *__restrict__ gsin)
{
    extern __shared__ float dev_split_red[]; // [4][G][L*VEC]
    const uint32_t D = (uint32_t)s.head_dim, H = D / 2, L = H / VEC, G = blockDim.x / L, S = (uint32_t)s.seq_len;
    const uint32_t lane = threadIdx.x % L, g = threadIdx.x / L, j = lane * VEC;
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride, B = (uint32_t)s.batch_size;
    const uint32_t nh = (uint32_t)s.num_heads, nkv = (uint32_t)s.num_kv_heads;
    const bool bshd = s.layout == ROPEGRAD_LAYOUT_BSHD;
    const uint32_t rows = cs_stride ? B * S : S;
    for (uint32_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const uint32_t si = r % S, b0 = cs_stride ? r / S : 0, b1 = cs_stride ? b0 + 1 : B;
    float a0[VEC] = {}, a1[VEC] = {}, a2[VEC] = {}, a3[VEC] = {};
    if (g < G) {
        for (uint32_t b = b0; b < b1; b++) {
            const uint32_t co = b * cs_stride + si * D + j;
            float c0[VEC], c1[VEC], n0[VEC], n1[VEC];
            rg_apply_ldv<C, VEC>(cos, co, c0);
            rg_apply_ldv<C, VEC>(cos, co + H, c1);
            rg_apply_ldv<C, VEC>(sin, co, n0);
            rg_apply_ldv<C, VEC>(sin, co + H, n1);
#pragma unroll 2
            for (uint32_t h = g; h < nh + nkv; h += G) {
                const bool is_q = h < nh;
                const uint32_t hh = is_q ? h : h - nh, heads = is_q ? nh : nkv;
                const uint32_t off = (bshd ? (b * S + si) * heads + hh : (b * heads + hh) * S + si) * D + j;
                const T *gp = is_q ? gq : gk, *x = is_q ? q : k;
                float g0[VEC], g1[VEC], x0[VEC], x1[VEC], o0[VEC], o1[VEC];
                dev_ld4<STREAM>(gp, off, g0);
                dev_ld4<STREAM>(gp, off + H, g1);
                dev_ld4<STREAM>(x, off, x0);
                dev_ld4<STREAM>(x, off + H, x1);
#pragma unroll
                for (int e = 0; e < VEC; e++) {
                    rg_apply_rotate(g0[e], g1[e], c0[e], c1[e], n0[e], n1[e], -1.0f, o0[e], o1[e]);
                    a0[e] += g0[e] * x0[e];
                    a1[e] += g1[e] * x1[e];
                    a2[e] -= g0[e] * x1[e];
                    a3[e] += g1[e] * x0[e];
                }
                T *gx = is_q ? gqo : gko;
                dev_st4<STREAM>(gx, off, o0);
                dev_st4<STREAM>(gx, off + H, o1);
            }
        }
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            dev_split_red[(0 * G + g) * H + j + e] = a0[e];
            dev_split_red[(1 * G + g) * H + j + e] = a1[e];
            dev_split_red[(2 * G + g) * H + j + e] = a2[e];
            dev_split_red[(3 * G + g) * H + j + e] = a3[e];
        }
    }
    __syncthreads();
    for (uint32_t o = threadIdx.x; o < 4 * H; o += blockDim.x) {
        const uint32_t kk = o / H, w = o - kk * H;
        float sum = 0.0f;
        for (uint32_t gg = 0; gg < G; gg++) sum += dev_split_red[(kk * G + gg) * H + w];
        C *dst = kk < 2 ? gcos : gsin;
        rg_apply_st(dst, r * D + (kk & 1) * H + w, sum);
    }
    __syncthreads();
    }
}

// Groups a block: 256 / L (mode 0), or the largest G <= 256 / L dividing the
// number of heads (q's and k's) evenly, so no group idles (mode 1).
static uint32_t dev_split_groups(const ropegrad_rope_apply_shape &s, uint32_t L, int mode)
{
    const uint32_t heads = (uint32_t)(s.num_heads + s.num_kv_heads);
    const uint32_t most = 256 / L;
    if (mode == 0) return most;
    for (uint32_t g = most; g >= 2; g--)
        if (heads % g == 0 && g * 2 > most) return g;
    return most;
}

// The variants timed by dev/rope_apply/apply_floor.cu (0-7; their names with the later
// candidates' in apply_backward_staged.cuh): bit 0 even groups, bit 1
// streamed loads/stores, bit 2 two rows a block. fp32 only (the suite's
// dtype); the 16-byte path's alignment is assumed (cudaMalloc'd buffers).

static cudaError_t dev_apply_backward_split(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st, int variant = 0)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    constexpr int VEC = 4;
    const uint32_t H = (uint32_t)s.head_dim / 2, L = H / VEC;
    if (H % VEC || L > 256 || 256 % L) return cudaErrorInvalidValue;
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    const uint32_t G = dev_split_groups(s, L, variant & 1);
    const unsigned blocks = (unsigned)((variant & 4) ? (rows + 1) / 2 : rows);
    const size_t smem = (size_t)4 * G * H * sizeof(float);
    auto k = (variant & 2) ? dev_apply_columns_split<float, float, VEC, true> : dev_apply_columns_split<float, float, VEC, false>;
    k<<<blocks, G * L, smem, st>>>(s, (const float *)p->grad_q_out, (const float *)p->grad_k_out, (const float *)p->q,
                                   (const float *)p->k, (const float *)p->cos, (const float *)p->sin, (float *)p->grad_q,
                                   (float *)p->grad_k, (float *)p->grad_cos, (float *)p->grad_sin);
    return cudaGetLastError();
}
