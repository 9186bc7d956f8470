/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin.c -- a deliberately plain implementation of L1/014 (the backward of
 * rotary-embedding generation) as a ropegrad plugin (include/ropegrad_impl.h):
 * the descriptor and the CPU entry, plain loops in float32. The CUDA entry is
 * kernel.cu, built when CUDA is (PLUGIN_HAVE_CUDA).
 *
 *   ropegrad check --backend cpu --impl build/examples/plugin-014/libplain014.so
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ropegrad_impl.h"

#ifdef PLUGIN_HAVE_CUDA
int plain014_cuda(const void *problem, void *cuda_stream);   /* kernel.cu */
#endif

static float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float f16_to_float(uint16_t h)
{
    const int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    float v;
    if (exp == 0) v = ldexpf((float)man, -24);
    else if (exp == 31) v = man ? NAN : INFINITY;
    else v = ldexpf((float)(man | 1024), exp - 25);
    return sign ? -v : v;
}

/* Element i of a gradient tensor, as float. */
static float grad_at(const void *g, ropegrad_dtype dt, int64_t i)
{
    if (dt == ROPEGRAD_F32) return ((const float *)g)[i];
    const uint16_t h = ((const uint16_t *)g)[i];
    return dt == ROPEGRAD_BF16 ? bf16_to_float(h) : f16_to_float(h);
}

static int plain014_cpu(const void *problem, int num_threads)
{
    (void)num_threads;   /* one thread: plain */
    const ropegrad_problem *p = problem;
    if (!p || !p->grad_cos || !p->grad_sin || !p->emb || !p->inv_freq || !p->grad_position_ids)
        return ROPEGRAD_ERR_NULL_POINTER;
    if (p->grad_dtype != ROPEGRAD_BF16 && p->grad_dtype != ROPEGRAD_F16 && p->grad_dtype != ROPEGRAD_F32)
        return ROPEGRAD_ERR_BAD_DTYPE;
    const int64_t B = p->batch_size, S = p->seq_len, D = p->head_dim, H = D / 2;
    for (int64_t b = 0; b < B; b++) {
        const float *inv = p->inv_freq + b * p->inv_freq_batch_stride;
        for (int64_t s = 0; s < S; s++) {
            const int64_t row = (b * S + s) * D;
            float acc = 0.0f;
            for (int64_t d = 0; d < H; d++) {
                const float gc = grad_at(p->grad_cos, p->grad_dtype, row + d) +
                                 grad_at(p->grad_cos, p->grad_dtype, row + d + H);
                const float gs = grad_at(p->grad_sin, p->grad_dtype, row + d) +
                                 grad_at(p->grad_sin, p->grad_dtype, row + d + H);
                const float e = p->emb[row + d];
                acc += inv[d] * (gs * cosf(e) - gc * sinf(e));
            }
            p->grad_position_ids[b * S + s] = p->attention_scaling * acc;
        }
    }
    return ROPEGRAD_OK;
}

static const ropegrad_impl descriptor = {
    .abi_version = ROPEGRAD_IMPL_ABI_VERSION,
    .name = "plain-014",
    .version = "1.0.0",
    .op = "014_rotary_embedding_with_attention_scaling_backward",
#ifdef PLUGIN_HAVE_CUDA
    .cuda = plain014_cuda,
#else
    .cuda = NULL,
#endif
    .cpu = plain014_cpu,
};

const ropegrad_impl *ropegrad_impl_descriptor(void)
{
    return &descriptor;
}
