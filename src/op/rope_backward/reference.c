/* SPDX-License-Identifier: Apache-2.0 */
/* reference.c -- float64 ground truth.
 *
 * Every input is widened to double exactly (bf16/f16/f32 all embed in double),
 * sin/cos come from libm in double precision, and the sum runs in double.
 * This is what every other path is checked against; it is written for
 * obviousness, not speed. */
#include <math.h>

#include "internal.h"
#include "ropegrad.h"

int ropegrad_rope_backward_reference(const ropegrad_rope_backward_problem *p, double *out)
{
    int rc = rg_validate_inputs(p);
    if (rc) return rc;
    if (!out) return ROPEGRAD_ERR_NULL_OUTPUT;
    rc = rg_check_output_overlap(p, out, (size_t)p->batch_size * (size_t)p->seq_len * sizeof(double));
    if (rc) return rc;
    const int64_t B = p->batch_size, S = p->seq_len, D = p->head_dim, H = D / 2;
    for (int64_t b = 0; b < B; b++) {
        const float *inv = p->inv_freq + b * p->inv_freq_batch_stride;
        for (int64_t s = 0; s < S; s++) {
            const int64_t row = b * S + s;
            const int64_t base = row * D;
            double acc = 0.0;
            for (int64_t d = 0; d < H; d++) {
                double gc = (double)ropegrad_element_to_float(p->grad_cos, p->grad_dtype, base + d) +
                            (double)ropegrad_element_to_float(p->grad_cos, p->grad_dtype, base + d + H);
                double gs = (double)ropegrad_element_to_float(p->grad_sin, p->grad_dtype, base + d) +
                            (double)ropegrad_element_to_float(p->grad_sin, p->grad_dtype, base + d + H);
                double e = (double)p->emb[base + d];
                acc += (double)inv[d] * (gs * cos(e) - gc * sin(e));
            }
            out[row] = (double)p->attention_scaling * acc;
        }
    }
    return ROPEGRAD_OK;
}
