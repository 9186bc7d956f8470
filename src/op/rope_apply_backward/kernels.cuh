/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cuh -- the CUDA kernels of L1/068, the backward of applying the
// rotary embedding, and their launcher. Without grad_cos/grad_sin it is 088's
// rotation with the sign flipped (src/op/rope_apply/rotate.cuh); with them:
//   rg_apply_columns_staged: one block a cos/sin row, the row's head rows
//                     (gradient and input, every head of q and k) and its
//                     cos/sin rows copied to shared memory by cp.async in
//                     stages, all in flight at once, each stage computed as
//                     it lands (16-byte rows and pointers, the rows within
//                     shared memory; head_dim 128 compiled in as a constant,
//                     others read at run time); else
//   rg_apply_columns_split: one block a cos/sin row, the heads split over its
//                     groups, 16 bytes a load (also where it measured faster:
//                     rg_apply_split_one_wave); else
//   rg_apply_columns: one pair of one cos/sin row per thread, looping over
//                     the row's batches and every head of q and k.
// Both block kernels add the head sums across their groups in shared memory
// (no atomics; each grad_cos/grad_sin element written once), and write a row
// only after the block's copies of it have landed (in place is safe).
// The interleaved style and partial rotary take styled.cuh's generic kernel.
#pragma once

#include "rope_apply/rotate.cuh"
#include "rope_apply/styled.cuh"

// The pair (j, j+H) of one head: its gradient written, its share of the sums added.
template <typename T>
static __device__ __forceinline__ void rg_apply_grad_pair(const T *g, const T *x, T *gx, int64_t off, int64_t j, int64_t H,
                                                          float c0, float c1, float n0, float n1, float acc[4])
{
    const float g0 = rg_apply_ld(g, off + j), g1 = rg_apply_ld(g, off + j + H);
    const float x0 = rg_apply_ld(x, off + j), x1 = rg_apply_ld(x, off + j + H);
    float o0, o1;
    rg_apply_rotate(g0, g1, c0, c1, n0, n1, -1.0f, o0, o1);
    rg_apply_st(gx, off + j, o0);
    rg_apply_st(gx, off + j + H, o1);
    acc[0] += g0 * x0;
    acc[1] += g1 * x1;
    acc[2] -= g0 * x1;
    acc[3] += g1 * x0;
}

template <typename T, typename C>
__global__ void rg_apply_columns(ropegrad_rope_apply_shape s, const T *gq, const T *gk,
                                 const T *__restrict__ q, const T *__restrict__ k, const C *__restrict__ cos,
                                 const C *__restrict__ sin, T *gqo, T *gko, C *__restrict__ gcos, C *__restrict__ gsin)
{
    const int64_t H = s.head_dim / 2;
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows * H; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / H, j = i - r * H, si = r % s.seq_len;
        const int64_t b0 = s.cos_sin_batch_stride ? r / s.seq_len : 0, b1 = s.cos_sin_batch_stride ? b0 + 1 : s.batch_size;
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t b = b0; b < b1; b++) {
            const int64_t co = b * s.cos_sin_batch_stride + si * s.head_dim;
            const float c0 = rg_apply_ld(cos, co + j), c1 = rg_apply_ld(cos, co + j + H);
            const float n0 = rg_apply_ld(sin, co + j), n1 = rg_apply_ld(sin, co + j + H);
            for (int64_t h = 0; h < s.num_heads; h++)
                rg_apply_grad_pair(gq, q, gqo, rg_apply_head_row_dev(s, s.num_heads, b, h, si), j, H, c0, c1, n0, n1, acc);
            for (int64_t h = 0; h < s.num_kv_heads; h++)
                rg_apply_grad_pair(gk, k, gko, rg_apply_head_row_dev(s, s.num_kv_heads, b, h, si), j, H, c0, c1, n0, n1, acc);
        }
        rg_apply_st(gcos, r * s.head_dim + j, acc[0]);
        rg_apply_st(gcos, r * s.head_dim + j + H, acc[1]);
        rg_apply_st(gsin, r * s.head_dim + j, acc[2]);
        rg_apply_st(gsin, r * s.head_dim + j + H, acc[3]);
    }
}

