/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sol.c -- the SOL score, the datasheet bandwidth table and baseline files.
 *
 * SOL-ExecBench scores a kernel by where its time T_k falls between the
 * speed-of-light time T_SOL (the least time the hardware allows) and the
 * baseline T_b (the reference implementation):
 *
 *   S = 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL))
 *
 * S = 0.5 at the baseline, 1 at the speed of light, and falls toward 0 for
 * kernels slower than the baseline. When the baseline already reaches the
 * speed of light (T_b <= T_SOL) the ratio is meaningless: S is 1 if the
 * kernel does too, 0 otherwise. The suite score is the mean over workloads.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hardware.h"
#include "record.h"

double rg_sol_score(double t_k, double t_sol, double t_b)
{
    if (isnan(t_k) || isnan(t_sol) || isnan(t_b) || t_k < 0 || t_sol < 0 || t_b < 0) return NAN;
    if (t_b <= t_sol) return t_k <= t_sol ? 1.0 : 0.0;
    return 1.0 / (1.0 + (t_k - t_sol) / (t_b - t_sol));
}

/* Peak DRAM bandwidth from NVIDIA's datasheets, TB/s, each with the document
 * it comes from. The name a GPU reports (cudaDeviceProp.name) is matched by
 * whole words (a match bounded by non-alphanumeric characters or the ends,
 * case-insensitive), first match wins, so the more specific names come first
 * ("H100 PCIe" before "H100", whose plain form "NVIDIA H100 80GB HBM3" is the
 * SXM part). A name that matches two unrelated entries ("H200 GB200") is
 * ambiguous and matches none. */
static const struct {
    const char *match, *product;
    double tbps;
    const char *source;
} datasheet[] = {
    {"GB200", "GB200 (per GPU)", 8.0, "NVIDIA GB200 NVL72 datasheet (576 TB/s HBM3e over 72 GPUs)"},
    {"B200", "B200", 8.0, "NVIDIA DGX B200 datasheet (64 TB/s HBM3e over 8 GPUs)"},
    {"B100", "B100", 8.0, "NVIDIA HGX B100 (Blackwell architecture technical brief)"},
    {"GH200", "GH200 (HBM3)", 4.0, "NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3)"},
    {"H200", "H200", 4.8, "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM and NVL)"},
    {"H100 PCIe", "H100 PCIe", 2.0, "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe)"},
    {"H100 NVL", "H100 NVL", 3.9, "NVIDIA H100 Tensor Core GPU datasheet (H100 NVL)"},
    {"H100", "H100 SXM", 3.35, "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM)"},
    {"H800", "H800 SXM", 3.35, "NVIDIA H800 Tensor Core GPU datasheet (SXM)"},
    {"H20", "H20", 4.0, "NVIDIA H20 product brief"},
    {"A100-SXM4-40GB", "A100 40GB SXM", 1.555, "NVIDIA A100 Tensor Core GPU datasheet (A100 40GB SXM)"},
    {"A100-PCIE-40GB", "A100 40GB PCIe", 1.555, "NVIDIA A100 Tensor Core GPU datasheet (A100 40GB PCIe)"},
    {"A100 80GB PCIe", "A100 80GB PCIe", 1.935, "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB PCIe)"},
    {"A100", "A100 80GB SXM", 2.039, "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM)"},
    {"L40S", "L40S", 0.864, "NVIDIA L40S GPU datasheet"},
    {"L40", "L40", 0.864, "NVIDIA L40 GPU datasheet"},
    {"L4", "L4", 0.3, "NVIDIA L4 Tensor Core GPU datasheet"},
    {"A10", "A10", 0.6, "NVIDIA A10 Tensor Core GPU datasheet"},
    {"RTX 6000 Ada", "RTX 6000 Ada", 0.96, "NVIDIA RTX 6000 Ada Generation datasheet"},
    {"RTX 4090", "GeForce RTX 4090", 1.008, "NVIDIA GeForce RTX 4090 specifications"},
    {"RTX 5090", "GeForce RTX 5090", 1.792, "NVIDIA GeForce RTX 5090 specifications"},
    {"V100", "V100 SXM2", 0.9, "NVIDIA Tesla V100 GPU datasheet"},
};

static int word_char(char c) { return isalnum((unsigned char)c) != 0; }

int rg_contains_word_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; n && *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n && (p == hay || !word_char(p[-1])) && !word_char(p[n])) return 1;
    }
    return 0;
}

/* The table's entry for gpu_name, -1 when none or ambiguous. */
static int datasheet_entry(const char *gpu_name)
{
    if (!gpu_name || !*gpu_name) return -1;
    int first = -1;
    for (size_t i = 0; i < sizeof datasheet / sizeof datasheet[0]; i++) {
        if (!rg_contains_word_ci(gpu_name, datasheet[i].match)) continue;
        if (first < 0) first = (int)i;
        else if (!rg_contains_word_ci(datasheet[first].match, datasheet[i].match)) return -1;   /* unrelated names */
    }
    return first;
}

