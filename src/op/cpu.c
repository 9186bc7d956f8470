/* cpu.c -- placeholder scalar CPU path (to be replaced by the SLEEF/OpenMP one). */
#include <math.h>

#include "internal.h"
#include "ropegrad.h"

const char *ropegrad_cpu_isa(void) { return "portable"; }

int ropegrad_backward_cpu(const ropegrad_problem *p, int num_threads)
{
    int rc = ropegrad_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    const int64_t B = p->batch_size, S = p->seq_len, D = p->head_dim, H = D / 2;
    for (int64_t r = 0; r < B * S; r++) {
        const float *inv = p->inv_freq + (r / S) * p->inv_freq_batch_stride;
        float acc = 0.f;
        for (int64_t d = 0; d < H; d++) {
            float gc = rg_load_grad(p->grad_cos, p->grad_dtype, r * D + d) + rg_load_grad(p->grad_cos, p->grad_dtype, r * D + d + H);
            float gs = rg_load_grad(p->grad_sin, p->grad_dtype, r * D + d) + rg_load_grad(p->grad_sin, p->grad_dtype, r * D + d + H);
            float e = p->emb[r * D + d];
            acc += inv[d] * (gs * cosf(e) - gc * sinf(e));
        }
        p->grad_position_ids[r] = p->attention_scaling * acc;
    }
    return ROPEGRAD_OK;
}