// One head's VEC pairs of 068: the gradient rotated back (o0, o1) and the
// four products of grad_cos/grad_sin added to the sums (the scalar
// rg_apply_grad_pair's arithmetic, VEC pairs at once).
template <int VEC>
static __device__ __forceinline__ void rg_apply_grad_vec(const float (&g0)[VEC], const float (&g1)[VEC],
                                                         const float (&x0)[VEC], const float (&x1)[VEC],
                                                         const float (&c0)[VEC], const float (&c1)[VEC],
                                                         const float (&n0)[VEC], const float (&n1)[VEC], float (&o0)[VEC],
                                                         float (&o1)[VEC], float (&acc)[4][VEC])
{
#pragma unroll
    for (int e = 0; e < VEC; e++) {
        rg_apply_rotate(g0[e], g1[e], c0[e], c1[e], n0[e], n1[e], -1.0f, o0[e], o1[e]);
        acc[0][e] += g0[e] * x0[e];
        acc[1][e] += g1[e] * x1[e];
        acc[2][e] -= g0[e] * x1[e];
        acc[3][e] += g1[e] * x0[e];
    }
}

// The end of a block that owns cos/sin row r: each group's sums (group g,
// pairs j..j+VEC) put in red, [4][G][H] floats of shared memory the caller
// has made free, added across the G groups in group order, and the row's
// grad_cos/grad_sin written once, contiguously (no atomics).
template <typename C, int VEC>
static __device__ __forceinline__ void rg_apply_sum_groups(float *red, const float (&acc)[4][VEC], uint32_t G, uint32_t g,
                                                           uint32_t j, uint32_t H, uint32_t r, C *__restrict__ gcos,
                                                           C *__restrict__ gsin)
{
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int e = 0; e < VEC; e++) red[(kk * G + g) * H + j + e] = acc[kk][e];
    __syncthreads();
    for (uint32_t o = threadIdx.x; o < 4 * H; o += blockDim.x) {
        const uint32_t kk = o / H, w = o - kk * H;
        float sum = 0.0f;
        for (uint32_t gg = 0; gg < G; gg++) sum += red[(kk * G + gg) * H + w];
        rg_apply_st(kk < 2 ? gcos : gsin, (int64_t)r * (2 * H) + (kk & 1) * H + w, sum);
    }
}

