/* SPDX-License-Identifier: Apache-2.0 */
/*
 * op.h -- the op table: everything the protocol needs to know about one op.
 *
 * The harness's header public to the op rows: a row (src/harness/ops/<op>.c:
 * the input generator, the bytes that must move, and thin calls into the
 * public API) is written against this header alone. The harness (suite
 * loading, run.c, run_cuda.c, output) is written against this table only.
 * An op is its code under src/op/<op>/ (public API in include/ropegrad.h),
 * its row, one entry in rg_ops[] (src/harness/op.c), and its suite folder.
 * The row calls libropegrad through include/ropegrad.h like any user.
 */
#ifndef ROPEGRAD_HARNESS_OP_H
#define ROPEGRAD_HARNESS_OP_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"   /* rg_workload, RG_OP_MAX_AXES */
#include "ropegrad.h"
#include "ropegrad_impl.h"

struct rg_workload;

#define RG_OP_MAX_TENSORS 6

/* One workload's tensors: host memory after make(), device memory in the
 * CUDA runner's copy (same struct, in[] replaced). */
typedef struct rg_tensors {
    int64_t batch_size, seq_len, head_dim;
    int64_t axes[RG_OP_MAX_AXES];    /* the op's named axes (rg_op.axes), in its order */
    ropegrad_dtype dtype;            /* 014's grad dtype; unused by the forward ops */
    float attention_scaling;
    int n_in;
    void *in[RG_OP_MAX_TENSORS];     /* in the definition's input order */
    size_t in_bytes[RG_OP_MAX_TENSORS];
    size_t out_bytes;                /* the output (all output tensors back to back) */
    int64_t n_out;                   /* output elements, checked against the reference */
    double *out_ref;                 /* where a row's reference writes (rg_op_row_blocks callbacks) */
} rg_tensors;

/* A tensor named in definition.json and the dtype the op requires of it:
 * "bfloat16", "float32", "int64"; "grad" = bfloat16, float16 or float32, the
 * same for every "grad" tensor (014's gradients); NULL = a scalar input (an
 * object must be present). */
typedef struct rg_op_tensor {
    const char *name;
    const char *dtype;
} rg_op_tensor;

/* A file the exported solution ships: `as` in the solution, `from` the
 * source-tree file (relative to the repository root) whose exact bytes are
 * embedded at build time (src/cli/CMakeLists.txt embeds include/ropegrad.h
 * and every .cuh file under src/op/). */
typedef struct rg_op_source {
    const char *as;
    const char *from;
} rg_op_source;

/* What `ropegrad export-solution` needs to ship the op's CUDA path as a
 * SOL-ExecBench solution (a torch binding, kernel.cu, around the library's
 * kernel header). The binding is generated: the includes, the kernel header
 * (sources[0]), `run` with the definition's inputs (tensors as torch::Tensor,
 * scalars as double) returning its outputs (a tuple when more than one),
 * then body, then the pybind11 module with the inputs as argument names. */
typedef struct rg_op_export {
    const rg_op_source *sources;     /* sources[0]: the kernel header kernel.cu includes; {NULL, NULL}-terminated */
    const char *launcher;            /* the launcher body calls, e.g. "rg_cuda_launch" */
    const char *about;               /* one line: what run() computes (the module's docstring) */
    const char *const *body;         /* run()'s body, one string per line, NULL-terminated */
    /* 1 when body passes `rg_solution_kernel` (a constant the binding defines
     * before run(): `export-solution --kernel N`, 0 by default) to a launcher
     * taking the op's kernel version (op->kernel_name names them); 0 when the
     * solution runs the default kernel only. */
    int kernel_arg;
} rg_op_export;

/* The header files every op's solution ships beside its kernel header. */
#define RG_OP_SOURCE_ROPE_MATH {"rope_math.cuh", "src/op/rope_math.cuh"}
#define RG_OP_SOURCE_API {"ropegrad.h", "include/ropegrad.h"}

