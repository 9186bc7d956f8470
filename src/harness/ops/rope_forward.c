/* SPDX-License-Identifier: Apache-2.0 */
/* rope_forward.c -- the op table's row for L1/011, the rotary embedding
 * forward: position_ids int64 [B,S], inv_freq f32 [H] -> cos_sin bf16 [B,S,D,2].
 *
 * Inputs (the dataset's get_inputs is custom for this op):
 *   inv_freq: llama3 scaling of theta 500000 (factor 8, low/high frequency
 *     factors 1 and 4, original context 8192), step by step in float32 as
 *     get_inputs computes it in torch:
 *       inv = 1 / powf(500000, 2d/D); wavelen = float(2 pi) / inv;
 *       smooth = clamp((8192 / wavelen - 1) / 3, 0, 1);
 *       inv = (1 - smooth) * inv + smooth * (inv / 8)
 *     (so, as the dataset writes it, the fast frequencies are the ones divided
 *     by 8: the reverse of Hugging Face's llama3 rule; reproduced as written)
 *   attention_scaling = 1 (get_inputs' value).
 *   RG_INPUTS_NORMAL (the dataset's): position_ids[b,s] = s for every batch.
 *   RG_INPUTS_POSITIONS (real training, packed sequences): positions in
 *     [0, 131071] (llama3's 128K context), different per batch:
 *     pos[b,s] = rg_position_at(key(w, 4), b, s, S, 131071) (inputs.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

#define RG_LLAMA3_POS_MAX 131071

static ropegrad_rope_forward_problem problem(const rg_tensors *t, void *out)
{
    ropegrad_rope_forward_problem p;
    memset(&p, 0, sizeof p);
    p.batch_size = t->batch_size;
    p.seq_len = t->seq_len;
    p.head_dim = t->head_dim;
    p.position_ids = t->in[0];
    p.inv_freq = t->in[1];
    p.attention_scaling = t->attention_scaling;
    p.cos_sin = out;
    return p;
}

static void llama3_inv_freq(float *inv, int64_t D)
{
    for (int64_t d = 0; d < D / 2; d++) {
        const float f = 1.0f / powf(500000.0f, (float)(2 * d) / (float)D);
        const float wavelen = (float)(2.0 * 3.14159265358979323846) / f;
        float smooth = (8192.0f / wavelen - 1.0f) / (4.0f - 1.0f);
        smooth = smooth < 0.0f ? 0.0f : smooth > 1.0f ? 1.0f : smooth;
        inv[d] = (1.0f - smooth) * f + smooth * (f / 8.0f);
    }
}

static int make(const rg_workload *w, ropegrad_dtype dt, int kind, uint64_t seed, rg_tensors *t, char *err,
                size_t errlen)
{
    (void)dt;
    if (rg_tensors_shape(w, w->head_dim * 4, t, err, errlen)) return 1;
    const int64_t B = t->batch_size, S = t->seq_len, D = t->head_dim;
    t->attention_scaling = 1.0f;
    t->n_in = 2;
    t->in_bytes[0] = (size_t)(B * S) * sizeof(int64_t);
    t->in_bytes[1] = (size_t)(D / 2) * sizeof(float);
    t->in[0] = rg_alloc64(t->in_bytes[0]);
    t->in[1] = rg_alloc64(t->in_bytes[1]);
    t->n_out = B * S * D * 2;
    t->out_bytes = (size_t)t->n_out * 2;
    if (!t->in[0] || !t->in[1]) {
        rg_tensors_free(t);
        snprintf(err, errlen, "workload %d: out of memory allocating the inputs", w->index);
        return 1;
    }
    llama3_inv_freq(t->in[1], D);
    int64_t *pos = t->in[0];
    const uint64_t ko = rg_stream_key(seed, w->index, 4);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < B * S; r++)
        pos[r] = kind == RG_INPUTS_POSITIONS ? rg_position_at(ko, r / S, r % S, S, RG_LLAMA3_POS_MAX) : r % S;
    return 0;
}

/* Rows r0 .. r0+n-1 of the reference. */
static int reference_rows(const void *ctx, int64_t r0, int64_t n)
{
    const rg_tensors *t = ctx;
    ropegrad_rope_forward_problem q = problem(t, NULL);
    q.batch_size = 1;
    q.seq_len = n;
    q.position_ids += r0;
    return ropegrad_rope_forward_reference(&q, (double *)t->out_ref + r0 * t->head_dim * 2);
}

static int reference(const rg_tensors *t, double *ref)
{
    return rg_op_reference(t, ref, reference_rows);
}

static int cpu(const rg_tensors *t, void *out, int threads)
{
    ropegrad_rope_forward_problem p = problem(t, out);
    return ropegrad_rope_forward_cpu(&p, threads);
}

static int cuda(const rg_tensors *t, void *out, int kernel, void *stream)
{
    if (kernel != 0) return ROPEGRAD_ERR_BAD_KERNEL;
    ropegrad_rope_forward_problem p = problem(t, out);
    return ropegrad_rope_forward_cuda(&p, stream);
}

static double bytes(const rg_workload *w, ropegrad_dtype dt)
{
    (void)dt;
    const double rows = (double)w->batch_size * (double)w->seq_len, D = (double)w->head_dim;
    return rows * (8.0 + D * 2 * 2) + D / 2 * 4;   /* positions in, cos_sin out, inv_freq once */
}