// 068 with grad_cos/grad_sin, 16 bytes a load: one block a cos/sin row r. Its
// L = H/VEC lanes cover the row's pairs 16 bytes at a time (32-bit indices,
// the launcher's conditions as rg_apply_pairs_heads2's) and its G groups split
// the heads of q and k between them (head g, g+G, ...): a B=1, S=293 row set
// runs 40x more threads than one thread a column would, enough loads in
// flight to stream. The fallback of rg_apply_columns_staged (below) where
// that one does not apply or loses (dev/rope_apply_backward/apply_backward_split.cuh,
// dev/rope_apply_backward/NOTES.md "068's floor was not a floor": 1.13x the flat floor against
// 1.85x for one thread a column).
template <typename T, typename C, int VEC>
__global__ void __launch_bounds__(256) rg_apply_columns_split(ropegrad_rope_apply_shape s, const T *gq, const T *gk,
                                                              const T *__restrict__ q, const T *__restrict__ k,
                                                              const C *__restrict__ cos, const C *__restrict__ sin,
                                                              T *gqo, T *gko, C *__restrict__ gcos, C *__restrict__ gsin)
{
    extern __shared__ float rg_split_sums[];
    const uint32_t D = (uint32_t)s.head_dim, H = D / 2, L = H / VEC, G = blockDim.x / L, S = (uint32_t)s.seq_len;
    const uint32_t lane = threadIdx.x % L, g = threadIdx.x / L, j = lane * VEC, r = blockIdx.x;
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride, nh = (uint32_t)s.num_heads;
    const uint32_t heads = nh + (uint32_t)s.num_kv_heads, si = r % S;
    const uint32_t b0 = cs_stride ? r / S : 0, b1 = cs_stride ? b0 + 1 : (uint32_t)s.batch_size;
    const bool bshd = s.layout == ROPEGRAD_LAYOUT_BSHD;
    float acc[4][VEC] = {};
    for (uint32_t b = b0; b < b1; b++) {
        const uint32_t co = b * cs_stride + si * D + j;
        float c0[VEC], c1[VEC], n0[VEC], n1[VEC];
        rg_apply_ldv<C, VEC>(cos, co, c0);
        rg_apply_ldv<C, VEC>(cos, co + H, c1);
        rg_apply_ldv<C, VEC>(sin, co, n0);
        rg_apply_ldv<C, VEC>(sin, co + H, n1);
#pragma unroll 2
        for (uint32_t h = g; h < heads; h += G) {
            const bool is_q = h < nh;
            const uint32_t hh = is_q ? h : h - nh, hn = is_q ? nh : heads - nh;
            const uint32_t off = (bshd ? (b * S + si) * hn + hh : (b * hn + hh) * S + si) * D + j;
            const T *gp = is_q ? gq : gk, *x = is_q ? q : k;
            float g0[VEC], g1[VEC], x0[VEC], x1[VEC], o0[VEC], o1[VEC];
            rg_apply_ldv<T, VEC>(gp, off, g0);
            rg_apply_ldv<T, VEC>(gp, off + H, g1);
            rg_apply_ldv<T, VEC>(x, off, x0);
            rg_apply_ldv<T, VEC>(x, off + H, x1);
            rg_apply_grad_vec<VEC>(g0, g1, x0, x1, c0, c1, n0, n1, o0, o1, acc);
            T *gx = is_q ? gqo : gko;
            rg_apply_stv<T, VEC>(gx, off, o0);
            rg_apply_stv<T, VEC>(gx, off + H, o1);
        }
    }
    rg_apply_sum_groups<C, VEC>(rg_split_sums, acc, G, g, j, H, r, gcos, gsin);
}

// Groups a block for rg_apply_columns_split: the most that fit 256 threads
// with L lanes each, lowered to a divisor of the head count when one lies
// above half of it, so that no group idles at the end of the row.
static inline uint32_t rg_apply_split_groups(const ropegrad_rope_apply_shape &s, uint32_t L)
{
    const uint32_t most = 256 / L, heads = (uint32_t)(s.num_heads + s.num_kv_heads);
    for (uint32_t g = most; g >= 2 && g * 2 > most; g--)
        if (heads % g == 0) return g;
    return most;
}

// ---- 068 with grad_cos/grad_sin, staged through shared memory ---------------------------
// 16 bytes global -> shared with no register in between (cp.async.cg: L2
// only, nothing is read twice), its commit and its wait; before sm_80 (no
// cp.async) a plain copy, the commit and the wait then nothing.
static __device__ __forceinline__ void rg_apply_cp16(void *smem, const void *gmem)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t sa = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(gmem) : "memory");
#else
    *static_cast<uint4 *>(smem) = *static_cast<const uint4 *>(gmem);
#endif
}

static __device__ __forceinline__ void rg_apply_cp_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most `pending` of this thread's commit groups are in flight
// (the instruction takes an immediate: above 7 it waits for 7, stricter, so safe).
static __device__ __forceinline__ void rg_apply_cp_wait(uint32_t pending)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
    }
#else
    (void)pending;
#endif
}

// Where batch b's head rows at position si start and the step from one head
// to the next (element offsets), hd numbering q's heads, then k's.
struct rg_apply_head_rows {
    uint32_t q_base, q_step, k_base, k_step, nh;
    __device__ __forceinline__ uint32_t of(uint32_t hd) const
    {
        return hd < nh ? q_base + hd * q_step : k_base + (hd - nh) * k_step;
    }
};

