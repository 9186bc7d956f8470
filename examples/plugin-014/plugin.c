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

#include "ropegrad_dtype.h"   /* header only: bf16 and fp16 elements as float */
#include "ropegrad_impl.h"

#ifdef PLUGIN_HAVE_CUDA
int plain014_cuda(const void *problem, void *cuda_stream);   /* kernel.cu */
#endif

static int plain014_cpu(const void *problem, int num_threads)
{
    (void)num_threads;   /* one thread: plain */
    const ropegrad_rope_backward_problem *p = problem;
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
                const float gc = ropegrad_element_to_float(p->grad_cos, p->grad_dtype, row + d) +
                                 ropegrad_element_to_float(p->grad_cos, p->grad_dtype, row + d + H);
                const float gs = ropegrad_element_to_float(p->grad_sin, p->grad_dtype, row + d) +
                                 ropegrad_element_to_float(p->grad_sin, p->grad_dtype, row + d + H);
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
