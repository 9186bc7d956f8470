/* SPDX-License-Identifier: Apache-2.0 */
/* cos_sin.c -- L1/012, cos and sin from frequencies: freqs f32 [B,S,H] to cos
 * and sin bf16 [B,S,2H]. Validation, the float64 reference and the CPU path
 * (SLEEF + OpenMP through cpu.c); the CUDA kernel is in kernels.cuh. */
#include <math.h>
#include <stdint.h>

#include "internal.h"
#include "ropegrad.h"

static int validate_inputs(const ropegrad_cos_sin_problem *p)
{
    if (!p) return ROPEGRAD_ERR_NULL_PROBLEM;
    int rc = rg_validate_forward_shape(p->batch_size, p->seq_len, p->head_dim, 4, p->attention_scaling);
    if (rc) return rc;
    if (!p->freqs) return ROPEGRAD_ERR_NULL_POINTER;
    if ((uintptr_t)p->freqs % 4) return ROPEGRAD_ERR_MISALIGNED;
    return ROPEGRAD_OK;
}

int ropegrad_cos_sin_validate(const ropegrad_cos_sin_problem *p)
{
    int rc = validate_inputs(p);
    if (rc) return rc;
    if (!p->cos || !p->sin) return ROPEGRAD_ERR_NULL_OUTPUT;
    if ((uintptr_t)p->cos % 2 || (uintptr_t)p->sin % 2) return ROPEGRAD_ERR_MISALIGNED;
    /* sizes were checked for overflow by rg_validate_forward_shape */
    const size_t rows = (size_t)p->batch_size * (size_t)p->seq_len, D = (size_t)p->head_dim;
    const size_t out_bytes = rows * D * sizeof(uint16_t), in_bytes = rows * (D / 2) * sizeof(float);
    if (rg_ranges_overlap(p->cos, out_bytes, p->freqs, in_bytes) || rg_ranges_overlap(p->sin, out_bytes, p->freqs, in_bytes) ||
        rg_ranges_overlap(p->cos, out_bytes, p->sin, out_bytes))
        return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

const char *ropegrad_cos_sin_kernel_name(int kernel)
{
    return kernel == 0 ? "default" : kernel == ROPEGRAD_COS_SIN_KERNEL_FAST ? "fast" : NULL;
}

int ropegrad_cos_sin_reference(const ropegrad_cos_sin_problem *p, double *out)
{
    int rc = validate_inputs(p);
    if (rc) return rc;
    if (!out) return ROPEGRAD_ERR_NULL_OUTPUT;
    const int64_t rows = p->batch_size * p->seq_len, D = p->head_dim, H = D / 2;
    const double scale = (double)p->attention_scaling;
    double *oc = out, *os = out + rows * D;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < D; j++) {
            const double x = (double)p->freqs[r * H + j % H];
            oc[r * D + j] = scale * cos(x);
            os[r * D + j] = scale * sin(x);
        }
    return ROPEGRAD_OK;
}

static void cos_sin_rows(const void *ctx, int64_t r0, int64_t r1)
{
    const ropegrad_cos_sin_problem *p = ctx;
    const int64_t D = p->head_dim, H = D / 2;
    uint16_t sb[ROPEGRAD_MAX_HEAD_DIM / 2], cb[ROPEGRAD_MAX_HEAD_DIM / 2];
    for (int64_t r = r0; r < r1; r++) {
        rg_sincos_bf16_row(p->freqs + r * H, 1.0f, H, p->attention_scaling, cb, sb, NULL);
        uint16_t *c = p->cos + r * D, *s = p->sin + r * D;
        memcpy(c, cb, (size_t)H * 2);
        memcpy(c + H, cb, (size_t)H * 2);
        memcpy(s, sb, (size_t)H * 2);
        memcpy(s + H, sb, (size_t)H * 2);
    }
}

int ropegrad_cos_sin_cpu(const ropegrad_cos_sin_problem *p, int num_threads)
{
    int rc = ropegrad_cos_sin_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    rg_cpu_parallel_rows(p->batch_size * p->seq_len, p->head_dim / 2, num_threads, cos_sin_rows, p);
    return ROPEGRAD_OK;
}