static __device__ __forceinline__ rg_apply_head_rows rg_apply_rows_at(const ropegrad_rope_apply_shape &s, uint32_t b,
                                                                      uint32_t si)
{
    const uint32_t S = (uint32_t)s.seq_len, D = (uint32_t)s.head_dim;
    const uint32_t nh = (uint32_t)s.num_heads, nkv = (uint32_t)s.num_kv_heads;
    if (s.layout == ROPEGRAD_LAYOUT_BSHD) return {(b * S + si) * nh * D, D, (b * S + si) * nkv * D, D, nh};
    return {(b * nh * S + si) * D, S * D, (b * nkv * S + si) * D, S * D, nh};
}

// Issues group g's share of the copies of the stage whose heads start at h0
// (G heads at most), as one commit group: the stage's rows g, g+G, ... (row
// 2u the gradient row of its head u, 2u+1 that head's input row; the first
// stage adds the cos and the sin row), its L lanes over a row's 16-byte
// chunks. buf holds head hd's two rows at chunk 2*hd*RC, then cos, then sin.
template <typename T, typename C>
static __device__ __forceinline__ void rg_apply_stage_issue(uint4 *buf, const rg_apply_head_rows &hr, const T *gq,
                                                            const T *gk, const T *q, const T *k, const C *cos_row,
                                                            const C *sin_row, uint32_t D, uint32_t heads, uint32_t h0,
                                                            uint32_t G, uint32_t g, uint32_t lane, uint32_t L)
{
    const uint32_t RC = D * (uint32_t)sizeof(T) / 16, CC = D * (uint32_t)sizeof(C) / 16;
    const uint32_t head_rows = 2 * (min(heads, h0 + G) - h0), rows = head_rows + (h0 == 0 ? 2 : 0);
    for (uint32_t row = g; row < rows; row += G) {
        if (row >= head_rows) {
            const uint4 *src = reinterpret_cast<const uint4 *>(row == head_rows ? cos_row : sin_row);
            uint4 *dst = buf + 2 * heads * RC + (row - head_rows) * CC;
            for (uint32_t c = lane; c < CC; c += L) rg_apply_cp16(dst + c, src + c);
            continue;
        }
        const uint32_t hd = h0 + row / 2;
        const T *x = (row & 1) ? (hd < hr.nh ? q : k) : (hd < hr.nh ? gq : gk);
        const uint4 *src = reinterpret_cast<const uint4 *>(x + hr.of(hd));
        uint4 *dst = buf + (2 * hd + (row & 1)) * RC;
        for (uint32_t c = lane; c < RC; c += L) rg_apply_cp16(dst + c, src + c);
    }
    rg_apply_cp_commit();
}

