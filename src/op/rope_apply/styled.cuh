/* SPDX-License-Identifier: Apache-2.0 */
// styled.cuh -- the apply ops' generic CUDA kernel for what the fast kernels
// (rotate.cuh, rope_apply_backward/kernels.cuh) do not take: the interleaved
// (GPT-J) style and partial rotary (rotary_dim < head_dim), 088 and 068 alike.
// Thread i handles unit u of cos/sin row r (ropegrad.h's rows: one a position,
// or a batch and position): u < R/2 is the pair (a, b) of the style --
// (u, u + R/2) rotate-half, (2u, 2u+1) interleaved -- rotated by the table's
// columns a and b (rotate.cuh's rg_apply_rotate, the fast kernels' bits), for
// every batch the row covers and every head of q and k; with GRAD (068 with
// grad_cos/grad_sin) its four products summed and written once. The other
// units copy element R + (u - R/2) through (in place: not touched). A thread
// reads exactly the elements it writes, so in place is safe.
#pragma once

#include "rope_apply/rotate.cuh"

template <typename T, typename C, bool GRAD>
__global__ void rg_apply_styled(ropegrad_rope_apply_shape s, float sign, const T *gq, const T *gk,
                                const T *__restrict__ q, const T *__restrict__ k, const C *__restrict__ cos,
                                const C *__restrict__ sin, T *qo, T *ko, C *__restrict__ gcos, C *__restrict__ gsin)
{
    const int64_t D = s.head_dim, R = s.rotary_dim ? s.rotary_dim : D, H = R / 2, U = H + (D - R);
    const bool il = s.style == ROPEGRAD_ROTARY_INTERLEAVED;
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows * U; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / U, u = i - r * U, si = r % s.seq_len;
        const int64_t b0 = s.cos_sin_batch_stride ? r / s.seq_len : 0, b1 = s.cos_sin_batch_stride ? b0 + 1 : s.batch_size;
        const bool pair = u < H;
        const int64_t a = pair ? (il ? 2 * u : u) : R + (u - H), b = il ? a + 1 : a + H;
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t bi = b0; bi < b1; bi++) {
            const int64_t co = bi * s.cos_sin_batch_stride + si * R;
            float c0 = 0.0f, c1 = 0.0f, n0 = 0.0f, n1 = 0.0f;
            if (pair) {
                c0 = rg_apply_ld(cos, co + a), c1 = rg_apply_ld(cos, co + b);
                n0 = rg_apply_ld(sin, co + a), n1 = rg_apply_ld(sin, co + b);
            }
            for (int t = 0; t < 2; t++) {
                const int64_t heads = t ? s.num_kv_heads : s.num_heads;
                const T *g = t ? gk : gq, *x = t ? k : q;
                T *o = t ? ko : qo;
                for (int64_t h = 0; h < heads; h++) {
                    const int64_t off = rg_apply_head_row_dev(s, heads, bi, h, si);
                    if (!pair) {
                        if (o != g) o[off + a] = g[off + a];
                        continue;
                    }
                    const float g0 = rg_apply_ld(g, off + a), g1 = rg_apply_ld(g, off + b);
                    if (GRAD) {
                        const float x0 = rg_apply_ld(x, off + a), x1 = rg_apply_ld(x, off + b);
                        acc[0] += g0 * x0;
                        acc[1] += g1 * x1;
                        acc[2] -= g0 * x1;
                        acc[3] += g1 * x0;
                    }
                    float o0, o1;
                    rg_apply_rotate(g0, g1, c0, c1, n0, n1, sign, o0, o1);
                    rg_apply_st(o, off + a, o0);
                    rg_apply_st(o, off + b, o1);
                }
            }
        }
        if (GRAD && pair) {
            rg_apply_st(gcos, r * R + a, acc[0]);
            rg_apply_st(gcos, r * R + b, acc[1]);
            rg_apply_st(gsin, r * R + a, acc[2]);
            rg_apply_st(gsin, r * R + b, acc[3]);
        }
    }
}

// 1 for the suites' case (rotate-half over the whole row), which the fast kernels take.
static inline bool rg_apply_default_style_dev(const ropegrad_rope_apply_shape &s)
{
    return s.style == ROPEGRAD_ROTARY_HALF && (s.rotary_dim == 0 || s.rotary_dim == s.head_dim);
}

// rg_apply_styled over a validated problem: g = the rotated tensors (088: q, k;
// 068: grad_q_out, grad_k_out), o their outputs; x and the table gradients
// only with GRAD.
template <typename T, typename C, bool GRAD>
static cudaError_t rg_apply_styled_go(const ropegrad_rope_apply_shape &s, float sign, const T *gq, const T *gk,
                                      const T *q, const T *k, const C *cos, const C *sin, T *qo, T *ko, C *gcos,
                                      C *gsin, cudaStream_t st)
{
    const int64_t D = s.head_dim, R = s.rotary_dim ? s.rotary_dim : D;
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    rg_apply_styled<T, C, GRAD><<<rg_apply_grid(rows * (R / 2 + D - R)), 256, 0, st>>>(s, sign, gq, gk, q, k, cos, sin,
                                                                                      qo, ko, gcos, gsin);
    return cudaGetLastError();
}
