/* SPDX-License-Identifier: Apache-2.0 */
/* rope_backward.c -- the op table's row for L1/014, the backward of
 * rotary-embedding generation (inputs: inputs.c's rg_inputs_make). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

static ropegrad_rope_backward_problem problem(const rg_tensors *t, void *out)
{
    ropegrad_rope_backward_problem p;
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

/* ropegrad_rope_backward_reference is single-threaded; it is a pure function of
 * rows, so blocks of up to 256 rows of one batch are independent
 * sub-problems (batch_size 1) and run in parallel. */
static int reference(const rg_tensors *t, double *ref)
{
    const ropegrad_rope_backward_problem p = problem(t, NULL);
    const int64_t S = p.seq_len, D = p.head_dim;
    const size_t esz = ropegrad_dtype_size(p.grad_dtype);
    const int64_t block = 256, per_batch = (S + block - 1) / block, nblocks = p.batch_size * per_batch;
    int worst = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(max : worst)
    for (int64_t k = 0; k < nblocks; k++) {
        const int64_t b = k / per_batch, s0 = (k % per_batch) * block;
        const int64_t rows = S - s0 < block ? S - s0 : block;
        const int64_t row0 = b * S + s0;
        ropegrad_rope_backward_problem q = p;
        q.batch_size = 1;
        q.seq_len = rows;
        q.grad_cos = (const char *)p.grad_cos + (size_t)(row0 * D) * esz;
        q.grad_sin = (const char *)p.grad_sin + (size_t)(row0 * D) * esz;
        q.emb = p.emb + row0 * D;
        q.inv_freq = p.inv_freq + b * p.inv_freq_batch_stride;
        int rc = ropegrad_rope_backward_reference(&q, ref + row0);
        if (rc > worst) worst = rc;
    }
    return worst;
}

static int cpu(const rg_tensors *t, void *out, int threads)
{
    ropegrad_rope_backward_problem p = problem(t, out);
    return ropegrad_rope_backward_cpu(&p, threads);
}

static int cuda(const rg_tensors *t, void *out, int kernel, void *stream)
{
    ropegrad_rope_backward_problem p = problem(t, out);
    if (kernel != 0) return ROPEGRAD_ERR_BAD_KERNEL;
    return ropegrad_rope_backward_cuda(&p, stream);
}

/* A plugin's entries (op.h impl_cpu / impl_cuda): the same problem struct. */
static int impl_cpu(ropegrad_impl_cpu_fn fn, const rg_tensors *t, void *out, int threads)
{
    ropegrad_rope_backward_problem p = problem(t, out);
    return fn(&p, threads);
}

static int impl_cuda(ropegrad_impl_cuda_fn fn, const rg_tensors *t, void *out, void *stream)
{
    ropegrad_rope_backward_problem p = problem(t, out);
    return fn(&p, stream);
}

static const rg_op_tensor inputs[] = {{"grad_cos", "grad"},
                                      {"grad_sin", "grad"},
                                      {"emb", "float32"},
                                      {"inv_freq_expanded", "float32"},
                                      {"attention_scaling", NULL},
                                      {NULL, NULL}};
static const rg_op_tensor outputs[] = {{"grad_position_ids", "float32"}, {NULL, NULL}};

/* The solution's binding: returns a new float32 [B,S] tensor. Grads may be
 * bf16, f16 or f32 (both the same), emb f32 [B,S,D], inv_freq_expanded f32
 * [B,D/2,1] or [B,D/2] (dim 0 may be a stride-0 expansion of one vector). The
 * launcher does not validate, so every check ropegrad_rope_backward_validate makes is
 * repeated with TORCH_CHECK. C11 only promises string literals of 4095
 * characters: one string per line. */
