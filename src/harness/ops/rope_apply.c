/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply.c -- the op table's row for applying the rotary embedding,
 * L1/088 (q, k rotated: query f32 [B,Hq,S,D], key f32 [B,Hk,S,D], cos, sin
 * f32 [S,D] -> query_rotated, key_rotated, back to back in the output), and
 * the shape and inputs it shares with its backward's row (apply_rows.h,
 * rope_apply_backward.c). Named axes: num_heads (Hq), num_kv_heads (Hk).
 *
 * Inputs:
 *   RG_INPUTS_NORMAL (the dataset's "random"): input t (the definition's
 *     order) element i = float(normal(w, t, i)).
 *   RG_INPUTS_POSITIONS (real training): q, k and the gradients as above;
 *     cos/sin a real RoPE table: cos[b,s,d] = float(cos(pos * inv[d mod H]))
 *     (sin alike), inv[d] = 1e6^(-2d/D) in double, pos = rg_position_at(key(w,
 *     4), b, s, S, 262143) (inputs.c; b = 0 for 088's shared table). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "apply_rows.h"

#define RG_APPLY_POS_MAX 262143
#define RG_APPLY_MAX_HEADS 65536

ropegrad_rope_apply_shape rg_apply_shape(const rg_tensors *t, int per_batch)
{
    ropegrad_rope_apply_shape s;
    memset(&s, 0, sizeof s);
    s.batch_size = t->batch_size;
    s.seq_len = t->seq_len;
    s.head_dim = t->head_dim;
    s.num_heads = t->axes[0];
    s.num_kv_heads = t->axes[1];
    s.layout = ROPEGRAD_LAYOUT_BHSD;
    s.dtype = ROPEGRAD_F32;
    s.cos_sin_dtype = ROPEGRAD_F32;
    s.cos_sin_batch_stride = per_batch ? t->seq_len * t->head_dim : 0;
    return s;
}

/* Allocates input slot t->n_in of n floats; 1 when out of memory. */
static int add_input(rg_tensors *t, int64_t n)
{
    const int i = t->n_in++;
    t->in_bytes[i] = (size_t)n * sizeof(float);
    t->in[i] = rg_alloc64(t->in_bytes[i]);
    return t->in[i] == NULL;
}

static void fill_normal(float *x, int64_t n, uint64_t key)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) x[i] = (float)rg_normal_at(key, i);
}

/* cos/sin [batches,S,D] of real positions (the header's RG_INPUTS_POSITIONS). */
static void fill_table(float *cos_t, float *sin_t, int64_t batches, int64_t S, int64_t D, uint64_t key)
{
    double inv[ROPEGRAD_MAX_HEAD_DIM / 2];
    for (int64_t d = 0; d < D / 2; d++) inv[d] = pow(1e6, -2.0 * (double)d / (double)D);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < batches * S; r++) {
        const double pos = (double)rg_position_at(key, r / S, r % S, S, RG_APPLY_POS_MAX);
        for (int64_t d = 0; d < D; d++) {
            cos_t[r * D + d] = (float)cos(pos * inv[d % (D / 2)]);
            sin_t[r * D + d] = (float)sin(pos * inv[d % (D / 2)]);
        }
    }
}

int rg_apply_make_inputs(const rg_workload *w, int kind, uint64_t seed, int n_heads_tensors, int per_batch,
                         rg_tensors *t, char *err, size_t errlen)
{
    const int64_t hq = w->axes[0], hk = w->axes[1];
    if (hq > RG_APPLY_MAX_HEADS || hk > RG_APPLY_MAX_HEADS) {
        snprintf(err, errlen, "workload %d: num_heads %lld / num_kv_heads %lld above %d", w->index, (long long)hq,
                 (long long)hk, RG_APPLY_MAX_HEADS);
        return 1;
    }
    if (rg_tensors_shape(w, (hq + hk) * w->head_dim * 4 * 2, t, err, errlen)) return 1;
    const int64_t B = t->batch_size, S = t->seq_len, D = t->head_dim, batches = per_batch ? B : 1;
    int oom = 0;
    for (int i = 0; i < n_heads_tensors; i++) oom |= add_input(t, B * (i % 2 ? hk : hq) * S * D);
    oom |= add_input(t, batches * S * D);
    oom |= add_input(t, batches * S * D);
    if (oom) {
        rg_tensors_free(t);
        snprintf(err, errlen, "workload %d: out of memory allocating the inputs", w->index);
        return 1;
    }
    const int n_random = kind == RG_INPUTS_POSITIONS ? n_heads_tensors : t->n_in;
    for (int i = 0; i < n_random; i++)
        fill_normal(t->in[i], (int64_t)(t->in_bytes[i] / sizeof(float)), rg_stream_key(seed, w->index, i));
    if (kind == RG_INPUTS_POSITIONS)
        fill_table(t->in[n_heads_tensors], t->in[n_heads_tensors + 1], batches, S, D, rg_stream_key(seed, w->index, 4));
    t->attention_scaling = 1.0f;
    return 0;
}

