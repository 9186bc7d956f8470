/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ground_truth.c -- what a workload's output is checked against (harness.h,
 * rg_ground_truth):
 *
 *   float64             the op's float64 reference (libm sin/cos): ropegrad's
 *                       accuracy yardstick, reported beside the other one.
 *   float32-reference   the definition's PyTorch reference as the official
 *                       evaluator runs it on the GPU: float32 arithmetic in
 *                       the reference's own order, each elementwise torch op
 *                       rounded to float32, the output cast to the
 *                       definition's output dtype (012: bf16). The matmul of
 *                       014 (inv_freq^T @ grad_emb) is summed in order over
 *                       head_dim/2; cuBLAS may sum in another order, so this
 *                       matches the GPU's result to float32 rounding, not bit
 *                       for bit. Written for 014 and 012; other ops refuse it.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "ropegrad_dtype.h"   /* grad.float(): bf16, f16 or f32 elements */

/* torch's float -> bfloat16 cast: round to nearest, ties to even (NaN kept NaN). */
static float round_to_bf16(float x)
{
    if (isnan(x)) return x;
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return ropegrad_bf16_to_float((uint16_t)(u >> 16));
}

/* 014's reference in float32: grad_emb = gc_freqs * (-sin(emb)) * s + gs_freqs * cos(emb) * s,
 * then inv_freq^T @ grad_emb per row. */
static int reference_f32_014(const rg_tensors *t, double *ref)
{
    const int64_t B = t->batch_size, S = t->seq_len, D = t->head_dim, H = D / 2;
    const float s = t->attention_scaling;
    const float *emb = t->in[2], *inv = t->in[3];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < B * S; r++) {
        const float *iv = inv + (r / S) * H;
        const int64_t row = r * D;
        float acc = 0.0f;
        for (int64_t d = 0; d < H; d++) {
            const float gc = ropegrad_element_to_float(t->in[0], t->dtype, row + d) +
                             ropegrad_element_to_float(t->in[0], t->dtype, row + d + H);
            const float gs = ropegrad_element_to_float(t->in[1], t->dtype, row + d) +
                             ropegrad_element_to_float(t->in[1], t->dtype, row + d + H);
            const float e = emb[row + d];
            const float a = (gc * -sinf(e)) * s, b = (gs * cosf(e)) * s;
            acc += iv[d] * (a + b);
        }
        ref[r] = acc;
    }
    return ROPEGRAD_OK;
}

/* 012's reference in float32: cos(cat(f, f)) * s and sin(...) * s, cast to bf16. */
static int reference_f32_012(const rg_tensors *t, double *ref)
{
    const int64_t rows = t->batch_size * t->seq_len, D = t->head_dim, H = D / 2;
    const float s = t->attention_scaling;
    const float *f = t->in[0];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t d = 0; d < D; d++) {
            const float x = f[r * H + d % H];
            ref[r * D + d] = round_to_bf16(cosf(x) * s);
            ref[rows * D + r * D + d] = round_to_bf16(sinf(x) * s);
        }
    return ROPEGRAD_OK;
}

int rg_ground_truth_available(const rg_op *op, rg_ground_truth g)
{
    if (!op) return 0;
    if (g == RG_TRUTH_FLOAT64) return op->reference_fn != NULL;
    return !strcmp(op->id, "014") || !strcmp(op->id, "012");
}

int rg_ground_truth_reference(const rg_op *op, const rg_tensors *t, rg_ground_truth g, double *ref)
{
    if (!op || !t || !ref) return ROPEGRAD_ERR_NULL_POINTER;
    if (g == RG_TRUTH_FLOAT64) return op->reference_fn(t, ref);
    if (!strcmp(op->id, "014")) return reference_f32_014(t, ref);
    if (!strcmp(op->id, "012")) return reference_f32_012(t, ref);
    return ROPEGRAD_ERR_UNSUPPORTED;
}
