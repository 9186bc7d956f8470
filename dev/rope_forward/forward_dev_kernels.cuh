/* SPDX-License-Identifier: Apache-2.0 */
// forward_dev_kernels.cuh -- development versions of the forward ops' kernels
// (011: position ids -> cos_sin, 012: freqs -> cos, sin), llm.c dev/cuda style,
// beside the shipped ones (src/op/forward_kernels.cuh = version 1 here). Built
// and compared by dev/rope_forward/dev_forward.cu; dev/rope_forward/NOTES.md has the outcomes.
//
// Every version but 4 writes, for each value, the bf16 nearest to
// scale*sin/cos(x) (x the float product p*inv for 011, the given float for
// 012), so versions 1-3 must agree bit for bit; dev_forward checks that.
//
//  1 shipped   src/op/forward_kernels.cuh as it is now: since 2026-12-01 that
//              is version 5 (with values per thread chosen by size). Before, it
//              was rg_sincos_bf16 per value (bf16 of v-t and v+t, a branch to an
//              out-of-line double path per value; `git show 3764848:src/op/
//              forward_kernels.cuh`), measured as "1-shipped" in
//              results/dev/forward-2026-12-01-run{1,2,3}.txt.
//  2 mid       the same values from a cheaper test: the only bf16 rounding a
//              float error t can flip is the one at the midpoint nearest v, so
//              |v - m| <= t (m = v's top 16 bits | 0x8000) replaces the two
//              roundings; the pair is packed by one cvt.rn.bf16x2.f32; the
//              error bound's absolute part grows with |x| (the reduction's
//              rounding is proportional to q, zero for |x| < pi/4) instead of
//              a constant, so small arguments (low frequencies at small
//              positions) no longer fall back; one branch per thread, to an
//              out-of-line path that redoes only the flagged values in double.
//  3 double    every value in double (rg_sincos_double + one rounding): no
//              branch, no fallback; for small problems, where the rare path's
//              cold code (fetched from DRAM after the cold-L2 flush) may cost
//              more than the arithmetic.
//  4 plain     2's arithmetic without the rounding test (NOT correctly rounded;
//              timing only: what the test costs).
//  5 refine    2 with a cheaper rare path and a cheaper common one: the flagged
//              values are redone inline (no call) in double from the fast
//              path's quadrant, with Estrin-scheme polynomials (a dependent
//              chain of ~6 double ops instead of ~12, no rint/F2I conversions);
//              only |x| > 4e6, NaN/Inf and a huge scale take the out-of-line
//              libdevice path. The reduction constants are all subtracted
//              (C1 = pi/2 rounded down), so sin(-0) = -0 without a test; scale
//              == 1 compiled apart (no multiplies); 32-bit indexing.
//  6 = 5 without the rounding test, 7 = 5 with no arithmetic (x's bits
//      stored): timing only, to split 5's time into memory, arithmetic, test.
//  8 loop      (removed after measuring; code in commit 1c2744f) 5's arithmetic
//              with each warp looping over up to 32 consecutive rows, positions
//              (or freqs) fetched before the loop, on a grid of 2k-8k warps, so
//              stores would go out while the next row computes: slower than 5 on
//              every workload (results/dev/forward-2026-12-01-run3.txt).
// 10 memo-chunk (011) a thread per (s, chunk of 8 batches) computes its first
//              row and reuses the words for the next rows of the chunk whose
//              position is the same float (correct for any input). Dataset
//              inputs (every batch holds s): W14 at its floor, but packed
//              sequences (other positions per batch) 1.54x the floor against
//              5's 1.35x: each thread then computes 8 rows serially.
// 11 memo-block (011) one row per thread group as 5, a block of 8 batches at
//              one or two s; rows whose position equals the block's first
//              batch's take its words from shared memory after a barrier, the
//              rest compute. Slower than 5 on both kinds of input.
// 12 lean      5 with the reduction in two FMA steps, the test and the range
//              check as one predicate chain, the rare path redoing the test per
//              value: no gain (geomean within 1% of 5 on both ops, run 7);
//              removed (code in commit 7a5a238).
// 13 warm     (removed after measuring; code in commit 33f845a) 5 with the
//              refinement out of line, and warp 0 of each block running it on a
//              dummy value after issuing its loads so its code would be fetched
//              early: slower everywhere (run 9; the latency, not the code fetch,
//              is what costs). 13-call: the out-of-line call alone, also slower.
// 16 tight    14 with, at scale 1, half the error bound in the rounding test (the
//              whole-range check, dev/common/sincos_bound.cu, measured the error at most
//              0.334 of the full bound): about half as many values refined. The
//              library has gone further since 082636b: 3/8 of the bound at scale 1.
// 17 u23      (011) the library's kernel (3/8 of the bound at scale 1 since
//              this version) with the position converted by the magic number
//              (0x4b000000 | p, minus 2^23: an OR and an FADD, exact for 0 <= p
//              < 2^23) instead of I2F.S64; other positions take the far path.
// 18 spec     (011) 14 at 1 or 2 values per thread with every value's
//              refinement computed and the flagged ones kept (no branch), so a
//              flagged value would not wait for the test: 1.67x the floor against
//              the shipped 1.17x, small workloads included (results/dev/
//              forward-2026-12-01-run16.txt): the double path for every value
//              costs far more than the rare branch saves.
// 22 noref    (011) 5 (the side refinement at 1 value a thread) with the test
//              kept but nothing refined (a flagged value's word has a bit
//              flipped): what the refinement costs where some warp nearly
//              always has a flagged value. 23 ffemu: 22 with 12 dependent FFMAs
//              ahead of the core, the chain of a first stage about twice as
//              long (a float-float core accurate enough to flag ~1e-6 of the
//              values would be about that). Timing only, not correct.
// 24 warm     (011) the common path in a loop of two passes, the first on dummy
//              values while the loads are in flight, so its code would be fetched
//              under their latency (after the flush it comes from DRAM): slower
//              than 14 and 5 on every workload, plain (no test) included (run 26):
//              the cold code is not what the small problems wait on.
// 19 defer    (011; its kernel moved to the library as rg_rope_forward_loop,
//              which dev_forward now times under this name) rows in a loop per
//              warp as 8, 4 values per lane, on a grid
//              of a few thousand warps, but a value the test flags is only noted
//              (a bit per value) and redone after the loop, so the loop body is
//              the common path alone. At 16 warps per SM: the largest workloads
//              at their floor (W14) or near it (W13 1.08x), W5 0.25 us faster
//              than the flat kernel, the ones under 12288 rows slower (runs 16,
//              17, 21). Shipped from 12288 rows as rg_rope_forward_loop (version
//              20 below times the library's own at other grids). 19-plain: no
//              test (timing only).
// 20 lib-loop  (011) the library's rg_rope_forward_loop at a chosen grid and
//              block size (run 22: 256 threads and 16 warps per SM, shipped, are
//              as good as any). A first library cut that noted flags per step of
//              two rows and redid a flagged step whole, and checked the range
//              once per step (|p| * max|inv|), was 0.2-0.4 us slower than 19 on
//              W5, W13, W14 (run 20), so the library took 19's body.
// 14 side     5 with the refinement decided by one compare against the midpoint
//              next to each float value (rg_sincos_bf16_refine_side); 15 fix:
//              from the rounded pair alone (two compares, fd_sincos_bf16_refine_fix
//              below). Runs 10-12; the library ships 14's refinement at 1 value
//              per thread (011) or 2 (012).
// 25 sfu      (011; timing only, wrong beyond small arguments) 6 with the
//              special-function unit's sin/cos of the unreduced product
//              (__sinf/__cosf: an FMUL and a MUFU each), no test: the cheapest
//              per-value sin/cos the hardware has, so how far from the floor any
//              kernel that evaluates a sin/cos per value must sit.
// 26 shfl     (011; removed after measuring, code in commit 9265ee4) the
//              library's common path and refinement (rg_rope_forward_words) with
//              the stores gathered by shuffles so that every lane stores once: 16
//              B at 2 values a thread (lanes 0-15 the warp's row at j, 16-31 at
//              j+64: the floor's fl11_t32 pattern), 8 B at 1 value a thread,
//              instead of two stores of 8 or 4 B: slower than the shipped kernel
//              at both (1.24x the floor at its best against 14-side's 1.18x,
//              results/dev/forward-2026-12-01-run27.txt, ops/dev-forward.txt).
// 27 mufu     (012) the fast mode without a bound: 6 (no rounding test) with
//              rg_sincos_mufu (Cody-Waite modulo 2 pi in two FMA parts: the first
//              step exact, the dropped part below |q| * 2^-47 < 3e-10 for |x| <=
//              262144, then sin.approx/cos.approx on the reduced argument): the
//              public CUDA peer's approach (~7 instructions a value against ~20
//              for rg_sincos_core). Its error is absolute (at most 7.6e-7 up to
//              4e6 rad, dev/rope_forward/NOTES.md "Accuracy"), so values near a zero of sin
//              or cos (|v| below ~2^-12) can miss 1 bf16 ulp: dev_forward's accuracy
//              section counts them.
// 28 mufu-guard (012) 27 with any value whose sin or cos comes out below
//              FD_MUFU_NEAR0 in magnitude redone by rg_sincos_core (relative
//              error <= 3 float ulps): above it an absolute error of 7.6e-7 is at
//              most 0.4 of a bf16 ulp of |v| >= 2^-11 at any scale (the scaled
//              value's ulp is at least scale * 2^-19), so every output should be
//              within 0.9 ulp; rare (|v| < 5e-4 for sin or cos: about 6 in 10^4
//              uniformly spread arguments, ~4% of 64-value warps take the branch). The accuracy section measures it.
// 30 mufu-cr  (012) correctly rounded from the special-function unit: 27's
//              arithmetic (rg_sincos_mufu) with an absolute rounding test
//              (fd_sincos_scaled_mufu below: the midpoint next to
//              v more than t = |scale| * 1.07e-6 away and |v| > 1024 t, else the
//              value is redone in double by rg_sincos_bf16_scratch), so the
//              shipped kernel's bits (checked bit for bit) at about the peer's
//              arithmetic cost; the bound the test assumes was checked over every
//              float argument (results/dev/14-012-mufu-cr/sincos-bound.txt).
//              Slower than the shipped kernel (1.20x the floor at /2): dropped.
// 31 quad     (012) a fast mode: fd_sincos_quad_mufu (below:
//              rg_sincos_core's reduction by pi/2, then sin.approx/cos.approx on
//              |r| <= 0.9 and the quadrant's swap), no rounding test: the
//              special-function unit's short chain with an error relative to the
//              value, it was hoped, so every output within 1 bf16 ulp near the zeros
//              of sin and cos too; sin.approx's error is absolute there as well (an
//              exhaustive pass, results/dev/15-012-quad-plain4/): dropped.
// 32 late     (012) 5 (correctly rounded, the scratch refinement) with the
//              float path's words stored before any refinement, and a flagged
//              thread's words redone and stored again after: whether 5/4's time
//              above 6-plain/4 (results/dev/15-012-quad-plain4) is the
//              refinement's latency on the stores' path. Bit for bit the shipped.
// 33 no-refine (012) 5 with the test kept and the refinement dropped (a flag
//              flips a bit): timing only, the test's own cost.
// 34 lean     (012) the fast kernel with fd_sincos_lean (sincos_lean.cuh: sin
//              of degree 5, cos of degree 6, the quadrant's signs folded into
//              r): 2 instructions a value fewer in SASS, every output within
//              0.5 + 2^-8 bf16 ulp (exhaustive, dev/common/sincos_bound.cu); no
//              faster (results/dev/19-012-lean/). Not shipped.
// 35 adapt    (012) the fast kernel's arithmetic with the block size chosen at
//              launch for about one block an SM (fd12_adapt_go): no faster
//              (results/dev/20-012-adapt/). Not shipped.
// 29 lib/2    (012) the library's own kernel (rg_cos_sin_go, correctly rounded)
//              at 2 values a thread on every shape: the public peer's geometry
//              (32 threads a row, 256-thread blocks, one 8-byte load and four
//              4-byte stores a thread), which the library already uses below
//              RG_CS_VPT4_ROWS rows; above it the library takes 4 values a
//              thread (16 a row, 8-byte stores). Checked bit for bit.
// 6-plain/2   (012) 6 at the peer's geometry: rg_sincos_core without the
//              rounding test: every output within 0.5 + 3*2^-16 bf16 ulp at
//              scale 1 (not always the nearest), the 1-ulp fast mode with a proof.
//  shipped since 2026-12-01: 5, for both ops (10 and 11: not shipped, see
//              results/dev/forward-2026-12-01-run{4,5}.txt, where their
//              column is "1-shipped" -- each was the library's kernel then).
// VPT (values per thread) is a launch parameter: 1, 2, 4 (011) / 2, 4, 8 (012).
// The library now redoes flagged values with 2 or
// more a thread by rg_sincos_bf16_scratch (integer rounding of the doubles);
// versions 3 and 5 here keep rg_sincos_bf16_double (the same bits).
#pragma once