/* A plugin's entries (op.h impl_cpu / impl_cuda): the same problem struct. */
static int impl_cpu(ropegrad_impl_cpu_fn fn, const rg_tensors *t, void *out, int threads)
{
    ropegrad_rope_forward_problem p = problem(t, out);
    return fn(&p, threads);
}

static int impl_cuda(ropegrad_impl_cuda_fn fn, const rg_tensors *t, void *out, void *stream)
{
    ropegrad_rope_forward_problem p = problem(t, out);
    return fn(&p, stream);
}

static const rg_op_tensor inputs[] = {
    {"position_ids", "int64"}, {"inv_freq", "float32"}, {"attention_scaling", NULL}, {NULL, NULL}};
static const rg_op_tensor outputs[] = {{"cos_sin", "bfloat16"}, {NULL, NULL}};

/* The solution's binding: position_ids int64 [B,S], inv_freq float32 [D/2]
 * (shared by every batch) -> a new cos_sin bfloat16 [B,S,D,2]. The launcher
 * does not validate, so every check ropegrad_rope_forward_validate makes is
 * repeated with TORCH_CHECK (the output is new: it overlaps nothing). One
 * string per line (C11 only promises literals of 4095 characters). */
static const char *const binding_body[] = {
    "    TORCH_CHECK(position_ids.is_cuda() && inv_freq.is_cuda(), \"ropegrad: every tensor must be on a CUDA device\");\n",
    "    TORCH_CHECK(inv_freq.device() == position_ids.device(), \"ropegrad: every tensor must be on the same device\");\n",
    "    TORCH_CHECK(position_ids.dim() == 2, \"ropegrad: position_ids must be [B,S], got \", position_ids.sizes());\n",
    "    TORCH_CHECK(inv_freq.dim() == 1, \"ropegrad: inv_freq must be [D/2], got \", inv_freq.sizes());\n",
    "    TORCH_CHECK(position_ids.scalar_type() == at::kLong, \"ropegrad: position_ids must be int64, got \",\n",
    "                position_ids.scalar_type());\n",
    "    TORCH_CHECK(inv_freq.scalar_type() == at::kFloat, \"ropegrad: inv_freq must be float32, got \", inv_freq.scalar_type());\n",
    "    const int64_t B = position_ids.size(0), S = position_ids.size(1), H = inv_freq.size(0), D = 2 * H;\n",
    "    TORCH_CHECK(D >= 2 && D <= ROPEGRAD_MAX_HEAD_DIM, \"ropegrad: head_dim (2 x inv_freq's length) must be in 2..\",\n",
    "                ROPEGRAD_MAX_HEAD_DIM, \", got \", D);\n",
    "    const float scale = (float)attention_scaling;\n",
    "    TORCH_CHECK(std::isfinite(scale), \"ropegrad: attention_scaling must be a finite float\");\n",
    "\n",
    "    const c10::cuda::CUDAGuard guard(position_ids.device());\n",
    "    auto cos_sin = torch::empty({B, S, D, 2}, position_ids.options().dtype(at::kBFloat16));\n",
    "    if (B == 0 || S == 0) return cos_sin;\n",
    "    // The kernels read contiguous rows; for contiguous inputs (the harness's) these are no-ops.\n",
    "    position_ids = position_ids.contiguous();\n",
    "    inv_freq = inv_freq.contiguous();\n",
    "\n",
    "    ropegrad_rope_forward_problem p;\n",
    "    std::memset(&p, 0, sizeof p);\n",
    "    p.batch_size = B;\n",
    "    p.seq_len = S;\n",
    "    p.head_dim = D;\n",
    "    p.position_ids = position_ids.data_ptr<int64_t>();\n",
    "    p.inv_freq = inv_freq.data_ptr<float>();\n",
    "    p.attention_scaling = scale;\n",
    "    p.cos_sin = reinterpret_cast<uint16_t *>(cos_sin.data_ptr<at::BFloat16>());\n",
    "    const cudaError_t e = rg_rope_forward_launch(&p, at::cuda::getCurrentCUDAStream());\n",
    "    TORCH_CHECK(e == cudaSuccess, \"ropegrad: kernel launch failed: \", cudaGetErrorString(e));\n",
    "    return cos_sin;\n",
    NULL,
};

static const rg_op_source solution_sources[] = {{"ropegrad_rope_forward_kernels.cuh", "src/op/rope_forward/kernels.cuh"}, RG_OP_SOURCE_ROPE_MATH, RG_OP_SOURCE_API,
                                                {NULL, NULL}};

static const rg_op_export solution = {
    .sources = solution_sources,
    .launcher = "rg_rope_forward_launch",
    .about = "ropegrad: RoPE cos/sin from position ids and inverse frequencies, bf16 [B,S,D,2]",
    .body = binding_body,
};

const rg_op rg_op_rope_forward = {
    .id = "011",
    .name = "rope_forward",
    .definition = "011_rotary_position_embedding",
    .reference = "float64 (ropegrad_rope_forward_reference: libm cos/sin of the float32 product)",
    .inputs = inputs,
    .outputs = outputs,
    .custom_scale = 1,
    .bytes = bytes,
    .make = make,
    .reference_fn = reference,
    .cpu = cpu,
    .cuda = cuda,
    .widen = rg_widen_bf16,
    .kernel_name = rg_kernel_default_only,
    .solution = &solution,
    .impl_cpu = impl_cpu,
    .impl_cuda = impl_cuda,
};
