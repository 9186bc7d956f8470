/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hardware.h -- the plausibility floors the index holds itself (the
 * hardware table, hardware.c): no record can move them.
 *
 *   launch floor   per GPU model, the shortest kernel span measured on that
 *                  model (an empty kernel, CUPTI or event span): no kernel a
 *                  run times can take less. A GPU run with any workload
 *                  faster than max(T_SOL, launch floor) is suspect (rank.h).
 *   peak HBM       per GPU model, the datasheet bandwidth (sol.c's table,
 *                  the one T_SOL is computed from).
 *   CPU ceiling    per CPU model, the memory bandwidth no run on it can
 *                  exceed; a model not in the table gets the global ceiling
 *                  RG_CPU_CEILING_GBPS. A CPU run with any workload moving
 *                  its bytes faster than that is suspect.
 *
 * Every row names its source (docs/record.md, "Trust classes and floors").
 */
#ifndef ROPEGRAD_HARDWARE_H
#define ROPEGRAD_HARDWARE_H

/* The global CPU ceiling, GB/s: above the DRAM bandwidth of any one- or
 * two-socket server of the table's time (12 channels of DDR5-6400 on each of
 * two sockets is 1,229 GB/s; the harness flushes caches before every timed
 * call, so its figures are DRAM-bound). */
#define RG_CPU_CEILING_GBPS 1000.0
#define RG_CPU_CEILING_SOURCE                                                                                  \
    "global CPU ceiling: above two sockets of 12-channel DDR5-6400 (1,229 GB/s); the harness times CPU runs " \
    "from a flushed cache"

typedef struct rg_gpu_floor {
    double launch_ns;          /* the launch floor, ns (0: not in the table) */
    double peak_tbps;          /* datasheet HBM bandwidth (0: not in the table) */
    const char *product;       /* the table's name of the model, NULL when none */
    const char *source;        /* where the launch floor comes from */
} rg_gpu_floor;

/* The floors of the GPU gpu_name (cudaDeviceProp.name, as sol.c matches
 * it). 1 when the model has a launch floor, 0 when not (out zeroed). */
int rg_gpu_floor_lookup(const char *gpu_name, rg_gpu_floor *out);

/* The memory-bandwidth ceiling of CPU cpu_name, GB/s, with its source: the
 * model's row, else RG_CPU_CEILING_GBPS. Never 0. */
double rg_cpu_ceiling_gbps(const char *cpu_name, const char **source);

/* needle occurs in hay as whole words (bounded by non-alphanumeric
 * characters or the ends), case-insensitive (sol.c). */
int rg_contains_word_ci(const char *hay, const char *needle);

#endif