#include <algorithm>

#include "cos_sin/kernels.cuh"
#include "rope_forward/kernels.cuh"
#include "sincos_lean.cuh"   // version 34

// VPT floats from 4*VPT-byte aligned memory, 8 included (the library's
// rg_load_floats stops at 4: no shipped kernel takes 8).
template <int VPT>
static __device__ __forceinline__ void fd_load_floats(const float *p, float *f)
{
    if constexpr (VPT == 8) {
        const float4 a = __ldg((const float4 *)p), b = __ldg((const float4 *)p + 1);
        f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
    } else {
        rg_load_floats<VPT>(p, f);
    }
}

// The common path of VPT values at position p: their words (w), whether an
// argument or the scale leaves the fast range (far), and the mask of values
// whose bf16 rounding the test leaves uncertain (returned). TEST false: no
// test (the timing-only variants). The library's rg_rope_forward_common
// (src/op/rope_forward/kernels.cuh) always tests.
template <int VPT, bool S1, bool TEST = true>
static __device__ __forceinline__ uint32_t fd_rope_forward_common(float p, const float *f, float scale,
                                                                  rg_wordvec<VPT> &w, bool &far)
{
    uint32_t amb = 0;
    far = !(fabsf(scale) <= 1.0e30f);
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        const float x = p * f[i];
        float vs, vc;
        if (TEST) {
            if (rg_sincos_scaled<S1>(x, scale, &vs, &vc)) amb |= 1u << i;
        } else {
            rg_sincos_core(x, &vs, &vc);
            if (!S1) vs *= scale, vc *= scale;
        }
        far |= !(fabsf(x) <= RG_SINCOS_FAST_MAX);
        w.w[i] = rg_pack_bf16x2(vc, vs);
    }
    return amb;
}