// 068 with grad_cos/grad_sin, the fast path: one block a cos/sin row r, G
// groups of L = H/4 lanes, 4 pairs a lane. For each batch the row covers,
// every head row it needs (gradient and input, q's and k's heads) and its cos
// and sin rows are copied to shared memory by cp.async, all issued at once in
// stages of G heads, one commit group a stage; stage st is computed (head
// st*G+g by group g) as soon as it has landed while the later stages still
// fly, so stores interleave with loads and every byte of the row is in flight
// without holding a register. In place is safe: head hd's gradient is written
// only after its rows have landed (the wait and the barrier), and no other
// copy reads that row. The sums are added across groups as the split
// kernel's. (dev/rope_apply_backward/apply_backward_staged.cuh variant 9, dev/rope_apply_backward/NOTES.md.)
// MAXT, MINB: the launch bounds, so that registers do not cap the blocks an
// SM below what shared memory allows. HD: head_dim when known at compile
// time (its divisions and strides then constants), 0 for any.
template <typename T, typename C, int MAXT, int MINB, int HD = 0>
__global__ void __launch_bounds__(MAXT, MINB)
    rg_apply_columns_staged(ropegrad_rope_apply_shape s, const T *gq, const T *gk, const T *q, const T *k,
                            const C *__restrict__ cos, const C *__restrict__ sin, T *gqo, T *gko, C *__restrict__ gcos,
                            C *__restrict__ gsin)
{
    constexpr int VEC = 4;
    extern __shared__ uint4 rg_staged_buf[];
    const uint32_t D = HD ? (uint32_t)HD : (uint32_t)s.head_dim, H = D / 2, L = H / VEC, G = blockDim.x / L, S = (uint32_t)s.seq_len;
    const uint32_t lane = threadIdx.x % L, g = threadIdx.x / L, j = lane * VEC, r = blockIdx.x;
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride, nh = (uint32_t)s.num_heads;
    const uint32_t heads = nh + (uint32_t)s.num_kv_heads, si = r % S, stages = (heads + G - 1) / G;
    const uint32_t b0 = cs_stride ? r / S : 0, b1 = cs_stride ? b0 + 1 : (uint32_t)s.batch_size;
    const T *rows = reinterpret_cast<const T *>(rg_staged_buf);
    const C *cs = reinterpret_cast<const C *>(rows + 2 * heads * D);   // cos row, then sin row
    float acc[4][VEC] = {};
    for (uint32_t b = b0; b < b1; b++) {
        const rg_apply_head_rows hr = rg_apply_rows_at(s, b, si);
        const uint32_t co = b * cs_stride + si * D;
        for (uint32_t st = 0; st < stages; st++)
            rg_apply_stage_issue<T, C>(rg_staged_buf, hr, gq, gk, q, k, cos + co, sin + co, D, heads, st * G, G, g, lane, L);
        for (uint32_t st = 0; st < stages; st++) {
            rg_apply_cp_wait(stages - 1 - st);
            __syncthreads();   // every thread's copies of stages 0..st have landed
            const uint32_t hd = st * G + g;
            if (hd >= heads) continue;
            float c0[VEC], c1[VEC], n0[VEC], n1[VEC], g0[VEC], g1[VEC], x0[VEC], x1[VEC], o0[VEC], o1[VEC];
            rg_apply_ldv<C, VEC>(cs, j, c0);
            rg_apply_ldv<C, VEC>(cs, j + H, c1);
            rg_apply_ldv<C, VEC>(cs, D + j, n0);
            rg_apply_ldv<C, VEC>(cs, D + j + H, n1);
            const T *row = rows + 2 * hd * D;
            rg_apply_ldv<T, VEC>(row, j, g0);
            rg_apply_ldv<T, VEC>(row, j + H, g1);
            rg_apply_ldv<T, VEC>(row, D + j, x0);
            rg_apply_ldv<T, VEC>(row, D + j + H, x1);
            rg_apply_grad_vec<VEC>(g0, g1, x0, x1, c0, c1, n0, n1, o0, o1, acc);
            T *gx = hd < nh ? gqo : gko;
            const uint32_t off = hr.of(hd) + j;
            rg_apply_stv<T, VEC>(gx, off, o0);
            rg_apply_stv<T, VEC>(gx, off + H, o1);
        }
        __syncthreads();   // the buffer is free again: the next batch's copies, or the sums
    }
    rg_apply_sum_groups<C, VEC>(reinterpret_cast<float *>(rg_staged_buf), acc, G, g, j, H, r, gcos, gsin);
}

// The staged kernel's block for a shape: L = H/4 lanes a group; as many
// stages as groups of at most 256 threads need, the heads spread evenly over
// them (G groups); shared memory for a batch's head rows (both tensors) with
// the cos and sin rows, or for the sums [4][G][H] where that is more.
struct rg_apply_staged_block {
    uint32_t L, G;
    size_t smem;
};

template <typename T, typename C>
static rg_apply_staged_block rg_apply_staged_block_of(const ropegrad_rope_apply_shape &s)
{
    const uint32_t H = (uint32_t)(s.head_dim / 2), L = H / 4, most = 256 / L;
    const int64_t heads = s.num_heads + s.num_kv_heads, stages = (heads + most - 1) / most;
    const uint32_t G = (uint32_t)((heads + stages - 1) / stages);
    const size_t rows = (size_t)heads * 2 * (size_t)s.head_dim * sizeof(T) + 2 * (size_t)s.head_dim * sizeof(C);
    const size_t sums = (size_t)4 * G * H * sizeof(float);
    return {L, G, rows > sums ? rows : sums};
}