static const char *const binding_body[] = {
    "    TORCH_CHECK(grad_cos.is_cuda() && grad_sin.is_cuda() && emb.is_cuda() && inv_freq_expanded.is_cuda(),\n",
    "                \"ropegrad: every tensor must be on a CUDA device\");\n",
    "    TORCH_CHECK(grad_sin.device() == grad_cos.device() && emb.device() == grad_cos.device() &&\n",
    "                    inv_freq_expanded.device() == grad_cos.device(),\n",
    "                \"ropegrad: every tensor must be on the same device\");\n",
    "    TORCH_CHECK(grad_cos.dim() == 3, \"ropegrad: grad_cos must be [B,S,D], got \", grad_cos.sizes());\n",
    "    TORCH_CHECK(grad_sin.sizes() == grad_cos.sizes() && emb.sizes() == grad_cos.sizes(),\n",
    "                \"ropegrad: grad_cos, grad_sin and emb must have one shape, got \", grad_cos.sizes(), \", \",\n",
    "                grad_sin.sizes(), \", \", emb.sizes());\n",
    "    const int64_t B = grad_cos.size(0), S = grad_cos.size(1), D = grad_cos.size(2), H = D / 2;\n",
    "    TORCH_CHECK(D >= 2 && D % 2 == 0 && D <= ROPEGRAD_MAX_HEAD_DIM,\n",
    "                \"ropegrad: head_dim must be even and in 2..\", ROPEGRAD_MAX_HEAD_DIM, \", got \", D);\n",
    "    TORCH_CHECK(grad_sin.scalar_type() == grad_cos.scalar_type(), \"ropegrad: grad_cos and grad_sin dtypes differ\");\n",
    "    ropegrad_dtype dt = ROPEGRAD_BF16;\n",
    "    switch (grad_cos.scalar_type()) {\n",
    "    case at::kBFloat16: dt = ROPEGRAD_BF16; break;\n",
    "    case at::kHalf: dt = ROPEGRAD_F16; break;\n",
    "    case at::kFloat: dt = ROPEGRAD_F32; break;\n",
    "    default: TORCH_CHECK(false, \"ropegrad: grads must be bfloat16, float16 or float32, got \", grad_cos.scalar_type());\n",
    "    }\n",
    "    TORCH_CHECK(emb.scalar_type() == at::kFloat, \"ropegrad: emb must be float32, got \", emb.scalar_type());\n",
    "    TORCH_CHECK(inv_freq_expanded.scalar_type() == at::kFloat, \"ropegrad: inv_freq_expanded must be float32\");\n",
    "    TORCH_CHECK((inv_freq_expanded.dim() == 3 && inv_freq_expanded.size(2) == 1) || inv_freq_expanded.dim() == 2,\n",
    "                \"ropegrad: inv_freq_expanded must be [B,D/2,1] or [B,D/2], got \", inv_freq_expanded.sizes());\n",
    "    TORCH_CHECK(inv_freq_expanded.size(0) == B && inv_freq_expanded.size(1) == H,\n",
    "                \"ropegrad: inv_freq_expanded must be [\", B, \",\", H, \",1], got \", inv_freq_expanded.sizes());\n",
    "    TORCH_CHECK(std::isfinite((float)attention_scaling), \"ropegrad: attention_scaling must be a finite float\");\n",
    "\n",
    "    const c10::cuda::CUDAGuard guard(grad_cos.device());\n",
    "    auto out = torch::empty({B, S}, emb.options());\n",
    "    if (B == 0 || S == 0) return out;\n",
    "    // The kernels read contiguous rows; for contiguous inputs (the harness's) these are no-ops.\n",
    "    grad_cos = grad_cos.contiguous();\n",
    "    grad_sin = grad_sin.contiguous();\n",
    "    emb = emb.contiguous();\n",
    "    // A batch's H frequencies must be contiguous; batches may share one (stride 0).\n",
    "    if (H > 1 && inv_freq_expanded.stride(1) != 1) inv_freq_expanded = inv_freq_expanded.contiguous();\n",
    "    const int64_t inv_stride = B == 1 ? 0 : inv_freq_expanded.stride(0);\n",
    "    TORCH_CHECK(inv_stride >= 0, \"ropegrad: negative inv_freq_expanded batch stride\");\n",
    "\n",
    "    ropegrad_rope_backward_problem p;\n",
    "    std::memset(&p, 0, sizeof p);\n",
    "    p.batch_size = B;\n",
    "    p.seq_len = S;\n",
    "    p.head_dim = D;\n",
    "    p.grad_dtype = dt;\n",
    "    p.grad_cos = grad_cos.data_ptr();\n",
    "    p.grad_sin = grad_sin.data_ptr();\n",
    "    p.emb = emb.data_ptr<float>();\n",
    "    p.inv_freq = inv_freq_expanded.data_ptr<float>();\n",
    "    p.inv_freq_batch_stride = inv_stride;\n",
    "    p.attention_scaling = (float)attention_scaling;\n",
    "    p.grad_position_ids = out.data_ptr<float>();\n",
    "    const cudaError_t e = rg_cuda_launch(&p, 0, at::cuda::getCurrentCUDAStream());\n",
    "    TORCH_CHECK(e == cudaSuccess, \"ropegrad: kernel launch failed: \", cudaGetErrorString(e));\n",
    "    return out;\n",
    NULL,
};

static const rg_op_source solution_sources[] = {
    {"ropegrad_kernels.cuh", "src/op/rope_backward/kernels.cuh"}, RG_OP_SOURCE_ROPE_MATH, RG_OP_SOURCE_API, {NULL, NULL}};

static const rg_op_export solution = {
    .sources = solution_sources,
    .launcher = "rg_cuda_launch",
    .about = "ropegrad: gradient of RoPE cos/sin generation w.r.t. position_ids",
    .body = binding_body,
};

const rg_op rg_op_rope_backward = {
    .id = "014",
    .name = "rope_backward",
    .definition = "014_rotary_embedding_with_attention_scaling_backward",
    .reference = "float64 (ropegrad_rope_backward_reference, libm sin/cos)",
    .inputs = inputs,
    .outputs = outputs,
    .custom_scale = 0,
    .bytes = rg_workload_bytes,
    .make = make,
    .reference_fn = reference,
    .cpu = cpu,
    .cuda = cuda,
    .widen = rg_widen_f32,
    .kernel_name = rg_kernel_default_only,
    .solution = &solution,
    .impl_cpu = impl_cpu,
    .impl_cuda = impl_cuda,
};