// The library's rg_rope_forward_loop with a TEST parameter (false: no rounding test, timing only).
template <bool S1, bool TEST = true>
static __global__ void __launch_bounds__(256) fd_rope_forward_loop(const int64_t *__restrict__ pos,
                                                                   const float *__restrict__ inv, float scale,
                                                                   uint32_t *__restrict__ out, int rows, int rpw)
{
    constexpr int VPT = 4, H = 64, RPS = 2;
    const int lane = threadIdx.x & 31, k = lane & 15, sub = lane >> 4;
    const int r0 = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * rpw;
    if (r0 >= rows) return;   // whole warps: the loop shuffles
    const int rend = min(r0 + rpw, rows);
    float f[VPT];
    fd_load_floats<VPT>(inv + VPT * k, f);
    const float pl = r0 + lane < rend ? (float)__ldg(pos + r0 + lane) : 0.0f;
    uint64_t defer = 0;
    int step = 0;
#pragma unroll 1
    for (int r = r0; r < rend; r += RPS, step++) {
        const int rr = r + sub;
        const float p = __shfl_sync(0xffffffffu, pl, (rr - r0) & 31);
        if (rr >= rend) continue;
        uint32_t *o = out + (size_t)rr * (2 * H) + VPT * k;
        rg_wordvec<VPT> w;
        bool far;
        const uint32_t amb = fd_rope_forward_common<VPT, S1, TEST>(p, f, scale, w, far);
        if (far) {
            rg_rope_forward_far<VPT>(pos + rr, inv + VPT * k, scale, o, H);
            continue;
        }
        rg_store_words<VPT>(o, w);
        rg_store_words<VPT>(o + H, w);
        defer |= (uint64_t)amb << (step * VPT);
    }
#pragma unroll 1
    while (defer) {
        const int b = __ffsll((long long)defer) - 1;
        defer &= defer - 1;
        const int rr = r0 + (b / VPT) * RPS + sub, i = b % VPT;
        const float fi = i == 0 ? f[0] : i == 1 ? f[1] : i == 2 ? f[2] : f[3];
        const uint32_t wd = rg_sincos_bf16_scratch<S1>((float)__ldg(pos + rr) * fi, scale);
        uint32_t *o = out + (size_t)rr * (2 * H) + VPT * k + i;
        o[0] = wd;
        o[H] = wd;
    }
}



// The rounding test of versions 2-16, before the library's test in ulps
// (rg_bf16_near_mid<K>, rope_math.cuh): a bound in units of the value,
// FD_REL_ERR |v| + an absolute part per radian of |x|, against the distance
// to the bf16 midpoint as a float subtraction. Valid (results/
// sincos-bound.txt of 2026-12-01 found the core's error within a third of
// it), only dearer: kept so those versions still time what they timed.
// FD_ABS_PER_RAD: 2^-47 (versions 2-4); FD_ABS_PER_RAD46: 2^-46 (5-16).
#define FD_REL_ERR 4.76837158203125e-07f        // 2^-21
#define FD_ABS_PER_RAD 7.105427357601002e-15f
#define FD_ABS_PER_RAD46 1.4210854715202004e-14f

// Whether bf16_rn(v) might differ from the bf16 nearest a value within t of v.
static __device__ __forceinline__ bool fd_near_mid(float v, float t)
{
    const float m = __uint_as_float((__float_as_uint(v) & 0xffff0000u) | 0x8000u);
    return fabsf(v - m) <= t;
}

// vs, vc = scale*sin(x), scale*cos(x) in float; returns whether either may round
// to the wrong bf16 (or x is off the fast path). sa = |scale| * FD_ABS_PER_RAD.
template <bool CHECK>
static __device__ __forceinline__ bool fd_sincos_scaled(float x, float scale, float sa, float *vs, float *vc)
{
    float s, c;
    rg_sincos_core(x, &s, &c);
    *vs = s * scale;
    *vc = c * scale;
    if (!CHECK) return !(fabsf(x) <= RG_SINCOS_FAST_MAX);
    const float ta = fabsf(x) * sa;
    const float ts = fmaf(fabsf(*vs), FD_REL_ERR, ta), tc = fmaf(fabsf(*vc), FD_REL_ERR, ta);
    return !(fabsf(x) <= RG_SINCOS_FAST_MAX) | fd_near_mid(*vs, ts) | fd_near_mid(*vc, tc);
}

// Exact-as-double (cos | sin << 16) word of one value: the slow path.
static __device__ __forceinline__ uint32_t fd_word_double(float x, float scale)
{
    double s, c;
    rg_sincos_double(x, &s, &c);
    return rg_bf16_rn_double((double)scale * c) | (rg_bf16_rn_double((double)scale * s) << 16);
}

template <int N> struct fd_words { uint32_t w[N]; };

// ---- 011 ---------------------------------------------------------------------------------
// Out of line: redo the flagged values of a thread in double, store its 2 runs.
template <int VPT>
static __device__ __noinline__ void fd11_slow(const int64_t *pos, const float *inv, float scale, uint32_t mask,
                                              fd_words<VPT> w, uint32_t *o, int tpr)
{
    const float p = (float)*pos;
    for (int i = 0; i < VPT; i++)
        if (mask >> i & 1) w.w[i] = fd_word_double(p * inv[i], scale);
    for (int i = 0; i < VPT; i++) o[i] = w.w[i], o[i + VPT * tpr] = w.w[i];
}

template <int VPT> struct fd_store;
template <> struct fd_store<1> {
    static __device__ __forceinline__ void go(uint32_t *o, const uint32_t *w) { *o = w[0]; }
};
template <> struct fd_store<2> {
    static __device__ __forceinline__ void go(uint32_t *o, const uint32_t *w) { *(uint2 *)o = make_uint2(w[0], w[1]); }
};
template <> struct fd_store<4> {
    static __device__ __forceinline__ void go(uint32_t *o, const uint32_t *w)
    {
        *(uint4 *)o = make_uint4(w[0], w[1], w[2], w[3]);
    }
};