// The cos/sin rows of 068's grid (a block or a column each): B*S, or S when shared.
static inline int64_t rg_apply_cs_rows_of(const ropegrad_rope_apply_shape &s)
{
    return s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
}

// Every element index of the 16-byte paths (split, staged) in 32 bits.
static inline bool rg_apply_fits32(const ropegrad_rope_apply_shape &s)
{
    const int64_t all_rows = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len;
    return all_rows * s.head_dim < ((int64_t)1 << 31) && s.batch_size * s.seq_len * s.head_dim < ((int64_t)1 << 31);
}

// The staged kernel applies: 32-bit indices; q, k, their gradients in and
// out, cos and sin 16-byte aligned with rows of whole 16-byte chunks; H a
// multiple of 4 (together: head_dim a multiple of 8, any dtypes); shared
// memory within the device's opt-in limit. Else the split kernel or the
// one-column kernel (which cover every shape).
template <typename T, typename C>
static bool rg_apply_staged_applies(const ropegrad_rope_apply_backward_problem *p, int smem_max, rg_apply_staged_block *blk)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    const int64_t D = s.head_dim;
    const bool aligned = rg_apply_aligned(p->grad_q_out, 16) && rg_apply_aligned(p->grad_k_out, 16) &&
                         rg_apply_aligned(p->q, 16) && rg_apply_aligned(p->k, 16) && rg_apply_aligned(p->grad_q, 16) &&
                         rg_apply_aligned(p->grad_k, 16) && rg_apply_aligned(p->cos, 16) && rg_apply_aligned(p->sin, 16);
    if (!rg_apply_fits32(s) || !aligned || (D / 2) % 4 || (D * sizeof(T)) % 16 || (D * sizeof(C)) % 16) return false;
    *blk = rg_apply_staged_block_of<T, C>(s);
    return blk->smem <= (size_t)smem_max;
}

// Threads a block of rg_apply_columns_split for p (G groups of L lanes), 0
// where its conditions fail (then rg_apply_columns).
template <typename T, typename C>
static uint32_t rg_apply_split_threads(const ropegrad_rope_apply_backward_problem *p)
{
    constexpr int VEC = 16 / sizeof(T);
    const ropegrad_rope_apply_shape &s = p->shape;
    const bool aligned = rg_apply_aligned(p->grad_q_out, 16) && rg_apply_aligned(p->grad_k_out, 16) &&
                         rg_apply_aligned(p->q, 16) && rg_apply_aligned(p->k, 16) && rg_apply_aligned(p->grad_q, 16) &&
                         rg_apply_aligned(p->grad_k, 16) && rg_apply_aligned(p->cos, VEC * sizeof(C)) &&
                         rg_apply_aligned(p->sin, VEC * sizeof(C)) && rg_apply_aligned(p->grad_cos, VEC * sizeof(C)) &&
                         rg_apply_aligned(p->grad_sin, VEC * sizeof(C));
    const uint32_t L = (uint32_t)(s.head_dim / 2 / VEC);
    if (!rg_apply_fits32(s) || !aligned || (s.head_dim / 2) % VEC || L > 256 || 256 % L) return 0;
    return rg_apply_split_groups(s, L) * L;
}

// Shared memory of a split block of `threads` threads: its sums [4][G][H].
template <typename T>
static size_t rg_apply_split_smem(int64_t H, uint32_t threads)
{
    constexpr int VEC = 16 / sizeof(T);
    return (size_t)4 * (threads / (uint32_t)(H / VEC)) * (size_t)H * sizeof(float);
}

// Blocks of a kernel resident on the whole device at once (0 when the runtime cannot say).
template <typename K>
static int64_t rg_apply_wave(K kernel, uint32_t threads, size_t smem, int sms)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)threads, smem) != cudaSuccess) {
        (void)cudaGetLastError();   // not left for the launch's check
        return 0;
    }
    return (int64_t)sms * per_sm;
}

