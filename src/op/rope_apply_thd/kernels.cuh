/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cuh -- the CUDA kernels of the packed-sequence table ops (forward
// and backward, by the rotation's sign) and their launcher: the apply from
// positions' two kernels (rope_apply_pos/kernels.cuh: their blocks, units,
// loads and stores, 088's rotation bits) with the cos/sin rows read from the
// table instead of computed. Each token's position (cu_seqlens: binary search;
// else position_ids) is clamped into [0, table_len) (no read outside the
// table; ropegrad.h: such tokens' outputs are unspecified), and its table row
// read once (consecutive columns: coalesced) into shared memory, the columns
// of each pair's two elements apart, for every head of q and k:
//   - the warp kernel (rg_posw_kernel with rg_posw_from_table: a warp a token)
//     where the 16-byte units divide a warp;
//   - else rg_thd_kernel, a block of a few tokens:
//       1. each thread loads its first two units of q/k, so the loads are in
//          flight while
//       2. one thread a token finds its position; after a barrier the block's
//          threads read each token's table row; after one barrier
//       3. each thread rotates its units (rg_apply_rotate with the pair's two
//          columns: 088's bits on the gathered table) and stores them.
// A thread reads exactly the elements it writes, so in place is safe.
#pragma once

#include "rope_apply_pos/kernels.cuh"

struct rg_thd_args {
    rg_pos_args a;   // q, k, outputs, style, rotary_dim, sign, positions (inv, scale unused)
    const void *cos, *sin;
    int64_t table_len;
};

// Shared floats a token: four rows of R/2 (each pair's cos and sin, first and
// second element), and its position (two floats' room for an int64).
static inline int rg_thd_floats_per_token(int R) { return 2 * R + 2; }

template <typename T, typename C, int VEC, bool HALF, bool PACKED>
__global__ void __launch_bounds__(512) rg_thd_kernel(rg_thd_args ta)
{
    extern __shared__ float rg_thd_sh[];
    const rg_pos_args &a = ta.a;
    const int H = a.R / 2;
    float *c0 = rg_thd_sh, *c1 = c0 + a.tpb * H, *n0 = c1 + a.tpb * H, *n1 = n0 + a.tpb * H;
    long long *rows = reinterpret_cast<long long *>(n1 + a.tpb * H);   // 8-byte aligned: 4*tpb*H floats before
    const C *cos = (const C *)ta.cos, *sin = (const C *)ta.sin;
    for (int64_t blk = blockIdx.x; blk < a.blocks; blk += gridDim.x) {
        const rg_pos_block b = rg_pos_block_at<VEC, HALF>(a, blk);
        rg_pos_unit<T, VEC> w[RG_POS_UPT];
        rg_pos_load_first<T, VEC, HALF, PACKED>(a, b, w);
        for (int tl = threadIdx.x; tl < b.nt; tl += blockDim.x) {
            const int64_t pos = rg_pos_position_dev(a, b.t0 + tl);
            rows[tl] = (pos < 0 ? 0 : pos >= ta.table_len ? ta.table_len - 1 : pos) * a.R;
        }
        __syncthreads();
        for (int i = threadIdx.x; i < b.nt * H; i += blockDim.x) {
            const int tl = i / H, j = i - tl * H;
            const int64_t ca = rows[tl] + (HALF ? j : 2 * j), cb = ca + (HALF ? H : 1);
            c0[i] = rg_apply_ld(cos, ca), c1[i] = rg_apply_ld(cos, cb);
            n0[i] = rg_apply_ld(sin, ca), n1[i] = rg_apply_ld(sin, cb);
        }
        __syncthreads();
        rg_pos_store_all<T, VEC, HALF, PACKED>(a, b, w, c0, n0, c1, n1);
    }
}

// SRC of the warp kernel (rope_apply_pos/kernels.cuh, rg_posw_kernel) for the
// packed table ops: the token's table row (its position clamped into the
// table, as above), each pair's two columns apart, read by the warp's lanes.
// Its launch knobs: the fastest of dev/rope_apply_pos/pos_variants.cu's (the
// values held in registers take more of them than the positions' do).
template <typename C>
struct rg_posw_from_table {
    static constexpr int rows = 4, hstep = 2, minb = 2;
    const C *cos, *sin;
    int64_t table_len;
    template <bool HALF>
    __device__ __forceinline__ void fill(const rg_pos_args &a, int64_t t, int lane, float *c0, float *n0, float *c1,
                                         float *n1) const
    {
        const int64_t pos = rg_pos_position_dev(a, t);
        const int64_t row = (pos < 0 ? 0 : pos >= table_len ? table_len - 1 : pos) * a.R;
        const int H = a.R / 2;
        for (int i = lane; i < H; i += 32) {
            const int64_t ca = row + (HALF ? i : 2 * i), cb = ca + (HALF ? H : 1);
            c0[i] = rg_apply_ld(cos, ca), c1[i] = rg_apply_ld(cos, cb);
            n0[i] = rg_apply_ld(sin, ca), n1[i] = rg_apply_ld(sin, cb);
        }
    }
};

template <typename T, typename C, int VEC, bool HALF, bool PACKED>
static cudaError_t rg_thd_go(rg_thd_args ta, cudaStream_t st)
{
    if constexpr (PACKED) {
        if (rg_posw_ok<VEC, HALF>(ta.a)) {
            const rg_posw_from_table<C> src = {(const C *)ta.cos, (const C *)ta.sin, ta.table_len};
            return rg_posw_go<T, VEC, HALF>(ta.a, src, st);
        }
    }
    rg_pos_cfg cfg;
    const cudaError_t e = rg_pos_plan(ta.a, rg_pos_units_per_head<VEC, HALF>(ta.a), rg_thd_floats_per_token(ta.a.R), cfg);
    if (e != cudaSuccess) return e;
    rg_thd_kernel<T, C, VEC, HALF, PACKED><<<cfg.grid, cfg.threads, cfg.shmem, st>>>(ta);
    return cudaGetLastError();
}

template <typename T, typename C>
static cudaError_t rg_thd_dtype_go(const rg_thd_args &ta, bool half, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T);
    const bool vec = rg_pos_vec_ok<T>(ta.a, half);
    if (half) return vec ? rg_thd_go<T, C, VEC, true, true>(ta, st) : rg_thd_go<T, C, 1, true, false>(ta, st);
    return vec ? rg_thd_go<T, C, VEC, false, true>(ta, st) : rg_thd_go<T, C, 2, false, false>(ta, st);
}