// V: 2 mid, 3 double, 4 plain. H = 64 (head_dim 128) fixed.
template <int V, int VPT>
static __global__ void __launch_bounds__(256) fd11(const int64_t *__restrict__ pos, const float *__restrict__ inv,
                                                   float scale, uint32_t *__restrict__ out, int64_t rows)
{
    constexpr int H = 64, TPR = H / VPT;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / TPR;
    const int k = (int)(t % TPR);
    if (r >= rows) return;
    const float p = (float)__ldg(pos + r);
    float f[VPT];
    fd_load_floats<VPT>(inv + VPT * k, f);
    uint32_t *o = out + r * (2 * H) + VPT * k;   // a row: 2*H words (cos | sin << 16)
    fd_words<VPT> w;
    if constexpr (V == 3) {
#pragma unroll
        for (int i = 0; i < VPT; i++) w.w[i] = fd_word_double(p * f[i], scale);
    } else {
        const float sa = fabsf(scale) * FD_ABS_PER_RAD;
        uint32_t mask = (fabsf(scale) <= 1.0e30f) ? 0u : ~0u;
#pragma unroll
        for (int i = 0; i < VPT; i++) {
            float vs, vc;
            if (fd_sincos_scaled<V == 2>(p * f[i], scale, sa, &vs, &vc)) mask |= 1u << i;
            w.w[i] = rg_pack_bf16x2(vc, vs);
        }
        if (mask & ((1u << VPT) - 1)) {
            fd11_slow<VPT>(pos + r, inv + VPT * k, scale, mask, w, o, TPR);
            return;
        }
    }
    fd_store<VPT>::go(o, w.w);
    fd_store<VPT>::go(o + H, w.w);
}

template <int V, int VPT>
static void fd11_go(const int64_t *pos, const float *inv, float scale, uint16_t *out, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    fd11<V, VPT><<<(unsigned)((n + 255) / 256), 256, 0, st>>>(pos, inv, scale, (uint32_t *)out, rows);
}

// ---- 012 ---------------------------------------------------------------------------------
template <int VPT>
static __device__ __noinline__ void fd12_slow(const float *x, float scale, uint32_t mask, fd_words<VPT / 2> cw,
                                              fd_words<VPT / 2> sw, uint32_t *oc, uint32_t *os, int H2)
{
    for (int i = 0; i < VPT; i++)
        if (mask >> i & 1) {
            const uint32_t wd = fd_word_double(x[i], scale);
            const int sh = (i & 1) * 16;
            cw.w[i / 2] = (cw.w[i / 2] & ~(0xffffu << sh)) | ((wd & 0xffffu) << sh);
            sw.w[i / 2] = (sw.w[i / 2] & ~(0xffffu << sh)) | ((wd >> 16) << sh);
        }
    for (int i = 0; i < VPT / 2; i++) oc[i] = cw.w[i], oc[i + H2] = cw.w[i], os[i] = sw.w[i], os[i + H2] = sw.w[i];
}

template <int V, int VPT>
static __global__ void __launch_bounds__(256) fd12(const float *__restrict__ freqs, float scale,
                                                   uint32_t *__restrict__ cos_out, uint32_t *__restrict__ sin_out,
                                                   int64_t rows)
{
    constexpr int H = 64, TPR = H / VPT, H2 = H / 2;   // H2: words per half row
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / TPR;
    const int k = (int)(t % TPR);
    if (r >= rows) return;
    const float *in = freqs + r * H + VPT * k;
    float f[VPT];
    fd_load_floats<VPT>(in, f);
    uint32_t *oc = cos_out + r * H + (VPT / 2) * k, *os = sin_out + r * H + (VPT / 2) * k;
    fd_words<VPT / 2> cw, sw;
    if constexpr (V == 3) {
#pragma unroll
        for (int i = 0; i < VPT / 2; i++) {
            const uint32_t a = fd_word_double(f[2 * i], scale), b = fd_word_double(f[2 * i + 1], scale);
            cw.w[i] = (a & 0xffffu) | (b << 16);
            sw.w[i] = (a >> 16) | (b & 0xffff0000u);
        }
    } else {
        const float sa = fabsf(scale) * FD_ABS_PER_RAD;
        uint32_t mask = (fabsf(scale) <= 1.0e30f) ? 0u : ~0u;
        float vs[VPT], vc[VPT];
#pragma unroll
        for (int i = 0; i < VPT; i++)
            if (fd_sincos_scaled<V == 2>(f[i], scale, sa, &vs[i], &vc[i])) mask |= 1u << i;
#pragma unroll
        for (int i = 0; i < VPT / 2; i++) {
            cw.w[i] = rg_pack_bf16x2(vc[2 * i], vc[2 * i + 1]);
            sw.w[i] = rg_pack_bf16x2(vs[2 * i], vs[2 * i + 1]);
        }
        if (mask & ((1u << VPT) - 1)) {
            fd12_slow<VPT>(in, scale, mask, cw, sw, oc, os, H2);
            return;
        }
    }
    fd_store<VPT / 2>::go(oc, cw.w);
    fd_store<VPT / 2>::go(oc + H2, cw.w);
    fd_store<VPT / 2>::go(os, sw.w);
    fd_store<VPT / 2>::go(os + H2, sw.w);
}

template <int V, int VPT>
static void fd12_go(const float *freqs, float scale, uint16_t *c, uint16_t *s, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    fd12<V, VPT><<<(unsigned)((n + 255) / 256), 256, 0, st>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, rows);
}

// Version 15's refinement (dev only: it cost the library's 011 kernel 0.1-0.6 us
// on the mid-size and large workloads, results/dev/probe-ops-2026-12-01-k14-fix.txt).
// b (the bits of a bf16, 16 bits) corrected to the bf16 nearest z, for a b
// rounded to nearest from a float within t of z, t far below a quarter of a
// bf16 spacing (rg_sincos_scaled's bound): the answer is b or a neighbour, on
// the far side of the midpoint above or below b (in magnitude). Two compares in
// double against midpoints made from b alone (NaN, so false, below a zero b),
// ties to even: no rounding of z through float and its midpoint check.
static __device__ __forceinline__ uint32_t fd_bf16_fix(uint32_t b, double z)
{
    const double a = fabs(z);
    const double up = fabs((double)__uint_as_float(b << 16 | 0x8000u));
    const double dn = fabs((double)__uint_as_float((b - 1u) << 16 | 0x8000u));
    if (a > up || (a == up && (b & 1u))) return b + 1u;
    if (a < dn || (a == dn && (b & 1u))) return b - 1u;
    return b;
}

// The refinement of a (cos | sin << 16) pair w that the float path rounded but
// could not certify: x's sin/cos redone in double, times scale, and each half
// of w corrected by rg_bf16_fix. Only w and x are needed, so a thread keeps no
// float values alive for it. |x| <= RG_SINCOS_FAST_MAX and a finite scale
// (callers check). S1: scale == 1.
template <bool S1>
static __device__ __forceinline__ uint32_t fd_sincos_bf16_refine_fix(float x, float scale, uint32_t w)
{
    double s, c;
    rg_sincos_double_core(x, &s, &c);
    if (!S1) {
        s *= (double)scale;
        c *= (double)scale;
    }
    return fd_bf16_fix(w & 0xffffu, c) | (fd_bf16_fix(w >> 16, s) << 16);
}