typedef struct rg_op {
    const char *id;                  /* "011", "012", "014", "068", "088" */
    const char *name;                /* the op's one name: "rope_backward" (ropegrad_rope_backward_*, src/op/rope_backward/) */
    const char *definition;          /* definition.json "name" */
    const char *reference;           /* what the float64 reference is, for the record */
    const rg_op_tensor *inputs;      /* terminated by {NULL, NULL} */
    const rg_op_tensor *outputs;
    /* The workload axes it reads beyond batch_size and seq_len (each an
     * integer >= 1 in every workload), NULL-terminated (at most
     * RG_OP_MAX_AXES); NULL for none. */
    const char *const *axes;
    int custom_scale;                /* attention_scaling comes from the generator, not the workload */
    /* Bytes any kernel must move (read + written). */
    double (*bytes)(const struct rg_workload *w, ropegrad_dtype dt);
    /* Generates the inputs (inputs.c documents the generator; kind 0 = the
     * dataset's inputs, 1 = real training positions). */
    int (*make)(const struct rg_workload *w, ropegrad_dtype dt, int kind, uint64_t seed, rg_tensors *t, char *err,
                size_t errlen);
    /* float64 reference, n_out doubles; may use OpenMP itself. Returns a ropegrad status. */
    int (*reference_fn)(const rg_tensors *t, double *ref);
    /* The paths, writing out (host or device); ropegrad statuses. */
    int (*cpu)(const rg_tensors *t, void *out, int threads);
    int (*cuda)(const rg_tensors *t, void *out, int kernel, void *stream);
    /* The output's elements widened to float (n_out of them). */
    void (*widen)(const void *out, int64_t n, float *dst);
    /* CUDA kernel versions: name of version k (0 = default), NULL when unknown. */
    const char *(*kernel_name)(int k);
    /* The SOL-ExecBench solution of its CUDA path; NULL when it has none. */
    const rg_op_export *solution;
    /* A plugin's entry (include/ropegrad_impl.h) called with the op's public
     * problem struct over t and out, as cpu/cuda call the library's; NULL
     * when the op takes no plugins (`--impl` is then refused). */
    int (*impl_cpu)(ropegrad_impl_cpu_fn fn, const rg_tensors *t, void *out, int threads);
    int (*impl_cuda)(ropegrad_impl_cuda_fn fn, const rg_tensors *t, void *out, void *stream);
    /* Set only on an in-process implementation's row (impl.h,
     * rg_impl_open_embedded), NULL otherwise. finish: called once after the
     * checked call and before its output is read, never inside a timed span
     * (stream: the harness's CUDA stream, NULL on the CPU); an
     * implementation that returns its outputs copies them into out here.
     * error_text: the one line a failed call (status rc) is reported with. */
    int (*finish)(const rg_tensors *t, void *out, void *stream);
    const char *(*error_text)(int rc);
    /* Set only on an in-process implementation that stages its calls (the
     * Python driver), NULL otherwise: called before every timed call with
     * that call's buffers (stream: the harness's CUDA stream, NULL on the
     * CPU), after their re-staging and before the cache flush, outside the
     * timed span; the call that follows uses what it made (the driver's
     * tensors: made here, as the official evaluator makes them before its
     * flush, they add no host time between the flush and the call). */
    int (*stage)(const rg_tensors *t, void *out, void *stream);
} rg_op;

/* What a failed call of op's with status rc is reported as: op->error_text's
 * line when the op has one, else ropegrad_strerror(rc). */
const char *rg_op_error_text(const rg_op *op, int rc);

/* Op's bundled suite folder, "<id>-<name>" ("014-rope_backward"), under
 * the folder root ("root/014-rope_backward"; root NULL: the name alone),
 * into dst[n]: every path to a bundled suite is made here. */
void rg_op_suite_dir(const rg_op *op, const char *root, char *dst, size_t n);
/* The op whose id is id ("014"), or NULL. */
const rg_op *rg_op_by_id(const char *id);