template <typename T>
static cudaError_t rg_thd_cs_go(const rg_thd_args &ta, ropegrad_dtype cdt, bool half, cudaStream_t st)
{
    switch (cdt) {
    case ROPEGRAD_BF16: return rg_thd_dtype_go<T, __nv_bfloat16>(ta, half, st);
    case ROPEGRAD_F16: return rg_thd_dtype_go<T, __half>(ta, half, st);
    default: return rg_thd_dtype_go<T, float>(ta, half, st);
    }
}

// The launcher for a validated problem (with fewer than 2^30 heads of q and k
// together: the kernel counts them in int): sign +1 the forward, -1 the backward.
static cudaError_t rg_thd_launch(const ropegrad_rope_apply_thd_problem *p, float sign, cudaStream_t st)
{
    rg_thd_args ta;
    rg_pos_args &a = ta.a;
    a.s = p->shape;
    a.R = (int)(p->shape.rotary_dim ? p->shape.rotary_dim : p->shape.head_dim);
    a.scale = 1.0f;
    a.sign = sign;
    a.ids = p->position_ids;
    a.bits = p->position_bits;
    a.cu_seqlens = p->cu_seqlens;
    a.nseq = (int)p->num_seqs;
    a.inv = nullptr;
    a.q = p->q, a.k = p->k, a.qo = p->q_out, a.ko = p->k_out;
    a.tpb = a.hpb = a.groups = 1;
    a.blocks = 0;
    ta.cos = p->cos, ta.sin = p->sin, ta.table_len = p->table_len;
    const bool half = p->shape.style == ROPEGRAD_ROTARY_HALF;
    const ropegrad_dtype cdt = p->shape.cos_sin_dtype;
    switch (p->shape.dtype) {
    case ROPEGRAD_BF16: return rg_thd_cs_go<__nv_bfloat16>(ta, cdt, half, st);
    case ROPEGRAD_F16: return rg_thd_cs_go<__half>(ta, cdt, half, st);
    default: return rg_thd_cs_go<float>(ta, cdt, half, st);
    }
}
