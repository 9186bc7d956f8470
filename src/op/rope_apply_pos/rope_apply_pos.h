/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_pos.h -- what the apply-from-positions ops share (the forward
 * here, the backward in src/op/rope_apply_pos_backward/; not public): the
 * checks, where a token's position and head rows are, the rounding of a
 * cos/sin value to its dtype, and the paths with the rotation's sign as a
 * parameter (+1 forward, -1 backward). The layouts, GQA and the row
 * conversions are 088's (rope_apply/rope_apply.h). */
#ifndef ROPEGRAD_OP_ROPE_APPLY_POS_H
#define ROPEGRAD_OP_ROPE_APPLY_POS_H

#include <math.h>
#include <stdint.h>

#include "rope_apply/rope_apply.h"

/* rotary_dim with 0 read as head_dim (a validated problem). */
static inline int64_t rg_pos_rotary_dim(const ropegrad_rope_apply_pos_problem *p)
{
    return p->rotary_dim ? p->rotary_dim : p->shape.head_dim;
}

/* The checks of both ops: the description, and with outputs != 0 the output
 * pointers, their alignment and overlaps (the reference writes elsewhere). */
int rg_pos_validate(const ropegrad_rope_apply_pos_problem *p, int outputs);

/* The CPU and reference paths' check of cu_seqlens' contents (when set):
 * cu_seqlens[0] = 0, non-decreasing, cu_seqlens[num_seqs] = seq_len. */
int rg_pos_check_seqlens(const ropegrad_rope_apply_pos_problem *p);

/* The position of token t: with cu_seqlens (num_seqs sequences) t's offset in
 * its sequence, else position_ids[t] (int32 or int64 by position_bits). The
 * packed table ops read their positions the same way. */
static inline int64_t rg_pos_token_position(const int32_t *cu_seqlens, int64_t num_seqs, const void *position_ids,
                                            int position_bits, int64_t t)
{
    if (cu_seqlens) {   /* the last sequence j with cu_seqlens[j] <= t */
        int64_t lo = 0, hi = num_seqs;   /* cu_seqlens[lo] <= t < cu_seqlens[hi] */
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (cu_seqlens[mid] <= t) lo = mid;
            else hi = mid;
        }
        return t - cu_seqlens[lo];
    }
    if (position_bits == 32) return ((const int32_t *)position_ids)[t];
    return ((const int64_t *)position_ids)[t];
}

/* The position of token t (t = b*S + s) of a validated problem. */
static inline int64_t rg_pos_position(const ropegrad_rope_apply_pos_problem *p, int64_t t)
{
    return rg_pos_token_position(p->cu_seqlens, p->num_seqs, p->position_ids, p->position_bits, t);
}

/* double -> IEEE binary16 value with one rounding (nearest even), returned
 * as the float holding it exactly (finite d; beyond 65504 rounds to Inf by
 * the binary16 rule). */
static inline float rg_pos_f16_rn_double(double d)
{
    if (d == 0.0 || !isfinite(d)) return (float)d;
    int e;
    (void)frexp(d, &e);   /* |d| in [2^(e-1), 2^e) */
    int E = e - 1;        /* binary16 exponent, the subnormals' below -14 */
    if (E < -14) E = -14;
    const double v = ldexp(nearbyint(ldexp(d, 10 - E)), E - 10);
    if (fabs(v) > 65504.0) return d < 0 ? -INFINITY : INFINITY;
    return (float)v;
}

/* The float values c, n of scale*cos(x), scale*sin(x) rounded once to cdt:
 * bf16 through the CPU sin/cos core's correct rounding (cpu.c), f16 and f32
 * from libm's double sin/cos (rounded once). n values from x[i]*pos. Called
 * from a row function of rg_cpu_parallel_rows (the ISA is chosen). */
void rg_pos_cos_sin_row(const float *inv_freq, float pos, int64_t n, float scale, ropegrad_dtype cdt, float *c,
                        float *s);

/* The paths with the rotation's sign (+1 the forward, -1 the backward). */
int rg_pos_reference(const ropegrad_rope_apply_pos_problem *p, float sign, double *out);
void rg_pos_cpu(const ropegrad_rope_apply_pos_problem *p, float sign, int num_threads);
/* The CUDA path of a validated problem (cuda.cu; cuda_stub.c: ROPEGRAD_ERR_NO_CUDA). */
int rg_pos_cuda(const ropegrad_rope_apply_pos_problem *p, float sign, void *cuda_stream);

#endif