// ---- version 5 (6, 7: its timing-only variants) -------------------------------------------
// Its device math is the library's: rg_sincos_core (C1 = pi/2 rounded down, so
// zeros keep their sign), rg_sincos_scaled (the test), rg_sincos_bf16_double
// (the inline refinement), in src/op/rope_math.cuh (so 5 takes up the
// library's test in ulps; 16 keeps the float bound it was measured with).

// ---------------------------------------------------------------------------
// Version 30 (mufu-cr): rg_sincos_scaled's correct rounding from the special-
// function unit's sin/cos. Measured and dropped (dev/cos_sin/NOTES.md): its
// absolute bound flags ~1e-3 of the suite's pairs, and the
// refinements cost more than the shorter arithmetic saves.
//
// rg_sincos_mufu's error is absolute, not relative: at most FD_SINCOS_MUFU_ABS
// for every float |x| <= RG_SINCOS_FAST_MAX (dev/common/sincos_bound.cu checked every
// one of them against double on the H200, results/dev/14-012-mufu-cr/; the documented bound of
// sin.approx/cos.approx on [-pi, pi] is 2^-21.41 = 3.6e-7, and the reduced
// argument's float rounding adds at most 2^-23 = 1.2e-7). Times a scale the
// product's rounding adds at most 2^-24 |scale| (1 + FD_SINCOS_MUFU_ABS), so
// |v - exact| <= |scale| * FD_SINCOS_MUFU_T, the threshold t below (the
// constant rounded up, and up again for the float product that makes t).
// The rounding test in absolute terms: the midpoint m nearest v (v's top 16
// bits | 0x8000, the same sign and exponent, so v - m is exact) must be more
// than t away, and |v| more than 1024 t: then the other midpoints are at least
// a quarter of v's bf16 spacing (2^(e-9) > t for |v| < 2^(e+1)) away and the
// exact value is on v's side of every one of them. Values near a zero of sin
// or cos (|v| <= 1024 t, about 1e-3 at scale 1) are therefore always redone,
// and so is every value at scale 0.
// ---------------------------------------------------------------------------
#define FD_SINCOS_MUFU_ABS 1.0e-6f
#define FD_SINCOS_MUFU_T 1.07e-6f

// Whether bf16_rn(v) might differ from the bf16 nearest a value within t of v.
static __device__ __forceinline__ bool fd_bf16_near_mid_abs(float v, float t)
{
    const float m = __uint_as_float((__float_as_uint(v) & 0xffff0000u) | 0x8000u);
    return fabsf(v - m) <= t || fabsf(v) <= 1024.0f * t;
}

// rg_sincos_scaled's contract from rg_sincos_mufu: vs, vc = scale*sin(x),
// scale*cos(x) in float; returns whether either might round to the wrong bf16.
// t = |scale| * FD_SINCOS_MUFU_T (FD_SINCOS_MUFU_T itself when S1), once a
// thread. |x| <= RG_SINCOS_FAST_MAX and |scale| <= 1e30 (callers check).
template <bool S1>
static __device__ __forceinline__ bool fd_sincos_scaled_mufu(float x, float scale, float t, float *vs, float *vc)
{
    float s, c;
    rg_sincos_mufu(x, &s, &c);
    *vs = S1 ? s : s * scale;
    *vc = S1 ? c : c * scale;
    return fd_bf16_near_mid_abs(*vs, t) | fd_bf16_near_mid_abs(*vc, t);
}

// Version 31's sin/cos: rg_sincos_core's reduction by pi/2 (the quadrant
// from the magic-number step, three FMA parts, r within ~1 float ulp of the
// exact reduced argument, relative to r), then the special-function unit on
// |r| <= 0.9 instead of the polynomials, and the quadrant's swap and signs.
// Near a zero of sin or cos the value comes from sin.approx on a small r,
// never from cos.approx near pi/2 (whose absolute error is what makes
// rg_sincos_mufu's small values wrong in every bit) -- the hope, which the
// exhaustive check disproved: sin.approx's error is absolute near 0 too (it
// returns 0 at r = 1.87e-7; results/dev/15-012-quad-plain4/).
static __device__ __forceinline__ void fd_sincos_quad_mufu(float x, float *s, float *c)
{
    const float big = fmaf(x, 0.636619746685028076f, 12582912.0f);  // 2/pi, 1.5*2^23
    const float q = big - 12582912.0f;
    const int qi = __float_as_int(big);
    float r = fmaf(q, -1.5707962512969971f, x);
    r = fmaf(q, -7.5497894158615964e-08f, r);
    r = fmaf(q, -5.3903029534742384e-15f, r);
    float sr, cr;
    asm("sin.approx.f32 %0, %1;" : "=f"(sr) : "f"(r));
    asm("cos.approx.f32 %0, %1;" : "=f"(cr) : "f"(r));
    const float sv = (qi & 1) ? cr : sr;
    const float cv = (qi & 1) ? sr : cr;
    *s = __int_as_float(__float_as_int(sv) ^ ((qi & 2) << 30));
    *c = __int_as_float(__float_as_int(cv) ^ (((qi + 1) & 2) << 30));
}

// Version 28's threshold: below it (2^-11 plus rg_sincos_mufu's error, rounded
// up) a value is redone by the polynomial core.
#define FD_MUFU_NEAR0 5.0e-4f

// MODE 0: correctly rounded (5); 1: no test (6); 2: no arithmetic (7); 10: 25; 11: 27; 12: 28; 13: 30;
// 14: 31; 15: 32; 16: 33; 17: 34 (fd_sincos_lean, sincos_lean.cuh);
// 3, 4: 5 with the refinement's rounding decided against the midpoints (14:
// rg_sincos_bf16_refine_side, from the float values; 15: fd_sincos_bf16_refine_fix,
// from the rounded pair).
template <bool S1, int MODE>
static __device__ __forceinline__ bool fd5_value(float x, float scale, float *vs, float *vc)
{
    if (MODE == 2) {
        *vs = x, *vc = -x;
        return false;
    }
    if (MODE == 5 && S1) {   // 16: at scale 1 half the bound (results/sincos-bound.txt: the error is <= 0.334 of it)
        float s, c;
        rg_sincos_core(x, &s, &c);
        *vs = s, *vc = c;
        const float ta = fabsf(x) * (0.5f * FD_ABS_PER_RAD46);
        return fd_near_mid(s, fmaf(fabsf(s), 0.5f * FD_REL_ERR, ta)) | fd_near_mid(c, fmaf(fabsf(c), 0.5f * FD_REL_ERR, ta));
    }
    if (MODE == 9) {   // 23: 12 dependent FFMAs ahead of the core (a longer first stage's chain, emulated)
#pragma unroll
        for (int i = 0; i < 12; i++) asm volatile("fma.rn.f32 %0, %0, 0f3F800000, 0f00000000;" : "+f"(x));
    }
    if (MODE == 10) {   // 25: the special-function unit, unreduced (timing only)
        *vs = S1 ? __sinf(x) : __sinf(x) * scale;
        *vc = S1 ? __cosf(x) : __cosf(x) * scale;
        return false;
    }
    if (MODE == 11 || MODE == 12) {   // 27 mufu, 28 mufu-guard (012)
        float s, c;
        rg_sincos_mufu(x, &s, &c);
        if (MODE == 12 && !(fabsf(s) >= FD_MUFU_NEAR0 && fabsf(c) >= FD_MUFU_NEAR0)) rg_sincos_core(x, &s, &c);
        *vs = S1 ? s : s * scale;
        *vc = S1 ? c : c * scale;
        return false;
    }
    if (MODE == 17) {   // 34 lean (012)
        float s, c;
        fd_sincos_lean(x, &s, &c);
        *vs = S1 ? s : s * scale;
        *vc = S1 ? c : c * scale;
        return false;
    }
    if (MODE == 14) {   // 31 quad (012)
        float s, c;
        fd_sincos_quad_mufu(x, &s, &c);
        *vs = S1 ? s : s * scale;
        *vc = S1 ? c : c * scale;
        return false;
    }
    if (MODE == 13)   // 30 mufu-cr (012)
        return fd_sincos_scaled_mufu<S1>(x, scale, S1 ? FD_SINCOS_MUFU_T : fabsf(scale) * FD_SINCOS_MUFU_T, vs, vc);
    if (MODE == 0 || MODE >= 3) return rg_sincos_scaled<S1>(x, scale, vs, vc);
    float s, c;
    rg_sincos_core(x, &s, &c);
    *vs = S1 ? s : s * scale;
    *vc = S1 ? c : c * scale;
    return false;
}