// The one shape class where the split kernel measured faster than the staged
// one on the H200 (results/dev/11-candidates-068-012/apply-floor-068.txt,
// "staged" against "ropegrad", workload 6: B=1, 64+8 heads, S=512 and
// per-batch cos/sin, 512 rows): rows that one wave of the split kernel holds
// (4 blocks of 192 threads an SM there) and the staged kernel's does not (3
// blocks an SM, its shared memory), which would run a second, mostly empty
// wave. The same heads on 1024 and 2048 rows (workloads 2, 4, 13), in more
// than a wave of either, measured faster staged.
template <typename T, typename C, int MAXT, int MINB, int HD>
static bool rg_apply_split_one_wave(int64_t rows, const rg_apply_staged_block &blk, uint32_t split_threads, int sms)
{
    if (!split_threads || rows > (int64_t)sms * 32) return false;   // 32: the most blocks any SM holds
    constexpr int VEC = 16 / sizeof(T);
    const size_t split_smem = rg_apply_split_smem<T>(blk.L * 4, split_threads);
    if (rows > rg_apply_wave(rg_apply_columns_split<T, C, VEC>, split_threads, split_smem, sms)) return false;
    return rows > rg_apply_wave(rg_apply_columns_staged<T, C, MAXT, MINB, HD>, blk.G * blk.L, blk.smem, sms);
}

template <typename T, typename C>
static cudaError_t rg_apply_split_launch(const ropegrad_rope_apply_backward_problem *p, uint32_t threads, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T);
    const ropegrad_rope_apply_shape &s = p->shape;
    const int64_t rows = rg_apply_cs_rows_of(s);
    rg_apply_columns_split<T, C, VEC><<<(unsigned)rows, threads, rg_apply_split_smem<T>(s.head_dim / 2, threads), st>>>(
        s, (const T *)p->grad_q_out, (const T *)p->grad_k_out, (const T *)p->q, (const T *)p->k, (const C *)p->cos,
        (const C *)p->sin, (T *)p->grad_q, (T *)p->grad_k, (C *)p->grad_cos, (C *)p->grad_sin);
    return cudaGetLastError();
}

// The staged kernel with launch bounds MAXT, MINB and head_dim HD (0: any),
// unless the split kernel takes the shape (rg_apply_split_one_wave; *launched
// false then). Its shared
// memory attributes are set to the device's opt-in maximum and the largest
// carveout on every call: the same values for every shape, so a launch on
// another host thread never meets a smaller limit.
template <typename T, typename C, int MAXT, int MINB, int HD>
static cudaError_t rg_apply_staged_launch(const ropegrad_rope_apply_backward_problem *p, const rg_apply_staged_block &blk,
                                          uint32_t split_threads, int sms, int smem_max, cudaStream_t st, bool *launched)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    const int64_t rows = rg_apply_cs_rows_of(s);
    auto kern = rg_apply_columns_staged<T, C, MAXT, MINB, HD>;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max);
    if (e == cudaSuccess) e = cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    *launched = false;
    if (e != cudaSuccess || rg_apply_split_one_wave<T, C, MAXT, MINB, HD>(rows, blk, split_threads, sms)) return e;
    *launched = true;
    kern<<<(unsigned)rows, blk.G * blk.L, blk.smem, st>>>(
        s, (const T *)p->grad_q_out, (const T *)p->grad_k_out, (const T *)p->q, (const T *)p->k, (const C *)p->cos,
        (const C *)p->sin, (T *)p->grad_q, (T *)p->grad_k, (C *)p->grad_cos, (C *)p->grad_sin);
    return cudaGetLastError();
}

