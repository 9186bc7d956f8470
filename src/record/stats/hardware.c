/* SPDX-License-Identifier: Apache-2.0 */
/* hardware.c -- the hardware table: launch floors, peak HBM bandwidth and
 * CPU memory ceilings, each row with its source (hardware.h). */
#include "hardware.h"

#include <stddef.h>
#include <string.h>

#include "record.h"

/* Launch floors. A row matches the datasheet product sol.c finds for the
 * name (so "H100 PCIe" and "H100 NVL" are not taken for the SXM part). */
static const struct {
    const char *product;   /* sol.c's product name */
    double launch_ns;
    const char *source;
} gpu_floor[] = {
    {"H200", 550,
     "shortest kernel span measured on an H200: an empty kernel, 0.55 us (CUPTI activity span; 0.61 us one "
     "block, 0.64 us on another machine): results/anchors/h200-2026-11-29.md"},
    {"H100 SXM", 900,
     "shortest kernel span measured on an H100 80GB HBM3: an empty kernel, 0.90 us (anchors of 2026-12-05, "
     "H100)"},
    {"B200", 500,
     "no span measured on a B200 here: Hopper's shortest measured span (0.55 us, H200) rounded down; the "
     "public B200 field's fastest run averages 1.69 us"},
};

int rg_gpu_floor_lookup(const char *gpu_name, rg_gpu_floor *out)
{
    if (!out) return 0;
    memset(out, 0, sizeof *out);
    const char *product = NULL;
    double tbps = rg_datasheet_bandwidth_tbps(gpu_name, &product);
    if (!(tbps > 0) || !product) return 0;
    out->peak_tbps = tbps;
    out->product = product;
    for (size_t i = 0; i < sizeof gpu_floor / sizeof gpu_floor[0]; i++)
        if (!strcmp(gpu_floor[i].product, product)) {
            out->launch_ns = gpu_floor[i].launch_ns;
            out->source = gpu_floor[i].source;
            return 1;
        }
    return 0;
}

/* CPU models whose memory can go beyond the global ceiling, by a part of
 * the name the CPU reports (whole words, case-insensitive). */
static const struct {
    const char *match;
    double gbps;
    const char *source;
} cpu_ceiling[] = {
    {"CPU Max", 3300,
     "Intel Xeon CPU Max series product brief: 64 GB HBM2e per socket, about 1.6 TB/s each, two sockets"},
    {"Grace", 1100,
     "NVIDIA Grace CPU Superchip datasheet: up to 1 TB/s LPDDR5X over its two CPUs (GH200: 512 GB/s)"},
};

double rg_cpu_ceiling_gbps(const char *cpu_name, const char **source)
{
    for (size_t i = 0; cpu_name && i < sizeof cpu_ceiling / sizeof cpu_ceiling[0]; i++)
        if (rg_contains_word_ci(cpu_name, cpu_ceiling[i].match)) {
            if (source) *source = cpu_ceiling[i].source;
            return cpu_ceiling[i].gbps;
        }
    if (source) *source = RG_CPU_CEILING_SOURCE;
    return RG_CPU_CEILING_GBPS;
}