template <int VPT, bool S1, int MODE, int BS = 256>
static __global__ void __launch_bounds__(BS) fd11_v5(const int64_t *__restrict__ pos, const float *__restrict__ inv,
                                                     float scale, uint32_t *__restrict__ out, int rows)
{
    constexpr int H = 64, TPR = H / VPT;
    const int t = blockIdx.x * BS + threadIdx.x;
    const int r = t / TPR, k = t % TPR;
    if (r >= rows) return;
    // 17: the position to float by the magic number (exact for 0 <= p < 2^23:
    // an OR and an FADD instead of I2F.S64); other positions take the far path.
    const int64_t pi = __ldg(pos + r);
    const float p = MODE == 6 ? __uint_as_float(0x4b000000u | (uint32_t)pi) - 8388608.0f : (float)pi;
    float f[VPT];
    fd_load_floats<VPT>(inv + VPT * k, f);
    uint32_t *o = out + (size_t)r * (2 * H) + VPT * k;
    uint32_t amb = 0;
    bool far = !(fabsf(scale) <= 1.0e30f) || (MODE == 6 && (uint64_t)pi >= (1u << 23));
    fd_words<VPT> w;
    float vs[VPT], vc[VPT];
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        const float x = p * f[i];
        if (fd5_value<S1, MODE>(x, scale, &vs[i], &vc[i])) amb |= 1u << i;
        far |= !(fabsf(x) <= RG_SINCOS_FAST_MAX);
        w.w[i] = rg_pack_bf16x2(vc[i], vs[i]);
    }
    if (MODE != 2 && far) {
        fd11_slow<VPT>(pos + r, inv + VPT * k, scale, ~0u, w, o, TPR);
        return;
    }
    if (MODE == 7) {   // 18: every value's refinement computed, the flagged ones kept (no branch)
#pragma unroll
        for (int i = 0; i < VPT; i++) {
            const uint32_t wr = rg_sincos_bf16_refine_side<S1>(p * f[i], scale, vc[i], vs[i]);
            w.w[i] ^= (w.w[i] ^ wr) & (0u - (amb >> i & 1u));
        }
    } else if (MODE >= 8) {   // 22, 23: the test kept (its flags flip a bit) but nothing refined: timing only
#pragma unroll
        for (int i = 0; i < VPT; i++) w.w[i] ^= amb >> i & 1u;
    } else if (amb) {
#pragma unroll
        for (int i = 0; i < VPT; i++)
            if (amb >> i & 1)
                w.w[i] = MODE == 3 || MODE == 5 || (MODE == 6 && VPT == 1)
                             ? rg_sincos_bf16_refine_side<S1>(p * f[i], scale, vc[i], vs[i])
                         : MODE == 4 ? fd_sincos_bf16_refine_fix<S1>(p * f[i], scale, w.w[i])
                                     : rg_sincos_bf16_double(p * f[i], scale);
    }
    fd_store<VPT>::go(o, w.w);
    fd_store<VPT>::go(o + H, w.w);
}

template <int MODE, int VPT, int BS = 256>
static void fd11_v5_go(const int64_t *pos, const float *inv, float scale, uint16_t *out, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    const unsigned g = (unsigned)((n + BS - 1) / BS);
    if (scale == 1.0f) fd11_v5<VPT, true, MODE, BS><<<g, BS, 0, st>>>(pos, inv, scale, (uint32_t *)out, (int)rows);
    else fd11_v5<VPT, false, MODE, BS><<<g, BS, 0, st>>>(pos, inv, scale, (uint32_t *)out, (int)rows);
}

template <int VPT, bool S1, int MODE, int BS = 256>
static __global__ void __launch_bounds__(BS) fd12_v5(const float *__restrict__ freqs, float scale,
                                                     uint32_t *__restrict__ cos_out, uint32_t *__restrict__ sin_out,
                                                     int rows)
{
    constexpr int H = 64, TPR = H / VPT, H2 = H / 2;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;   // blockDim.x <= BS (35: chosen at launch)
    const int r = t / TPR, k = t % TPR;
    if (r >= rows) return;
    const float *in = freqs + (size_t)r * H + VPT * k;
    float f[VPT];
    fd_load_floats<VPT>(in, f);
    uint32_t *oc = cos_out + (size_t)r * H + (VPT / 2) * k, *os = sin_out + (size_t)r * H + (VPT / 2) * k;
    uint32_t amb = 0;
    bool far = !(fabsf(scale) <= 1.0e30f);
    float vs[VPT], vc[VPT];
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        if (fd5_value<S1, MODE>(f[i], scale, &vs[i], &vc[i])) amb |= 1u << i;
        far |= !(fabsf(f[i]) <= RG_SINCOS_FAST_MAX);
    }
    fd_words<VPT / 2> cw, sw;
