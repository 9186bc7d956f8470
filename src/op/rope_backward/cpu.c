/* SPDX-License-Identifier: Apache-2.0 */
/* cpu.c -- L1/014's CPU path: the portable row kernel, and the row kernel of
 * the ISA src/op/cpu.c chose (cpu_avx2.c, cpu_avx512.c) over OpenMP rows. */
#include <sleef.h>

#include "backward_cpu.h"

/* One scalar SLEEF sincos per element. The row sum runs in double: on the
 * scalar path that costs nothing over float and keeps the summation error out
 * of the result entirely (the SIMD kernels get the same effect, mostly, from
 * their 8/16 independent partial sums). */
static void kernel_portable(const ropegrad_rope_backward_problem *p, int64_t r0, int64_t r1)
{
    const int64_t S = p->seq_len, D = p->head_dim, H = D / 2;
    const ropegrad_dtype dt = p->grad_dtype;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t base = r * D;
        const float *inv = p->inv_freq + (r / S) * p->inv_freq_batch_stride;
        double acc = 0.0;
        for (int64_t d = 0; d < H; d++) {
            Sleef_float2 sc; /* x = sin, y = cos */
            rg_sincos1(p->emb[base + d], &sc.x, &sc.y);
            float gc = ropegrad_element_to_float(p->grad_cos, dt, base + d) + ropegrad_element_to_float(p->grad_cos, dt, base + d + H);
            float gs = ropegrad_element_to_float(p->grad_sin, dt, base + d) + ropegrad_element_to_float(p->grad_sin, dt, base + d + H);
            acc += (double)(inv[d] * (gs * sc.y - gc * sc.x));
        }
        p->grad_position_ids[r] = (float)((double)p->attention_scaling * acc);
    }
}

static rg_backward_rows_fn chosen_kernel(void)
{
    rg_backward_rows_fn k = NULL;
    switch (rg_cpu_isa_chosen()) {
    case RG_CPU_AVX512: k = rg_backward_avx512_kernel(); break;
    case RG_CPU_AVX2: k = rg_backward_avx2_kernel(); break;
    default: break;
    }
    return k ? k : kernel_portable;
}

static void backward_chunk(const void *ctx, int64_t r0, int64_t r1)
{
    chosen_kernel()((const ropegrad_rope_backward_problem *)ctx, r0, r1);
}

int ropegrad_rope_backward_cpu(const ropegrad_rope_backward_problem *p, int num_threads)
{
    int rc = ropegrad_rope_backward_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    rg_cpu_parallel_rows(p->batch_size * p->seq_len, p->head_dim / 2, num_threads, backward_chunk, p);
    return ROPEGRAD_OK;
}
