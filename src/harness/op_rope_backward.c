/* SPDX-License-Identifier: Apache-2.0 */
/* op_rope_backward.c -- the op table's row for L1/014, the backward of
 * rotary-embedding generation (inputs: inputs.c's rg_inputs_make). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "run_internal.h"

static ropegrad_problem problem(const rg_tensors *t, void *out)
{
    ropegrad_problem p;
    memset(&p, 0, sizeof p);
    p.batch_size = t->batch_size;
    p.seq_len = t->seq_len;
    p.head_dim = t->head_dim;
    p.grad_dtype = t->dtype;
    p.grad_cos = t->in[0];
    p.grad_sin = t->in[1];
    p.emb = t->in[2];
    p.inv_freq = t->in[3];
    p.inv_freq_batch_stride = t->head_dim / 2;
    p.attention_scaling = t->attention_scaling;
    p.grad_position_ids = out;
    return p;
}

static int make(const rg_workload *w, ropegrad_dtype dt, int kind, uint64_t seed, rg_tensors *t, char *err,
                size_t errlen)
{
    rg_inputs in;
    memset(t, 0, sizeof *t);
    if (rg_inputs_make(w, dt, (rg_inputs_kind)kind, seed, &in, err, errlen)) return 1;
    const size_t n = (size_t)(in.batch_size * in.seq_len * in.head_dim), esz = ropegrad_dtype_size(dt);
    t->batch_size = in.batch_size;
    t->seq_len = in.seq_len;
    t->head_dim = in.head_dim;
    t->dtype = dt;
    t->attention_scaling = in.attention_scaling;
    t->n_in = 4;
    t->in[0] = in.grad_cos;
    t->in[1] = in.grad_sin;
    t->in[2] = in.emb;
    t->in[3] = in.inv_freq;
    t->in_bytes[0] = t->in_bytes[1] = n * esz;
    t->in_bytes[2] = n * sizeof(float);
    t->in_bytes[3] = (size_t)(in.batch_size * (in.head_dim / 2)) * sizeof(float);
    t->n_out = in.batch_size * in.seq_len;
    t->out_bytes = (size_t)t->n_out * sizeof(float);
    return 0;
}

/* ropegrad_backward_reference is single-threaded; it is a pure function of
 * rows, so blocks of up to 256 rows of one batch are independent
 * sub-problems (batch_size 1) and run in parallel. */
static int reference(const rg_tensors *t, double *ref)
{
    const ropegrad_problem p = problem(t, NULL);
    const int64_t S = p.seq_len, D = p.head_dim;
    const size_t esz = ropegrad_dtype_size(p.grad_dtype);
    const int64_t block = 256, per_batch = (S + block - 1) / block, nblocks = p.batch_size * per_batch;
    int worst = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(max : worst)
    for (int64_t k = 0; k < nblocks; k++) {
        const int64_t b = k / per_batch, s0 = (k % per_batch) * block;
        const int64_t rows = S - s0 < block ? S - s0 : block;
        const int64_t row0 = b * S + s0;
        ropegrad_problem q = p;
        q.batch_size = 1;
        q.seq_len = rows;
        q.grad_cos = (const char *)p.grad_cos + (size_t)(row0 * D) * esz;
        q.grad_sin = (const char *)p.grad_sin + (size_t)(row0 * D) * esz;
        q.emb = p.emb + row0 * D;
        q.inv_freq = p.inv_freq + b * p.inv_freq_batch_stride;
        int rc = ropegrad_backward_reference(&q, ref + row0);
        if (rc > worst) worst = rc;
    }
    return worst;
}

static int cpu(const rg_tensors *t, void *out, int threads)
{
    ropegrad_problem p = problem(t, out);
    return ropegrad_backward_cpu(&p, threads);
}

static int cuda(const rg_tensors *t, void *out, int kernel, void *stream)
{
    ropegrad_problem p = problem(t, out);
    return ropegrad_backward_cuda_kernel(&p, kernel, stream);
}

static const rg_op_tensor inputs[] = {{"grad_cos", "grad"},
                                      {"grad_sin", "grad"},
                                      {"emb", "float32"},
                                      {"inv_freq_expanded", "float32"},
                                      {"attention_scaling", NULL},
                                      {NULL, NULL}};
static const rg_op_tensor outputs[] = {{"grad_position_ids", "float32"}, {NULL, NULL}};

const rg_op rg_op_rope_backward = {
    .id = "014",
    .definition = "014_rotary_embedding_with_attention_scaling_backward",
    .reference = "float64 (ropegrad_backward_reference, libm sin/cos)",
    .inputs = inputs,
    .outputs = outputs,
    .custom_scale = 0,
    .bytes = rg_workload_bytes,
    .make = make,
    .reference_fn = reference,
    .cpu = cpu,
    .cuda = cuda,
    .widen = rg_widen_f32,
    .kernel_name = ropegrad_cuda_kernel_name,
};