#pragma unroll
    for (int i = 0; i < VPT / 2; i++) {
        cw.w[i] = rg_pack_bf16x2(vc[2 * i], vc[2 * i + 1]);
        sw.w[i] = rg_pack_bf16x2(vs[2 * i], vs[2 * i + 1]);
    }
    if (MODE != 2 && far) {
        fd12_slow<VPT>(in, scale, ~0u, cw, sw, oc, os, H2);
        return;
    }
    if (MODE == 15) {   // 32 late: the float path's words stored first, the flagged ones redone and stored again
        fd_store<VPT / 2>::go(oc, cw.w);
        fd_store<VPT / 2>::go(oc + H2, cw.w);
        fd_store<VPT / 2>::go(os, sw.w);
        fd_store<VPT / 2>::go(os + H2, sw.w);
        if (!amb) return;
    }
    if (MODE == 16) {   // 33 no-refine: the test kept (its flags flip a bit), nothing redone: timing only
#pragma unroll
        for (int i = 0; i < VPT; i++) cw.w[i / 2] ^= (amb >> i & 1u) << ((i & 1) * 16);
    } else if (amb) {
#pragma unroll
        for (int i = 0; i < VPT; i++)
            if (amb >> i & 1) {
                const int sh = (i & 1) * 16;
                const uint32_t wd =
                    MODE == 13 || MODE == 15 ? rg_sincos_bf16_scratch<S1>(f[i], scale)
                    : MODE == 3 || MODE == 5 ? rg_sincos_bf16_refine_side<S1>(f[i], scale, vc[i], vs[i])
                    : MODE == 4 ? fd_sincos_bf16_refine_fix<S1>(f[i], scale,
                                                            (cw.w[i / 2] >> sh & 0xffffu) | (sw.w[i / 2] >> sh) << 16)
                                : rg_sincos_bf16_double(f[i], scale);
                cw.w[i / 2] = (cw.w[i / 2] & ~(0xffffu << sh)) | ((wd & 0xffffu) << sh);
                sw.w[i / 2] = (sw.w[i / 2] & ~(0xffffu << sh)) | ((wd >> 16) << sh);
            }
    }
    fd_store<VPT / 2>::go(oc, cw.w);
    fd_store<VPT / 2>::go(oc + H2, cw.w);
    fd_store<VPT / 2>::go(os, sw.w);
    fd_store<VPT / 2>::go(os + H2, sw.w);
}

template <int MODE, int VPT, int BS = 256>
static void fd12_v5_go(const float *freqs, float scale, uint16_t *c, uint16_t *s, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    const unsigned g = (unsigned)((n + BS - 1) / BS);
    if (scale == 1.0f) fd12_v5<VPT, true, MODE, BS><<<g, BS, 0, st>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, (int)rows);
    else fd12_v5<VPT, false, MODE, BS><<<g, BS, 0, st>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, (int)rows);
}

// Version 35: the fast kernel's arithmetic (MODE 1) with the block size chosen
// at launch so that a one-wave problem has about one block an SM: the
// smallest multiple of 32 threads with at most NSM blocks (64..1024), and 256
// when even 1024 would need more (several waves).
static int fd12_adapt_bs(int64_t threads, int nsm)
{
    const int64_t per = (threads + nsm - 1) / nsm;
    if (per > 1024) return 256;
    const int bs = (int)((per + 31) / 32 * 32);
    return bs < 64 ? 64 : bs;
}
template <int VPT>
static void fd12_adapt_go(const float *freqs, float scale, uint16_t *c, uint16_t *s, int64_t rows, int nsm)
{
    const int64_t n = rows * (64 / VPT);
    const int bs = fd12_adapt_bs(n, nsm);
    const unsigned g = (unsigned)((n + bs - 1) / bs);
    if (scale == 1.0f) fd12_v5<VPT, true, 1, 1024><<<g, bs>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, (int)rows);
    else fd12_v5<VPT, false, 1, 1024><<<g, bs>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, (int)rows);
}

// ---- version 24: the common path run twice, first on dummy values (011) ----------------
// Is it the cold code? After the protocol's flush the kernel's instructions come
// from DRAM too, and a warp stalled on its position load fetches nothing ahead.
// Here each thread runs the common path (the product, rg_sincos_scaled, the
// pack) in a loop of two passes: the first on dummy values that need no load,
// while the loads are in flight, so its code is fetched under their latency; the
// second on the loaded values, whose flagged values are refined and stored as
// version 5/14 do. Same bits as the shipped kernel. TEST false: no test, no
// refinement (timing only, against 6-plain).
template <int VPT, bool S1, bool TEST>
static __global__ void __launch_bounds__(256) fd11_warm(const int64_t *__restrict__ pos, const float *__restrict__ inv,
                                                        float scale, uint32_t *__restrict__ out, int rows)
{
    constexpr int H = 64, TPR = H / VPT;
    const int t = blockIdx.x * 256 + threadIdx.x;
    const int r = t / TPR, k = t % TPR;
    if (r >= rows) return;
    const int64_t pi = __ldg(pos + r);
    float f[VPT];
    fd_load_floats<VPT>(inv + VPT * k, f);
    uint32_t *o = out + (size_t)r * (2 * H) + VPT * k;
    uint32_t keep = 0;
    int pass = 0;
#pragma unroll 1
    for (; pass < 2; pass++) {
        const float p = pass ? (float)pi : (float)(threadIdx.x + 1);
        uint32_t amb = 0;
        bool far = !(fabsf(scale) <= 1.0e30f);
        fd_words<VPT> w;
        float vs[VPT], vc[VPT];
#pragma unroll
        for (int i = 0; i < VPT; i++) {
            const float x = p * (pass ? f[i] : 0.0078125f * (float)(i + 1));
            if (TEST) {
                if (rg_sincos_scaled<S1>(x, scale, &vs[i], &vc[i])) amb |= 1u << i;
            } else {
                rg_sincos_core(x, &vs[i], &vc[i]);
            }
            far |= !(fabsf(x) <= RG_SINCOS_FAST_MAX);
            w.w[i] = rg_pack_bf16x2(vc[i], vs[i]);
        }
        if (!pass) {   // the warm pass: keep a bit of its result so it is not dropped
            keep = w.w[0] ^ amb;
            continue;
        }
        if (far) {
            fd11_slow<VPT>(pos + r, inv + VPT * k, scale, ~0u, w, o, TPR);
            return;
        }
        if (TEST && amb) {
#pragma unroll
            for (int i = 0; i < VPT; i++)
                if (amb >> i & 1)
                    w.w[i] = VPT == 1 ? rg_sincos_bf16_refine_side<S1>(p * f[i], scale, vc[i], vs[i])
                                      : rg_sincos_bf16_scratch<S1>(p * f[i], scale);
        }
        fd_store<VPT>::go(o, w.w);
        fd_store<VPT>::go(o + H, w.w);
    }
    if (keep == 0x7fc00001u && pass == 7) out[0] = keep;   // never: pass is 2 here
}

template <int VPT, bool TEST>
static void fd11_warm_go(const int64_t *pos, const float *inv, float scale, uint16_t *out, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    const unsigned g = (unsigned)((n + 255) / 256);
    if (scale == 1.0f) fd11_warm<VPT, true, TEST><<<g, 256, 0, st>>>(pos, inv, 1.0f, (uint32_t *)out, (int)rows);
    else fd11_warm<VPT, false, TEST><<<g, 256, 0, st>>>(pos, inv, scale, (uint32_t *)out, (int)rows);
}

