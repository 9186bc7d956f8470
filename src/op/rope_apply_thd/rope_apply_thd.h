/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_thd.h -- what the packed-sequence (thd) table ops share (the
 * forward here, the backward in src/op/rope_apply_thd_backward/; not public):
 * the checks, each token's table row, and the paths with the rotation's sign
 * as a parameter (+1 forward, -1 backward). The shape, GQA, style, rotary_dim,
 * row conversions and rotations are 088's (rope_apply/rope_apply.h); a
 * token's position is read as the apply from positions reads it
 * (rope_apply_pos/rope_apply_pos.h). */
#ifndef ROPEGRAD_OP_ROPE_APPLY_THD_H
#define ROPEGRAD_OP_ROPE_APPLY_THD_H

#include <stdint.h>

#include "rope_apply/rope_apply.h"
#include "rope_apply_pos/rope_apply_pos.h"

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
    return rg_pos_token_position(p->cu_seqlens, p->num_seqs, p->position_ids, p->position_bits, t);
}

/* The paths with the rotation's sign (+1 the forward, -1 the backward). */
int rg_thd_reference(const ropegrad_rope_apply_thd_problem *p, float sign, double *out);
int rg_thd_cpu(const ropegrad_rope_apply_thd_problem *p, float sign, int num_threads);
/* The CUDA path of a validated problem (cuda.cu; cuda_stub.c: ROPEGRAD_ERR_NO_CUDA). */
int rg_thd_cuda(const ropegrad_rope_apply_thd_problem *p, float sign, void *cuda_stream);

#endif
