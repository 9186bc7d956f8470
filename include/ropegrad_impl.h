/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ropegrad_impl.h -- the plugin ABI: any implementation of a ropegrad op,
 * measured by `ropegrad bench|check --impl PATH.so` exactly as ropegrad's own
 * kernels are (the same inputs, checks, timing, manifest and registry).
 *
 * A plugin is a shared library that exports one C function,
 *
 *     const ropegrad_impl *ropegrad_impl_descriptor(void);
 *
 * returning a pointer to a descriptor that lives as long as the library
 * (a static const object). ropegrad reads it once, after dlopen(), and
 * refuses the plugin (one line on stderr, exit 2, before anything is timed)
 * when the symbol is missing, the function returns NULL, abi_version is not
 * ROPEGRAD_IMPL_ABI_VERSION, name/version are missing or not short printable
 * ASCII, op is not the suite's definition name, or the entry point for the
 * backend asked for is NULL.
 *
 * Both entry points receive a pointer to the op's own problem struct from
 * include/ropegrad.h, filled by the harness exactly as for ropegrad's kernels:
 *
 *   op (definition.json "name")                              problem struct
 *   011_rotary_position_embedding                             ropegrad_rope_forward_problem
 *   012_fused_cos_sin_embedding_generation                    ropegrad_cos_sin_problem
 *   014_rotary_embedding_with_attention_scaling_backward      ropegrad_rope_backward_problem
 *
 * (the names are suites/0NN-OP/definition.json "name").
 * On the CUDA backend every pointer in the problem is device memory; on the
 * CPU backend host memory. The harness owns all memory: an entry point must
 * not free, keep or reallocate any pointer it is given, and writes only the
 * output tensors. An entry returns 0 on success, any other value on failure
 * (a ROPEGRAD_ERR_* code is printed by name, other values by number); a
 * failed call fails the workload (it is not timed).
 *
 * Nothing here needs a CUDA header: the stream is a cudaStream_t passed as
 * void *. Changing this struct's layout or meaning bumps
 * ROPEGRAD_IMPL_ABI_VERSION; ropegrad accepts exactly its own version.
 */
#ifndef ROPEGRAD_IMPL_H
#define ROPEGRAD_IMPL_H

#include <stdint.h>

#include "ropegrad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. */
#define ROPEGRAD_IMPL_ABI_VERSION 1

/* The symbol ropegrad looks up with dlsym(). */
#define ROPEGRAD_IMPL_DESCRIPTOR_SYMBOL "ropegrad_impl_descriptor"

/* Longest name and version accepted, in bytes (printable ASCII, no spaces at
 * either end): they are shown in `runs list`, `runs show` and on run pages. */
#define ROPEGRAD_IMPL_MAX_NAME 31

/* CUDA entry: launches the op over problem (the op's problem struct, device
 * pointers) on cuda_stream (a cudaStream_t; never NULL from ropegrad: the
 * harness's own non-blocking stream). Asynchronous, like
 * ropegrad_rope_backward_cuda: enqueue the work and return; no allocation, no
 * synchronization. What gets timed is every GPU activity the call issues,
 * on cuda_stream or on a stream of its own: kernels, memcpy and memset
 * (`--span all`, the default, as the official evaluator; `--span kernels`:
 * its kernels only), and every timed call must launch the same kernels.
 * The input pointers change from call to call (`--restage on`, the
 * default): nothing may be kept by pointer. */
typedef int (*ropegrad_impl_cuda_fn)(const void *problem, void *cuda_stream);

/* CPU entry: computes the op over problem (host pointers) before returning,
 * with up to num_threads threads (0 = as many as it likes, the `--threads`
 * value otherwise). Timed with the wall clock, cold cache before each call. */
typedef int (*ropegrad_impl_cpu_fn)(const void *problem, int num_threads);

typedef struct ropegrad_impl {
    /* ROPEGRAD_IMPL_ABI_VERSION of the header the plugin was built with. */
    uint32_t abi_version;
    /* The implementation's name, e.g. "plain-014": recorded as the
     * manifest's implementation name and shown by `runs list`/`runs show`
     * and the run page. 1..ROPEGRAD_IMPL_MAX_NAME printable ASCII bytes. */
    const char *name;
    /* Its version, e.g. "1.0.0" or a commit: recorded beside the name.
     * 1..ROPEGRAD_IMPL_MAX_NAME printable ASCII bytes. */
    const char *version;
    /* The op it implements: the suite's definition.json "name" (the table
     * above). A plugin for another op is refused. */
    const char *op;
    /* The CUDA entry, or NULL when the plugin has none (`--backend cuda`
     * is then refused; `auto` on a GPU machine too). */
    ropegrad_impl_cuda_fn cuda;
    /* The CPU entry, or NULL when the plugin has none (`--backend cpu`, or
     * `auto` without a GPU, is then refused). */
    ropegrad_impl_cpu_fn cpu;
} ropegrad_impl;

/* What a plugin defines (the one exported function). */
const ropegrad_impl *ropegrad_impl_descriptor(void);

#ifdef __cplusplus
}
#endif

#endif /* ROPEGRAD_IMPL_H */
