/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_thd.h -- what the packed-sequence (thd) table ops share (the
 * forward here, the backward in src/op/rope_apply_thd_backward/; not public):
 * the checks, each token's table row, and the paths with the rotation's sign
 * as a parameter (+1 forward, -1 backward). The shape, GQA, style, rotary_dim,
 * row conversions and rotations are 088's (rope_apply/rope_apply.h). */
#ifndef ROPEGRAD_OP_ROPE_APPLY_THD_H
#define ROPEGRAD_OP_ROPE_APPLY_THD_H

#include <stdint.h>

#include "rope_apply/rope_apply.h"

/* The checks of both ops: the description, and with outputs != 0 the output
 * pointers, their alignment and overlaps (the reference writes elsewhere). */
int rg_thd_validate(const ropegrad_rope_apply_thd_problem *p, int outputs);

/* The CPU and reference paths' check of the contents: cu_seqlens (when set:
 * cu_seqlens[0] = 0, non-decreasing, cu_seqlens[num_seqs] = T) and every
 * token's position within [0, table_len); else ROPEGRAD_ERR_BAD_SIZE. */
int rg_thd_check_positions(const ropegrad_rope_apply_thd_problem *p);

/* The position of token t of a validated problem (the table row it reads). */
static inline int64_t rg_thd_position(const ropegrad_rope_apply_thd_problem *p, int64_t t)
{
    if (p->cu_seqlens) {   /* the last sequence j with cu_seqlens[j] <= t */
        int64_t lo = 0, hi = p->num_seqs;   /* cu_seqlens[lo] <= t < cu_seqlens[hi] */
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (p->cu_seqlens[mid] <= t) lo = mid;
            else hi = mid;
        }
        return t - p->cu_seqlens[lo];
    }
    if (p->position_bits == 32) return ((const int32_t *)p->position_ids)[t];
    return ((const int64_t *)p->position_ids)[t];
}

/* The paths with the rotation's sign (+1 the forward, -1 the backward). */
int rg_thd_reference(const ropegrad_rope_apply_thd_problem *p, float sign, double *out);
int rg_thd_cpu(const ropegrad_rope_apply_thd_problem *p, float sign, int num_threads);
/* The CUDA path of a validated problem (cuda.cu; cuda_stub.c: ROPEGRAD_ERR_NO_CUDA). */
int rg_thd_cuda(const ropegrad_rope_apply_thd_problem *p, float sign, void *cuda_stream);

#endif