/* The op whose definition name is name, or NULL. */
const rg_op *rg_op_find(const char *name);
/* Every op, NULL-terminated. */
extern const rg_op *const rg_ops[];

/* Frees the host tensors made by an op's make() and zeroes t. */
void rg_tensors_free(rg_tensors *t);

/* A single-threaded reference is a pure function of rows: rg_op_row_blocks
 * calls fn(ctx, r0, n) for blocks of RG_OP_BLOCK_ROWS rows in parallel
 * (OpenMP) and returns the largest status any call returned. */
#define RG_OP_BLOCK_ROWS 256
typedef int (*rg_op_block_fn)(const void *ctx, int64_t r0, int64_t n);
int rg_op_row_blocks(int64_t rows, rg_op_block_fn fn, const void *ctx);
/* rg_op_row_blocks over a copy of t whose out_ref is ref: a row's whole
 * reference() when its rows_fn writes t->out_ref. */
int rg_op_reference(const rg_tensors *t, double *ref, rg_op_block_fn rows_fn);

/* Helpers for the rows. */
void *rg_alloc64(size_t bytes);
void rg_widen_f32(const void *out, int64_t n, float *dst);
void rg_widen_bf16(const void *out, int64_t n, float *dst);
const char *rg_kernel_default_only(int k);
/* The CUDA kernel versions op ships in this build, as "0 (default), 14 (14-2d-ept4)"
 * (versions below RG_OP_KERNEL_SCAN; empty when none), into dst[n]. */
#define RG_OP_KERNEL_SCAN 64
void rg_op_kernels_text(const rg_op *op, char *dst, size_t n);
int rg_tensors_shape(const struct rg_workload *w, int64_t elems_per_row_max, rg_tensors *t, char *err, size_t errlen);

/* ---- the generator (inputs.c), for the rows' input makers ---------------------- */

/* The counter-based generator of inputs.c, for the ops' input makers:
 * rg_stream_key(seed, w, t) is key(w, t); the values are normal(w, t, i) and
 * uniform(w, t, i) as documented there. */
uint64_t rg_stream_key(uint64_t seed, int w, int t);
double rg_normal_at(uint64_t key, int64_t i);
double rg_uniform_at(uint64_t key, int64_t i);

/* Real training positions (inputs.c, RG_INPUTS_POSITIONS): position of row
 * s of batch b for positions in [0, pos_max], with the per-batch shift drawn
 * from key. */
int64_t rg_position_at(uint64_t key, int64_t b, int64_t s, int64_t S, int64_t pos_max);

/* 014's bytes any kernel must move for one workload (suite.c): B*S*(2*D*elt + D/2*4 + 4) + B*(D/2)*4.
 * (Every op's own: rg_op.bytes.) */
double rg_workload_bytes(const rg_workload *w, ropegrad_dtype dt);

/* 014's inputs (inputs.c): host-side tensors of one workload, owned by the harness. */
typedef struct rg_inputs {
    int64_t batch_size, seq_len, head_dim;
    ropegrad_dtype dtype;
    void *grad_cos, *grad_sin;     /* B*S*D elements of dtype */
    float *emb;                    /* B*S*D */
    float *inv_freq;               /* B*(D/2), stride D/2 */
    float attention_scaling;
} rg_inputs;

/* Deterministic and counter-based: element i of tensor t of workload w is a
 * pure function of (seed, w, t, i), so generation runs in parallel and any
 * element can be regenerated alone. Documented in inputs.c. */
int rg_inputs_make(const rg_workload *w, ropegrad_dtype dt, rg_inputs_kind kind, uint64_t seed,
                   rg_inputs *out, char *err, size_t errlen);
void rg_inputs_free(rg_inputs *in);
/* A ropegrad_rope_backward_problem over host inputs (output pointer left to the caller). */
ropegrad_rope_backward_problem rg_inputs_problem(const rg_inputs *in, float *out);

#endif