// ---- versions 19, 20: the library's loop kernel (rg_rope_forward_loop) at a chosen grid ----
// Version 19's kernel is the library's since it shipped (its body, moved, with
// TEST false for 19-plain: no rounding test, timing only); 20 varies the grid.
// EVEN: rows per warp rounded up to whole steps of two; BS: threads a block.
template <bool TEST>
static void fd11_loop_go(const int64_t *pos, const float *inv, float scale, uint16_t *out, int64_t rows,
                         int target_warps, bool even, int bs, cudaStream_t st)
{
    int64_t rpw = (rows + target_warps - 1) / target_warps;
    rpw = rpw < 2 ? 2 : rpw > 32 ? 32 : even ? (rpw + 1) / 2 * 2 : rpw;
    const int64_t warps = (rows + rpw - 1) / rpw;
    const unsigned g = (unsigned)((warps * 32 + bs - 1) / bs);
    if (scale == 1.0f)
        fd_rope_forward_loop<true, TEST><<<g, bs, 0, st>>>(pos, inv, 1.0f, (uint32_t *)out, (int)rows, (int)rpw);
    else fd_rope_forward_loop<false, TEST><<<g, bs, 0, st>>>(pos, inv, scale, (uint32_t *)out, (int)rows, (int)rpw);
}

// ---- versions 10, 11: reuse of equal positions across batches (011) ----------------------
template <int VPT, bool S1>
static __global__ void __launch_bounds__(256) fd11_memo_chunk(const int64_t *__restrict__ pos,
                                                              const float *__restrict__ inv, float scale,
                                                              uint32_t *__restrict__ out, int B, int S)
{
    constexpr int H = 64, TPR = H / VPT, GW = TPR < 32 ? TPR : 32, BC = 8;
    const int t = blockIdx.x * 256 + threadIdx.x;
    const int lane = threadIdx.x & 31, k = t % TPR;
    int s = t / TPR;
    if ((s & ~(32 / GW - 1)) >= S) return;   // whole warps only: the loop shuffles
    const bool live = s < S;
    if (!live) s = S - 1;
    const int b0 = blockIdx.y * BC, nb = min(B - b0, BC);
    const int gl = lane % GW, base = lane - gl;
    const float pl = gl < nb ? (float)__ldg(pos + (size_t)(b0 + gl) * S + s) : 0.0f;
    float f[VPT];
    fd_load_floats<VPT>(inv + VPT * k, f);
    rg_wordvec<VPT> w;
    float plast = __int_as_float(0x7fc00000);   // NaN: equal to no position
#pragma unroll 1
    for (int j = 0; j < nb; j++) {
        const float p = __shfl_sync(0xffffffffu, pl, base + j);
        if (!live) continue;
        const size_t r = (size_t)(b0 + j) * S + s;
        uint32_t *o = out + r * (2 * H) + VPT * k;
        if (p != plast) {
            if (!rg_rope_forward_words<VPT, S1>(p, f, scale, w)) {
                rg_rope_forward_far<VPT>(pos + r, inv + VPT * k, scale, o, H);
                plast = __int_as_float(0x7fc00000);
                continue;
            }
            plast = p;
        }
        rg_store_words<VPT>(o, w);
        rg_store_words<VPT>(o + H, w);
    }
}

// 011 with B >= 2: the same threads per row, a block covering one or two
// sequence indices s of 8 (VPT 2, 4) or 4 (VPT 1) consecutive batches. A row
// whose position is the same float as that of the block's first batch at the
// same s has the same output, so its threads take that row's words from shared
// memory instead of computing them (whole warps then skip the arithmetic);
// rows with other positions compute their own, in parallel, as in
// rg_rope_forward_vec. Correct for any positions (packed sequences with
// different positions per batch cost one barrier more); faster when batches
// share positions, as in unpacked batches.
template <int VPT, bool S1>
static __global__ void __launch_bounds__(256) fd11_memo_block(const int64_t *__restrict__ pos,
                                                                    const float *__restrict__ inv, float scale,
                                                                    uint32_t *__restrict__ out, int B, int S)
{
    constexpr int H = 64, L = H / VPT;                      // threads per row
    constexpr int WPR = L >= 32 ? L / 32 : 1, RPW = L >= 32 ? 1 : 32 / L, BPB = 8 / WPR;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int bi = warp / WPR;                              // batch within the block
    const int k = L >= 32 ? lane + 32 * (warp % WPR) : lane % L;
    const int sl = L >= 32 ? 0 : lane / L;                  // s within the block
    const int s = blockIdx.x * RPW + sl, b0 = blockIdx.y * BPB, b = b0 + bi;
    const bool live = s < S && b < B;
    __shared__ uint32_t ref[RPW][H];
    __shared__ int ref_far;
    if (threadIdx.x == 0) ref_far = 0;
    float f[VPT];
    fd_load_floats<VPT>(inv + VPT * k, f);
    const size_t r = (size_t)b * S + s;
    const float p = live ? (float)__ldg(pos + r) : 0.0f;
    const float p0 = s < S ? (float)__ldg(pos + (size_t)b0 * S + s) : 0.0f;
    const bool same = live && bi > 0 && p == p0;
    uint32_t *o = out + r * (2 * H) + VPT * k;
    rg_wordvec<VPT> w;
    bool far = false;
    __syncthreads();   // ref_far's reset
    if (live && !same) {
        far = !rg_rope_forward_words<VPT, S1>(p, f, scale, w);
        if (bi == 0) {
            if (far) ref_far = 1;
#pragma unroll
            for (int i = 0; i < VPT; i++) ref[sl][VPT * k + i] = w.w[i];
        }
    }
    __syncthreads();
    if (!live) return;
    if (same) {
        if (ref_far) far = !rg_rope_forward_words<VPT, S1>(p, f, scale, w);
        else
#pragma unroll
            for (int i = 0; i < VPT; i++) w.w[i] = ref[sl][VPT * k + i];
    }
    if (far) {
        rg_rope_forward_far<VPT>(pos + r, inv + VPT * k, scale, o, H);
        return;
    }
    rg_store_words<VPT>(o, w);
    rg_store_words<VPT>(o + H, w);
}

template <int V, int VPT>
static void fd11_memo_go(const int64_t *pos, const float *inv, float scale, uint16_t *o16, int64_t B, int64_t S,
                         cudaStream_t st)
{
    uint32_t *out = (uint32_t *)o16;
    constexpr int L = 64 / VPT, RPW = L >= 32 ? 1 : 32 / L, BPB = L >= 32 ? 8 / (L / 32) : 8;
    const bool s1 = scale == 1.0f;
    if (V == 10) {
        const dim3 grid((unsigned)((S * L + 255) / 256), (unsigned)((B + 7) / 8));
        if (s1) fd11_memo_chunk<VPT, true><<<grid, 256, 0, st>>>(pos, inv, 1.0f, out, (int)B, (int)S);
        else fd11_memo_chunk<VPT, false><<<grid, 256, 0, st>>>(pos, inv, scale, out, (int)B, (int)S);
    } else {
        const dim3 grid((unsigned)((S + RPW - 1) / RPW), (unsigned)((B + BPB - 1) / BPB));
        if (s1) fd11_memo_block<VPT, true><<<grid, 256, 0, st>>>(pos, inv, 1.0f, out, (int)B, (int)S);
        else fd11_memo_block<VPT, false><<<grid, 256, 0, st>>>(pos, inv, scale, out, (int)B, (int)S);
    }
}
