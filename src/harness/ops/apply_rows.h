/* SPDX-License-Identifier: Apache-2.0 */
/* apply_rows.h -- what the rows of 088 and 068 share (rope_apply.c): the
 * library's shape of their tensors and their inputs. */
#ifndef ROPEGRAD_HARNESS_OPS_APPLY_ROWS_H
#define ROPEGRAD_HARNESS_OPS_APPLY_ROWS_H

#include "op.h"

/* The named axes of both: num_heads, num_kv_heads. */
extern const char *const rg_apply_axes[];

/* The library's shape of t (per_batch: cos and sin [B,S,D], else one [S,D]). */
ropegrad_rope_apply_shape rg_apply_shape(const rg_tensors *t, int per_batch);

/* The inputs of either op: n_heads_tensors tensors shaped like q then k in
 * turn (088: q, k; 068: grad_q_embed, grad_k_embed, q, k), then cos and sin
 * of B batches (per_batch) or one. 0, or 1 with a message. */
int rg_apply_make_inputs(const rg_workload *w, int kind, uint64_t seed, int n_heads_tensors, int per_batch,
                         rg_tensors *t, char *err, size_t errlen);

#endif
