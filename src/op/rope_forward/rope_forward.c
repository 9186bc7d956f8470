/* SPDX-License-Identifier: Apache-2.0 */
/* rope_forward.c -- L1/011, the rotary embedding forward: position ids and
 * inv_freq to cos_sin bf16 [B,S,head_dim,2]. Validation, the float64
 * reference and the CPU path (SLEEF + OpenMP through cpu.c); the CUDA kernel
 * is in kernels.cuh. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "ropegrad.h"

static int validate_inputs(const ropegrad_rope_forward_problem *p)
{
    if (!p) return ROPEGRAD_ERR_NULL_PROBLEM;
    int rc = rg_validate_forward_shape(p->batch_size, p->seq_len, p->head_dim, 4, p->attention_scaling);
    if (rc) return rc;
    if (!p->position_ids || !p->inv_freq) return ROPEGRAD_ERR_NULL_POINTER;
    if ((uintptr_t)p->position_ids % 8 || (uintptr_t)p->inv_freq % 4) return ROPEGRAD_ERR_MISALIGNED;
    return ROPEGRAD_OK;
}

int ropegrad_rope_forward_validate(const ropegrad_rope_forward_problem *p)
{
    int rc = validate_inputs(p);
    if (rc) return rc;
    if (!p->cos_sin) return ROPEGRAD_ERR_NULL_OUTPUT;
    if ((uintptr_t)p->cos_sin % 2) return ROPEGRAD_ERR_MISALIGNED;
    /* sizes were checked for overflow by rg_validate_forward_shape */
    const size_t rows = (size_t)p->batch_size * (size_t)p->seq_len, D = (size_t)p->head_dim;
    const size_t out_bytes = rows * D * 2 * sizeof(uint16_t);
    if (rg_ranges_overlap(p->cos_sin, out_bytes, p->position_ids, rows * sizeof(int64_t)) ||
        rg_ranges_overlap(p->cos_sin, out_bytes, p->inv_freq, D / 2 * sizeof(float)))
        return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

int ropegrad_rope_forward_reference(const ropegrad_rope_forward_problem *p, double *out)
{
    int rc = validate_inputs(p);
    if (rc) return rc;
    if (!out) return ROPEGRAD_ERR_NULL_OUTPUT;
    const int64_t rows = p->batch_size * p->seq_len, D = p->head_dim, H = D / 2;
    const double scale = (double)p->attention_scaling;
    for (int64_t r = 0; r < rows; r++) {
        const float pos = (float)p->position_ids[r];
        double *o = out + r * D * 2;
        for (int64_t j = 0; j < D; j++) {
            const double x = (double)(pos * p->inv_freq[j % H]);   /* the float32 product */
            o[2 * j] = scale * cos(x);
            o[2 * j + 1] = scale * sin(x);
        }
    }
    return ROPEGRAD_OK;
}

static void forward_rows(const void *ctx, int64_t r0, int64_t r1)
{
    const ropegrad_rope_forward_problem *p = ctx;
    const int64_t D = p->head_dim, H = D / 2;
    uint32_t w[ROPEGRAD_MAX_HEAD_DIM / 2];   /* (cos | sin << 16): a row's pairs j < H, in memory order */
    for (int64_t r = r0; r < r1; r++) {
        const float pos = (float)p->position_ids[r];
        rg_sincos_bf16_row(p->inv_freq, pos, H, p->attention_scaling, NULL, NULL, w);
        uint16_t *o = p->cos_sin + r * D * 2;   /* pairs j and j + H are equal */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        for (int64_t j = 0; j < H; j++) w[j] = w[j] << 16 | w[j] >> 16;   /* cos first in memory */
#endif
        memcpy(o, w, (size_t)H * 4);
        memcpy(o + 2 * H, w, (size_t)H * 4);
    }
}

int ropegrad_rope_forward_cpu(const ropegrad_rope_forward_problem *p, int num_threads)
{
    int rc = ropegrad_rope_forward_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    rg_cpu_parallel_rows(p->batch_size * p->seq_len, p->head_dim / 2, num_threads, forward_rows, p);
    return ROPEGRAD_OK;
}