// The staged launch for blk: launch bounds by block size, and head_dim 128
// (Llama's, Qwen's) compiled in as a constant, which measured 1.094x the flat
// floor against 1.126x with it read at run time (apply_floor 068 variants 18
// and 12, results/dev/13-heads2-shipped-068-hd128/).
template <typename T, typename C>
static cudaError_t rg_apply_staged_pick(const ropegrad_rope_apply_backward_problem *p, const rg_apply_staged_block &blk,
                                        uint32_t split_threads, int sms, int smem_max, cudaStream_t st, bool *launched)
{
    const bool small = blk.G * blk.L <= 224;
    if (p->shape.head_dim == 128)
        return small ? rg_apply_staged_launch<T, C, 224, 5, 128>(p, blk, split_threads, sms, smem_max, st, launched)
                     : rg_apply_staged_launch<T, C, 256, 3, 128>(p, blk, split_threads, sms, smem_max, st, launched);
    return small ? rg_apply_staged_launch<T, C, 224, 5, 0>(p, blk, split_threads, sms, smem_max, st, launched)
                 : rg_apply_staged_launch<T, C, 256, 3, 0>(p, blk, split_threads, sms, smem_max, st, launched);
}

// 068: without grad_cos/grad_sin the forward's kernels with the sign
// flipped; with them the staged kernel where it applies (and wins), else the
// split kernel, else one column a thread.
template <typename T, typename C>
static cudaError_t rg_apply_backward_go(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    const T *gq = (const T *)p->grad_q_out, *gk = (const T *)p->grad_k_out;
    if (!rg_apply_default_style_dev(s)) {
        if (!p->grad_cos)
            return rg_apply_styled_go<T, C, false>(s, -1.0f, gq, gk, nullptr, nullptr, (const C *)p->cos,
                                                   (const C *)p->sin, (T *)p->grad_q, (T *)p->grad_k, nullptr, nullptr, st);
        return rg_apply_styled_go<T, C, true>(s, -1.0f, gq, gk, (const T *)p->q, (const T *)p->k, (const C *)p->cos,
                                              (const C *)p->sin, (T *)p->grad_q, (T *)p->grad_k, (C *)p->grad_cos,
                                              (C *)p->grad_sin, st);
    }
    if (!p->grad_cos)
        return rg_apply_pairs_go<T, C>(s, -1.0f, gq, gk, (const C *)p->cos, (const C *)p->sin, (T *)p->grad_q,
                                       (T *)p->grad_k, st);
    int dev = 0, sms = 0, smem_max = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e != cudaSuccess) return e;
    const uint32_t split_threads = rg_apply_split_threads<T, C>(p);
    rg_apply_staged_block blk;
    if (rg_apply_staged_applies<T, C>(p, smem_max, &blk)) {
        bool launched = false;
        e = rg_apply_staged_pick<T, C>(p, blk, split_threads, sms, smem_max, st, &launched);
        if (e != cudaSuccess || launched) return e;
    }
    if (split_threads) return rg_apply_split_launch<T, C>(p, split_threads, st);
    const int64_t rows = rg_apply_cs_rows_of(s);
    rg_apply_columns<T, C><<<rg_apply_grid(rows * (s.head_dim / 2)), 256, 0, st>>>(
        s, gq, gk, (const T *)p->q, (const T *)p->k, (const C *)p->cos, (const C *)p->sin, (T *)p->grad_q, (T *)p->grad_k,
        (C *)p->grad_cos, (C *)p->grad_sin);
    return cudaGetLastError();
}

// The launcher for a validated problem: the dtype pair picks the instance.
template <typename T>
static cudaError_t rg_apply_backward_cs(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    switch (p->shape.cos_sin_dtype) {
    case ROPEGRAD_BF16: return rg_apply_backward_go<T, __nv_bfloat16>(p, st);
    case ROPEGRAD_F16: return rg_apply_backward_go<T, __half>(p, st);
    default: return rg_apply_backward_go<T, float>(p, st);
    }
}

static cudaError_t rg_rope_apply_backward_launch(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    switch (p->shape.dtype) {
    case ROPEGRAD_BF16: return rg_apply_backward_cs<__nv_bfloat16>(p, st);
    case ROPEGRAD_F16: return rg_apply_backward_cs<__half>(p, st);
    default: return rg_apply_backward_cs<float>(p, st);
    }
}