double rg_datasheet_bandwidth_tbps(const char *gpu_name, const char **product)
{
    return rg_datasheet_lookup(gpu_name, product, NULL);
}

double rg_datasheet_lookup(const char *gpu_name, const char **product, const char **source)
{
    if (product) *product = NULL;
    if (source) *source = NULL;
    int i = datasheet_entry(gpu_name);
    if (i < 0) return 0;
    if (product) *product = datasheet[i].product;
    if (source) *source = datasheet[i].source;
    return datasheet[i].tbps;
}

/* ---- baseline files ------------------------------------------------------------ */

void rg_baseline_free(rg_baseline *b)
{
    if (!b) return;
    free(b->index);
    free(b->time_ns);
    b->index = NULL;
    b->time_ns = NULL;
    b->n = 0;
}

double rg_baseline_lookup(const rg_baseline *b, int index)
{
    if (!b) return NAN;
    for (size_t i = 0; i < b->n; i++)
        if (b->index[i] == index) return b->time_ns[i];
    return NAN;
}

/* The time of one entry in ns: time_ns as a number or as {median: ..},
 * else time_ms / baseline_ms. NAN when none is there. */
static double entry_time_ns(const cJSON *e)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "time_ns");
    if (cJSON_IsNumber(t)) return t->valuedouble;
    if (cJSON_IsObject(t)) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(t, "median");
        if (cJSON_IsNumber(m)) return m->valuedouble;
        return NAN;
    }
    t = cJSON_GetObjectItemCaseSensitive(e, "time_ms");
    if (!cJSON_IsNumber(t)) t = cJSON_GetObjectItemCaseSensitive(e, "baseline_ms");
    if (cJSON_IsNumber(t)) return t->valuedouble * 1e6;
    return NAN;
}

int rg_baseline_load(const char *path, rg_baseline *b, char *err, size_t errlen)
{
    if (!path || !b) {
        snprintf(err, errlen, "baseline: no file given");
        return 1;
    }
    memset(b, 0, sizeof *b);
    /* The shared strict reader: bounded, regular files only, no repeated
     * names, no U+0000 (strict_json.h). */
    size_t n = 0;
    char *text = rg_read_file_bounded(path, RG_JSON_MAX_SUITE_DOC, &n, err, errlen);
    if (!text) return 1;
    char hex[65];
    rg_sha256_hex(text, n, hex);
    snprintf(b->digest, sizeof b->digest, "sha256:%s", hex);
    cJSON *root = rg_json_parse_strict(text, n, path, err, errlen);
    free(text);
    if (!root) return 1;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        snprintf(err, errlen, "%s: not a JSON object", path);
        return 1;
    }
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "per_workload");
    const char *format = "per-workload";
    if (!cJSON_IsArray(list)) {
        list = cJSON_GetObjectItemCaseSensitive(root, "workloads");
        format = "bench-json";
    }
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
        cJSON_Delete(root);
        snprintf(err, errlen, "%s: no \"per_workload\" or \"workloads\" list of times", path);
        return 1;
    }
    size_t cnt = (size_t)cJSON_GetArraySize(list);
    b->index = calloc(cnt, sizeof *b->index);
    b->time_ns = calloc(cnt, sizeof *b->time_ns);
    if (!b->index || !b->time_ns) {
        rg_baseline_free(b);
        cJSON_Delete(root);
        snprintf(err, errlen, "%s: out of memory", path);
        return 1;
    }
    size_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(e, "index");
        double t = entry_time_ns(e);
        if (!cJSON_IsNumber(idx) || idx->valuedouble < 0 || idx->valuedouble > 1e6 ||
            idx->valuedouble != floor(idx->valuedouble)) {
            snprintf(err, errlen, "%s: entry %zu: \"index\" is not a workload index", path, i);
            goto fail;
        }
        if (!(t > 0) || !isfinite(t)) {
            snprintf(err, errlen, "%s: entry %zu: no positive time (time_ns, time_ns.median, time_ms or baseline_ms)",
                     path, i);
            goto fail;
        }
        for (size_t j = 0; j < i; j++) {
            if (b->index[j] == (int)idx->valuedouble) {
                snprintf(err, errlen, "%s: entry %zu: workload %d listed twice", path, i, b->index[j]);
                goto fail;
            }
        }
        b->index[i] = (int)idx->valuedouble;
        b->time_ns[i] = t;
    }
    b->n = cnt;
    snprintf(b->format, sizeof b->format, "%s", format);
    snprintf(b->file, sizeof b->file, "%s", path);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(name)) name = cJSON_GetObjectItemCaseSensitive(root, "suite");
    if (cJSON_IsString(name)) {
        snprintf(b->name, sizeof b->name, "%s", name->valuestring);
    } else {
        const char *base = strrchr(path, '/');
        snprintf(b->name, sizeof b->name, "%s", base ? base + 1 : path);
    }
    cJSON_Delete(root);
    return 0;
fail:
    rg_baseline_free(b);
    cJSON_Delete(root);
    return 1;
}