/* ---- L1/088 ---- */

static ropegrad_rope_apply_problem forward_problem(const rg_tensors *t, void *out)
{
    ropegrad_rope_apply_problem p;
    memset(&p, 0, sizeof p);
    p.shape = rg_apply_shape(t, 0);
    p.q = t->in[0];
    p.k = t->in[1];
    p.cos = t->in[2];
    p.sin = t->in[3];
    p.q_out = out;
    p.k_out = out ? (float *)out + t->in_bytes[0] / sizeof(float) : NULL;
    return p;
}

static int forward_make(const rg_workload *w, ropegrad_dtype dt, int kind, uint64_t seed, rg_tensors *t, char *err,
                        size_t errlen)
{
    (void)dt;
    if (rg_apply_make_inputs(w, kind, seed, 2, 0, t, err, errlen)) return 1;
    t->n_out = (int64_t)((t->in_bytes[0] + t->in_bytes[1]) / sizeof(float));
    t->out_bytes = t->in_bytes[0] + t->in_bytes[1];
    return 0;
}

static int forward_reference(const rg_tensors *t, double *ref)
{
    ropegrad_rope_apply_problem p = forward_problem(t, NULL);
    return ropegrad_rope_apply_reference(&p, ref);
}

static int forward_cpu(const rg_tensors *t, void *out, int threads)
{
    ropegrad_rope_apply_problem p = forward_problem(t, out);
    return ropegrad_rope_apply_cpu(&p, threads);
}

static int forward_cuda(const rg_tensors *t, void *out, int kernel, void *stream)
{
    if (kernel != 0) return ROPEGRAD_ERR_BAD_KERNEL;
    ropegrad_rope_apply_problem p = forward_problem(t, out);
    return ropegrad_rope_apply_cuda(&p, stream);
}

/* q and k read and written, one cos and sin [S,D] read. */
static double forward_bytes(const rg_workload *w, ropegrad_dtype dt)
{
    (void)dt;
    const double B = (double)w->batch_size, S = (double)w->seq_len, D = (double)w->head_dim;
    const double heads = (double)w->axes[0] + (double)w->axes[1];
    return (2.0 * B * heads * S * D + 2.0 * S * D) * 4;
}

const char *const rg_apply_axes[] = {"num_heads", "num_kv_heads", NULL};

static const rg_op_tensor forward_inputs[] = {
    {"query", "float32"}, {"key", "float32"}, {"cos", "float32"}, {"sin", "float32"}, {NULL, NULL}};
static const rg_op_tensor forward_outputs[] = {{"query_rotated", "float32"}, {"key_rotated", "float32"}, {NULL, NULL}};

const rg_op rg_op_rope_apply = {
    .id = "088",
    .name = "rope_apply",
    .definition = "088_rotary_position_embedding_application",
    .reference = "float64 (ropegrad_rope_apply_reference)",
    .inputs = forward_inputs,
    .outputs = forward_outputs,
    .axes = rg_apply_axes,
    .custom_scale = 1,
    .bytes = forward_bytes,
    .make = forward_make,
    .reference_fn = forward_reference,
    .cpu = forward_cpu,
    .cuda = forward_cuda,
    .widen = rg_widen_f32,
    .kernel_name = rg_kernel_default_only,
    .solution = NULL,
};
