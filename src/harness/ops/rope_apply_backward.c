/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_backward.c -- the op table's row for the backward of applying
 * the rotary embedding, L1/068 (grad_q_embed, grad_k_embed, q, k, cos, sin
 * f32, cos and sin [B,S,D] -> grad_q, grad_k, grad_cos, grad_sin, back to
 * back). Its shape and inputs are 088's (apply_rows.h, rope_apply.c). */
#include <string.h>

#include "op.h"
#include "apply_rows.h"

/* ---- L1/068 ---- */

static ropegrad_rope_apply_backward_problem backward_problem(const rg_tensors *t, void *out)
{
    ropegrad_rope_apply_backward_problem p;
    memset(&p, 0, sizeof p);
    p.shape = rg_apply_shape(t, 1);
    p.grad_q_out = t->in[0];
    p.grad_k_out = t->in[1];
    p.q = t->in[2];
    p.k = t->in[3];
    p.cos = t->in[4];
    p.sin = t->in[5];
    if (out) {
        float *o = out;
        p.grad_q = o;
        p.grad_k = o += t->in_bytes[0] / sizeof(float);
        p.grad_cos = o += t->in_bytes[1] / sizeof(float);
        p.grad_sin = o + t->in_bytes[4] / sizeof(float);
    }
    return p;
}

static int backward_make(const rg_workload *w, ropegrad_dtype dt, int kind, uint64_t seed, rg_tensors *t, char *err,
                         size_t errlen)
{
    (void)dt;
    if (rg_apply_make_inputs(w, kind, seed, 4, 1, t, err, errlen)) return 1;
    t->out_bytes = t->in_bytes[0] + t->in_bytes[1] + t->in_bytes[4] + t->in_bytes[5];
    t->n_out = (int64_t)(t->out_bytes / sizeof(float));
    return 0;
}

static int backward_reference(const rg_tensors *t, double *ref)
{
    ropegrad_rope_apply_backward_problem p = backward_problem(t, NULL);
    return ropegrad_rope_apply_backward_reference(&p, ref);
}

static int backward_cpu(const rg_tensors *t, void *out, int threads)
{
    ropegrad_rope_apply_backward_problem p = backward_problem(t, out);
    return ropegrad_rope_apply_backward_cpu(&p, threads);
}

static int backward_cuda(const rg_tensors *t, void *out, int kernel, void *stream)
{
    if (kernel != 0) return ROPEGRAD_ERR_BAD_KERNEL;
    ropegrad_rope_apply_backward_problem p = backward_problem(t, out);
    return ropegrad_rope_apply_backward_cuda(&p, stream);
}

/* grad_q_embed, grad_k_embed, q, k read, grad_q, grad_k written; cos, sin
 * [B,S,D] read, grad_cos, grad_sin written. */
static double backward_bytes(const rg_workload *w, ropegrad_dtype dt)
{
    (void)dt;
    const double B = (double)w->batch_size, S = (double)w->seq_len, D = (double)w->head_dim;
    const double heads = (double)w->axes[0] + (double)w->axes[1];
    return (3.0 * heads + 4.0) * B * S * D * 4;
}

static const rg_op_tensor backward_inputs[] = {{"grad_q_embed", "float32"}, {"grad_k_embed", "float32"},
                                               {"q", "float32"},            {"k", "float32"},
                                               {"cos", "float32"},          {"sin", "float32"},
                                               {NULL, NULL}};
static const rg_op_tensor backward_outputs[] = {
    {"grad_q", "float32"}, {"grad_k", "float32"}, {"grad_cos", "float32"}, {"grad_sin", "float32"}, {NULL, NULL}};

const rg_op rg_op_rope_apply_backward = {
    .id = "068",
    .name = "rope_apply_backward",
    .definition = "068_fused_rope_application_backward",
    .reference = "float64 (ropegrad_rope_apply_backward_reference)",
    .inputs = backward_inputs,
    .outputs = backward_outputs,
    .axes = rg_apply_axes,
    .custom_scale = 1,
    .bytes = backward_bytes,
    .make = backward_make,
    .reference_fn = backward_reference,
    .cpu = backward_cpu,
    .cuda = backward_cuda,
    .widen = rg_widen_f32,
    .kernel_name = rg_kernel_default_only,
    .solution = NULL,
};
