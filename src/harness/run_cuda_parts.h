/* SPDX-License-Identifier: Apache-2.0 */
/* run_cuda_parts.h -- the CUDA runner's parts, each in its own file and
 * called only by run_cuda.c (CUDA builds only):
 *
 *   cupti_span_cuda.c   CUPTI activity records, and which of them belong to
 *                       which timed iteration (the timed span; the
 *                       same-kernels check)
 *   restage_cuda.c      the inputs re-copied at a shifted address before
 *                       every iteration (--restage on)
 *   nvml_cuda.c         GPU clocks and the driver version, NVML through dlopen
 */
#ifndef ROPEGRAD_RUN_CUDA_PARTS_H
#define ROPEGRAD_RUN_CUDA_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "harness.h"

/* ---- cupti_span_cuda.c --------------------------------------------------------------- */

/* Registers the activity buffers with CUPTI (once per process). 0, or 1
 * with why CUPTI cannot be used. */
int rg_span_setup(char *why, size_t whylen);

/* Forgets every record and enables the activity kinds the official
 * evaluator enables: RUNTIME, DRIVER, CONCURRENT_KERNEL, MEMCPY, MEMSET.
 * 0, or 1 with why (nothing is left enabled). */
int rg_span_begin(char *why, size_t whylen);

/* CUPTI's timestamp now (the clock of its records): 0, or 1. */
int rg_span_now(uint64_t *ts);

/* Disables the kinds; with flush, first delivers every record still
 * buffered (after the device is idle: never on a lost GPU). 0, or 1 with why
 * (the flush failed). */
int rg_span_end(int flush, char *why, size_t whylen);

/* The GPU activities of one iteration, by kind. */
typedef struct rg_span_counts {
    int kernels, memcpy, memset;
} rg_span_counts;

enum { RG_SPAN_OK = 0, RG_SPAN_UNUSABLE = 1, RG_SPAN_HACK = 2 };

/* Attributes the collected records to n iterations: iteration i owns every
 * GPU activity whose runtime or driver API record (same correlation id)
 * started inside [t0[i], t1[i]]; with RG_SPAN_KERNELS only its kernels
 * count. samples[i] = max(end) - min(start) over them, in ns; gaps (NULL:
 * not wanted): gaps[i] = the GPU idle time before min(start), in ns, from
 * the latest end of any recorded activity at or before it (rg_gap_before;
 * NAN where none ended before); *first: what iteration 0 owned. RG_SPAN_OK;
 * RG_SPAN_UNUSABLE with why (records lost or missing: time another way);
 * RG_SPAN_HACK with why (an iteration launched nothing, or other kernels
 * than iteration 0: the workload fails). */
int rg_span_attribute(const uint64_t *t0, const uint64_t *t1, int n, rg_span mode, double *samples, double *gaps,
                      rg_span_counts *first, char *why, size_t whylen);

/* ---- restage_cuda.c ------------------------------------------------------------------- */

/* A pool per input, as the official evaluator's ShiftingMemoryPoolAllocator:
 * before iteration it the input is copied to pool + (it mod slots) * 256 B. */
typedef struct rg_restage_pool {
    int n_in, slots;
    void *pool[RG_OP_MAX_TENSORS];
    size_t bytes[RG_OP_MAX_TENSORS];
} rg_restage_pool;

/* Allocates the pools for dev's inputs (their sizes) for iterations calls
 * (the offsets wrap after RG_RESTAGE_MAX_SLOTS). 0, or 1 with a message
 * (nothing left allocated). */
int rg_restage_open(rg_restage_pool *p, const rg_tensors *dev, int iterations, char *err, size_t errlen);

/* Enqueues iteration it's copies of src's inputs (device memory, dev's
 * sizes) on st and points call's inputs at them (call: a copy of the device
 * tensors). 0, or 1 with a message. */
int rg_restage_next(const rg_restage_pool *p, int it, const rg_tensors *src, rg_tensors *call, cudaStream_t st,
                    char *err, size_t errlen);

void rg_restage_close(rg_restage_pool *p);

/* ---- nvml_cuda.c ---------------------------------------------------------------------- */

typedef struct rg_nvml rg_nvml;

/* Opens NVML for CUDA device cuda_device (NULL when the library or the
 * device is not there: the clocks are then -1). */
rg_nvml *rg_nvml_open(int cuda_device);
/* The SM and memory clocks now, MHz (-1 unknown). */
void rg_nvml_clocks(rg_nvml *n, int *sm, int *mem);
/* The driver's version ("570.86.15") into dst: 0, or 1 when unknown. */
int rg_nvml_driver(rg_nvml *n, char *dst, size_t len);
void rg_nvml_close(rg_nvml *n);

#endif
