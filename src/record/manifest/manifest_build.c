/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manifest_build.c -- a run as KernelIndex objects (the public record's
 * envelope, manifest.h), and an old ManifestBundle file converted to it.
 *
 *   {"run": BenchmarkRun, "protocol": BenchmarkProtocol, "environment":
 *    ExecutionEnvironment, "workload": Workload, "implementation": Implementation}
 *
 * Every object is {apiVersion, kind, metadata, spec}; the run's spec names the
 * other four by digest (digest of {apiVersion, kind, spec}), and carries the
 * comparison key by the rule in manifest.h. ropegrad's detail (per-workload
 * samples, correctness, SOL inputs) sits in run.spec.ropegrad, measurement
 * options in protocol.spec.measurement, build flags and source digest in the
 * implementation: names that do not collide with KernelIndex's.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "manifest_parts.h"
#include "rg_util.h"

/* The timed calls' checks (src/harness/timed_sets.c), as the record states them. */
#define RG_TIMED_CHECKS_TEXT                                                                                   \
    "timed calls: 2 to 8 input sets of their own values in rotation, the output filled with wrong values "    \
    "before every call; a random one of every 8 timed iterations and the last checked against its set's "      \
    "reference, inputs included"

#define RG_FAMILY "ropegrad_sol_execbench"

/* ---- small cJSON helpers ------------------------------------------------------- */

/* A number, or null for NAN/Inf (JSON has no other way to say "unknown"). */
static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static void add_num(cJSON *o, const char *k, double v) { cJSON_AddItemToObject(o, k, num_or_null(v)); }
static void add_str(cJSON *o, const char *k, const char *v) { cJSON_AddItemToObject(o, k, cJSON_CreateString(v ? v : "")); }
/* Clocks and other "-1 when unknown" integers. */
static void add_int_or_null(cJSON *o, const char *k, long long v)
{
    cJSON_AddItemToObject(o, k, v >= 0 ? cJSON_CreateNumber((double)v) : cJSON_CreateNull());
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n) return 0;
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ---- the objects ------------------------------------------------------------------ */

/* {apiVersion, kind, metadata{name, title}, spec}; takes spec. */
static cJSON *kobject(int role, const char *name, const char *title, cJSON *spec)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "apiVersion", RG_API_VERSION);
    add_str(o, "kind", rg_role_kind(role));
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    add_str(md, "name", name);
    add_str(md, "title", title);
    cJSON_AddItemToObject(o, "spec", spec);
    return o;
}

static cJSON *protocol_spec(const rg_run_result *r)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *h = cJSON_AddObjectToObject(p, "harness");
    add_str(h, "name", "ropegrad");
    add_str(h, "version", RG_ROPEGRAD_VERSION);
    cJSON *c = cJSON_AddObjectToObject(p, "correctness");
    if (r->ground_truth == RG_TRUTH_FLOAT32_REFERENCE)
        add_str(c, "reference", "float32: the definition's reference in float32 arithmetic, as the official evaluator "
                                "runs it on the GPU (src/harness/ground_truth.c)");
    else add_str(c, "reference", r->reference[0] ? r->reference : "float64 (ropegrad_rope_backward_reference, libm sin/cos)");
    add_str(c, "groundTruth", rg_ground_truth_name(r->ground_truth));
    if (r->ground_truth != RG_TRUTH_FLOAT64)
        add_str(c, "yardstick", "float64: round 0's output checked against it too, reported beside "
                                "(run.spec.ropegrad.workloads[].float64_yardstick)");
    cJSON_AddNumberToObject(c, "rounds", r->rounds);
    add_str(c, "roundInputs", "round r: the generator with seed + r * 0x9E3779B97F4A7C15 (mod 2^64), written into "
                              "the same buffers");
    add_str(c, "rewardHackChecks",
            strcmp(r->backend, "cuda")
                ? "output poisoned before every call; fails a call that writes no output, writes into an input, or "
                  "repeats the previous round's output bit for bit on different inputs; one call after the timed "
                  "iterations must pass again; " RG_TIMED_CHECKS_TEXT
                : "output poisoned before every call (the same device buffers every round; output and inputs copied "
                  "back); fails a call that writes no output, writes into an input, or repeats the previous round's "
                  "output bit for bit on different inputs; one call after the timed iterations must pass again; "
                  "every timed iteration must launch the same kernels (measurement.sameKernelsCheck); "
                  RG_TIMED_CHECKS_TEXT);
    add_str(c, "comparator", "ropegrad tolerance check (SOL-ExecBench rules)");
    add_str(c, "element", "ok when |out - ref| <= max_atol + max_rtol * |ref|");
    add_str(c, "workload", "correct when matched ratio >= required_matched_ratio and, if max_error_cap is set, "
                           "max |out - ref| <= max_error_cap");
    add_str(c, "failures", "any NaN/Inf in output or reference; an all-zero output where the reference is not");
    add_str(c, "tolerances", "per workload, from the suite (the workload object)");
    add_str(c, "scoring", "a workload that fails correctness scores 0 and counts as not faster");
    cJSON *m = cJSON_AddObjectToObject(p, "measurement");
    add_str(m, "timer", r->timer);
    add_str(m, "primaryStatistic", "geomean");
    add_str(m, "perWorkloadStatistic", "median");
    add_str(m, "unit", "ns");
    cJSON_AddNumberToObject(m, "warmup", r->warmup);
    cJSON_AddNumberToObject(m, "iterations", r->iterations);
    add_str(m, "coldL2", r->cold_l2);
    if (!strcmp(r->backend, "cuda") && r->iterations > 0) {   /* the timing switches (protocol.c); absent: before them */
        add_str(m, "restage", rg_restage_name(r->restage));
        add_str(m, "span", rg_span_name(r->span));
        add_str(m, "sync", rg_sync_name(r->sync));
        add_str(m, "settle", rg_settle_name(r->settle));
        add_str(m, "sameKernelsCheck", r->same_kernels);
    }
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);   /* text: seeds beyond 2^53 survive */
    add_str(m, "seed", seed);
    add_str(m, "inputs", r->inputs);
    cJSON *cm = cJSON_AddObjectToObject(p, "comparability");
    add_str(cm, "family", RG_FAMILY);
    add_str(cm, "notes", "geomean of per-workload medians under ropegrad's SOL-ExecBench protocol. Comparable within one "
                         "definition and workload set, timer, statistic and device product (the comparison key). "
                         "Wall-clock CPU times and CUPTI GPU spans are not comparable.");
    return p;
}

static cJSON *environment_spec(const rg_env *e)
{
    cJSON *s = cJSON_CreateObject();
    cJSON *hw = cJSON_AddObjectToObject(s, "hardware");
    if (e->gpu_name[0]) {
        add_str(hw, "vendor", "nvidia");
        add_str(hw, "product", e->gpu_name);
        add_str(hw, "architecture", e->gpu_arch[0] ? e->gpu_arch : "unknown");
        cJSON_AddNumberToObject(hw, "smCount", e->gpu_sm_count);
        cJSON_AddNumberToObject(hw, "l2Bytes", (double)e->gpu_l2_bytes);
        if (e->gpu_mem_bandwidth_gbps > 0) add_num(hw, "memBandwidthGBps", e->gpu_mem_bandwidth_gbps);
        cJSON *ck = cJSON_AddObjectToObject(hw, "clocksMHz");
        add_int_or_null(ck, "smStart", e->sm_clock_mhz_start);
        add_int_or_null(ck, "smEnd", e->sm_clock_mhz_end);
        add_int_or_null(ck, "memStart", e->mem_clock_mhz_start);
        add_int_or_null(ck, "memEnd", e->mem_clock_mhz_end);
    } else {
        add_str(hw, "vendor", "cpu");
        add_str(hw, "product", e->cpu_model);
        add_str(hw, "architecture", e->cpu_isa);
    }
    cJSON *cpu = cJSON_AddObjectToObject(hw, "cpu");
    add_str(cpu, "model", e->cpu_model);
    cJSON_AddNumberToObject(cpu, "threads", e->cpu_threads);
    add_str(cpu, "isa", e->cpu_isa);
    if (e->load_known) {   /* CPU runs: how busy the machine was (not part of the comparison key) */
        cJSON_AddNumberToObject(cpu, "loadAverage1m", e->load_avg_1m);
        cJSON_AddNumberToObject(cpu, "onlineCpus", e->load_cpus);
    }
    if (e->cpu_share.known) {   /* CPU runs: what other processes took over the run (cpu_share.h) */
        cJSON_AddNumberToObject(cpu, "otherCpus", e->cpu_share.other_cpus);
        cJSON_AddNumberToObject(cpu, "stealCpus", e->cpu_share.steal_cpus);
        cJSON_AddNumberToObject(cpu, "shareSeconds", e->cpu_share.span_s);
    }
    cJSON *sw = cJSON_AddObjectToObject(s, "software");
    cJSON *lib = cJSON_AddObjectToObject(sw, "libraries");
    add_str(lib, "ropegrad", e->ropegrad_version);
    if (e->cuda_runtime_version[0]) add_str(lib, "cudaRuntime", e->cuda_runtime_version);
    if (e->driver_version[0]) add_str(lib, "driver", e->driver_version);
    add_str(sw, "os", e->os);
    cJSON *host = cJSON_AddObjectToObject(s, "host");
    add_str(host, "hostname", e->hostname);
    return s;
}

static const rg_workload *suite_workload(const rg_suite *s, int index)
{
    for (size_t i = 0; i < s->n_workloads; i++)
        if (s->workloads[i].index == index) return &s->workloads[i];
    return NULL;
}

cJSON *rg_manifest_workload_entry(const rg_workload *sw, const char *const *axis_names)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", sw->index);
    add_str(o, "uuid", sw->uuid);
    cJSON *ax = cJSON_AddObjectToObject(o, "axes");
    cJSON_AddNumberToObject(ax, "batch_size", (double)sw->batch_size);
    cJSON_AddNumberToObject(ax, "seq_len", (double)sw->seq_len);
    cJSON_AddNumberToObject(ax, "head_dim", (double)sw->head_dim);
    for (int a = 0; axis_names && a < RG_OP_MAX_AXES && axis_names[a]; a++)   /* the op's named axes */
        cJSON_AddNumberToObject(ax, axis_names[a], (double)sw->axes[a]);
    add_num(o, "attention_scaling", sw->attention_scaling);
    cJSON *t = cJSON_AddObjectToObject(o, "tolerance");
    add_num(t, "max_atol", sw->max_atol);
    add_num(t, "max_rtol", sw->max_rtol);
    add_num(t, "required_matched_ratio", sw->required_matched_ratio);
    add_num(t, "max_error_cap", sw->max_error_cap);
    return o;
}

static cJSON *workload_spec(const rg_run_result *r, const rg_suite *s, char *err, size_t errlen)
{
    cJSON *w = cJSON_CreateObject();
    add_str(w, "definition", r->suite);
    cJSON *list = cJSON_AddArrayToObject(w, "workloads");
    for (size_t i = 0; i < r->n_workloads; i++) {
        const rg_workload_result *wr = &r->workloads[i];
        const rg_workload *sw = suite_workload(s, wr->index);
        if (!sw || strcmp(sw->uuid, wr->uuid)) {
            snprintf(err, errlen, "workload %d (%s) of the run is not in suite %s", wr->index, wr->uuid, s->name);
            cJSON_Delete(w);
            return NULL;
        }
        cJSON_AddItemToArray(list, rg_manifest_workload_entry(sw, r->axis_names));
    }
    return w;
}

static cJSON *implementation_spec(const char *backend, int kernel, const char *kernel_name, const char *version,
                                  const char *sources, const char *flags)
{
    cJSON *s = cJSON_CreateObject();
    add_str(s, "name", "ropegrad");
    add_str(s, "version", version);
    add_str(s, "backend", backend);
    cJSON_AddNumberToObject(s, "kernel", kernel);
    add_str(s, "kernelName", kernel_name);
    add_str(s, "sources", sources);
    add_str(s, "buildFlags", flags);
    return s;
}

/* The revision this binary was built from, when it was built from a git checkout. */
static void add_revision(cJSON *impl_spec)
{
    const char *commit = rg_build_git_commit();
    if (!impl_spec || !commit[0]) return;
    cJSON *rev = cJSON_AddObjectToObject(impl_spec, "revision");
    if (!rev) return;
    add_str(rev, "vcs", "git");
    add_str(rev, "commit", commit);
    if (rg_build_git_dirty() >= 0) cJSON_AddBoolToObject(rev, "dirty", rg_build_git_dirty());
}

int rg_manifest_sol_from_figures(const char *gpu, const rg_suite *s)
{
    return gpu && gpu[0] && s && s->have_figures && s->figures_gpu[0] && contains_ci(gpu, s->figures_gpu);
}

/* The run spec's SOL block, per-workload figures and sourceNative.metrics. */
typedef struct sol_inputs {
    int mode_figures;       /* T_SOL and T_b from the suite's figures file */
    double tbps;            /* datasheet bandwidth when not, 0 when unknown */
    const char *product;
} sol_inputs;

static cJSON *sol_block(const rg_run_result *r, const rg_suite *s, const rg_baseline *b, sol_inputs *si)
{
    memset(si, 0, sizeof *si);
    const char *gpu = r->env.gpu_name;
    if (rg_manifest_sol_from_figures(gpu, s)) si->mode_figures = 1;
    else if (gpu[0]) si->tbps = rg_datasheet_bandwidth_tbps(gpu, &si->product);
    cJSON *src = cJSON_CreateObject();
    char detail[512];
    if (si->mode_figures) {
        add_str(src, "tSol", "suite-figures");
        snprintf(detail, sizeof detail, "%.60s figures from %.300s", s->figures_gpu, base_name(s->figures_file));
        add_str(src, "tSolDetail", detail);
    } else if (si->tbps > 0) {
        add_str(src, "tSol", "datasheet");
        snprintf(detail, sizeof detail, "bytes any kernel must move / %s datasheet bandwidth %g TB/s", si->product,
                 si->tbps);
        add_str(src, "tSolDetail", detail);
        add_num(src, "datasheetTBps", si->tbps);
    } else {
        add_str(src, "tSol", "none");
        add_str(src, "tSolDetail", gpu[0] ? "GPU not in the datasheet table" : "CPU run: no speed-of-light figure");
    }
    if (b) {
        add_str(src, "baseline", "file");
        cJSON *bf = cJSON_AddObjectToObject(src, "baselineFile");
        add_str(bf, "name", b->name);
        add_str(bf, "file", base_name(b->file));
        add_str(bf, "format", b->format);
        add_str(bf, "digest", b->digest);
    } else {
        add_str(src, "baseline", si->mode_figures ? "suite-figures" : "none");
    }
    if (s->have_figures) {
        add_str(src, "figuresFile", base_name(s->figures_file));
        add_str(src, "figuresGpu", s->figures_gpu);
    }
    return src;
}

/* metrics from the per-workload rows (the same sums verify makes again). */
cJSON *rg_manifest_metrics(const cJSON *rows, double latency_ms)
{
    double sol_sum = 0, sp_sum = 0;
    int n_sol = 0, n_b = 0, fast = 0;
    for (const cJSON *w = rows ? rows->child : NULL; w; w = w->next) {
        double score = rg_json_num(w, "sol_score"), sp = rg_json_num(w, "speedup");
        if (!isnan(score)) sol_sum += score, n_sol++;
        if (!isnan(sp)) {
            sp_sum += sp, n_b++;
            if (cJSON_IsTrue(rg_json_get(w, "pass")) && rg_json_num(w, "t_k_ns") < rg_json_num(w, "t_b_ns")) fast++;
        }
    }
    cJSON *m = cJSON_CreateObject();
    if (n_sol) add_num(m, "sol_score", sol_sum / n_sol);
    add_num(m, "latency_ms", latency_ms);
    if (n_b) {
        add_num(m, "avg_speedup", sp_sum / n_b);
        cJSON_AddNumberToObject(m, "fast_1_count", fast);
        cJSON_AddNumberToObject(m, "fast_1_total", n_b);
    }
    return m;
}

void rg_manifest_row_stats(const cJSON *rows, double *mean, double *geomean)
{
    double s = 0, l = 0;
    int n = 0;
    for (const cJSON *w = rows ? rows->child : NULL; w; w = w->next) {
        double median = rg_json_num(w, "median");
        if (!(median > 0)) continue;   /* a failed workload: not timed */
        s += median;
        l += log(median);
        n++;
    }
    *mean = n ? s / n : NAN;
    *geomean = n ? exp(l / n) : NAN;
}

/* ---- assembling: digests, references, the key -------------------------------------- */

typedef struct parts {
    cJSON *spec[RG_N_ROLES];
    char name[RG_N_ROLES][128], title[RG_N_ROLES][256];
} parts;

static void parts_free(parts *p)
{
    for (int k = 0; k < RG_N_ROLES; k++) cJSON_Delete(p->spec[k]), p->spec[k] = NULL;
}

/* Wraps the five specs, computes the digests of the four the run names and
 * the comparison key, and puts them into the run spec (before its ropegrad
 * detail, so the KernelIndex members read first). Consumes p. */
static cJSON *assemble(parts *p, char *err, size_t errlen)
{
    static const char *const ref[RG_N_ROLES] = {NULL, "protocolDigest", "environmentDigest", "workloadDigest",
                                                "implementationDigest"};
    cJSON *doc = cJSON_CreateObject();
    cJSON *obj[RG_N_ROLES] = {0};
    for (int k = 1; k < RG_N_ROLES; k++) {
        obj[k] = kobject(k, p->name[k], p->title[k], p->spec[k]);
        p->spec[k] = NULL;
    }
    cJSON *run = p->spec[RG_ROLE_RUN];
    p->spec[RG_ROLE_RUN] = NULL;
    cJSON *detail = cJSON_DetachItemFromObjectCaseSensitive(run, "ropegrad");
    for (int k = 1; k < RG_N_ROLES; k++) {
        char d[RG_DIGEST_LEN];
        if (rg_object_digest(obj[k], d, err, errlen)) goto fail;
        add_str(run, ref[k], d);
    }
    obj[RG_ROLE_RUN] = kobject(RG_ROLE_RUN, p->name[0], p->title[0], run);
    run = NULL;
    for (int k = 0; k < RG_N_ROLES; k++) {
        cJSON_AddItemToObject(doc, rg_role_name(k), obj[k]);
        obj[k] = NULL;
    }
    rg_manifest m;
    char key[RG_DIGEST_LEN];
    if (rg_manifest_read(doc, &m, err, errlen)) goto fail;
    int rc = rg_comparison_key(&m, key, err, errlen);
    rg_manifest_free(&m);
    if (rc) goto fail;
    cJSON *rspec = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "run"), "spec");
    add_str(rspec, "comparisonKey", key);
    if (detail) cJSON_AddItemToObject(rspec, "ropegrad", detail);
    return doc;
fail:
    cJSON_Delete(detail);
    cJSON_Delete(run);
    for (int k = 0; k < RG_N_ROLES; k++) cJSON_Delete(obj[k]);
    cJSON_Delete(doc);
    return NULL;
}

cJSON *rg_manifest_assemble(cJSON *spec[RG_N_ROLES], const char *const name[RG_N_ROLES],
                            const char *const title[RG_N_ROLES], char *err, size_t errlen)
{
    parts p = {0};
    for (int k = 0; k < RG_N_ROLES; k++) {
        p.spec[k] = spec[k];
        spec[k] = NULL;
        snprintf(p.name[k], sizeof p.name[k], "%s", name[k] ? name[k] : "");
        snprintf(p.title[k], sizeof p.title[k], "%s", title[k] ? title[k] : "");
    }
    for (int k = 0; k < RG_N_ROLES; k++)
        if (!p.spec[k]) {
            snprintf(err, errlen, "manifest: its %s part is missing", rg_role_name(k));
            parts_free(&p);
            return NULL;
        }
    return assemble(&p, err, errlen);
}

static void names_for(parts *p, const char *backend, int kernel, const char *stamp_src, const char *def,
                      const char *product)
{
    char stamp[32];
    size_t k = 0;
    for (const char *c = stamp_src; *c && k + 1 < sizeof stamp; c++)
        if (isalnum((unsigned char)*c)) stamp[k++] = (char)tolower((unsigned char)*c);
    stamp[k] = 0;
    snprintf(p->name[0], sizeof p->name[0], "ropegrad-%.15s-k%d-%s", backend, kernel, stamp);
    snprintf(p->title[0], sizeof p->title[0], "ropegrad %.15s kernel %d · %.100s · %.100s", backend, kernel, def,
             product);
    snprintf(p->name[RG_ROLE_PROTOCOL], 128, "ropegrad-protocol");
    snprintf(p->title[RG_ROLE_PROTOCOL], 256, "ropegrad SOL-ExecBench protocol");
    snprintf(p->name[RG_ROLE_ENVIRONMENT], 128, "environment");
    snprintf(p->title[RG_ROLE_ENVIRONMENT], 256, "%.200s", product);
    snprintf(p->name[RG_ROLE_WORKLOAD], 128, "%.100s", def);
    snprintf(p->title[RG_ROLE_WORKLOAD], 256, "workloads of %.200s", def);
    snprintf(p->name[RG_ROLE_IMPLEMENTATION], 128, "ropegrad-%.15s-k%d", backend, kernel);
    snprintf(p->title[RG_ROLE_IMPLEMENTATION], 256, "ropegrad %.15s kernel %d", backend, kernel);
}

/* A plugin run's names: the plugin's own, not "ropegrad kernel 0". */
static void plugin_names(parts *p, const rg_run_result *r)
{
    const char *product = r->env.gpu_name[0] ? r->env.gpu_name : r->env.cpu_model;
    snprintf(p->title[0], sizeof p->title[0], "%.63s (%.15s) · %.80s · %.80s", r->impl->label, r->backend, r->suite,
             product);
    snprintf(p->name[RG_ROLE_IMPLEMENTATION], 128, "plugin-%.15s", r->backend);
    snprintf(p->title[RG_ROLE_IMPLEMENTATION], 256, "%.63s (%.15s)", r->impl->label, r->backend);
}

/* ---- from a run ------------------------------------------------------------------------ */

/* Nothing timed is a run too (its primary latency null): a failed
 * workload is not timed, and `check` times nothing (iterations 0). A
 * workload that passed a timed protocol must carry its timing. 0, or 1 with err. */
static int check_timed(const rg_run_result *r, char *err, size_t errlen)
{
    for (size_t i = 0; i < r->n_workloads; i++) {
        const rg_workload_result *w = &r->workloads[i];
        if (!w->check.pass || r->iterations == 0) continue;
        if (!w->timed || !(w->time_ns.median > 0) || !isfinite(w->time_ns.median)) {
            snprintf(err, errlen, "manifest: workload %d passed but was not timed (a timed run records its timings)",
                     w->index);
            return 1;
        }
    }
    return 0;
}

/* Workload w's row of run.spec.ropegrad.workloads: its times and samples,
 * its check, and its SOL figures (T_SOL from the suite's figures or the
 * datasheet bandwidth, T_b from them or the baseline file b). */
static cJSON *workload_row(const rg_workload_result *w, const sol_inputs *si, const rg_baseline *b)
{
    const int timed = w->timed && w->time_ns.median > 0;
    double t_k = timed ? w->time_ns.median : NAN, t_sol = NAN, t_b = NAN;
    if (si->mode_figures) {
        t_sol = w->sol_ms * 1e6;
        t_b = w->baseline_ms * 1e6;
    } else if (si->tbps > 0) {
        t_sol = w->bytes / (si->tbps * 1e3);   /* bytes / (TB/s) in ns */
    }
    if (b) t_b = rg_baseline_lookup(b, w->index);
    double score = rg_sol_score(t_k, t_sol, t_b);
    if (!isnan(score) && !w->check.pass) score = 0;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", w->index);
    add_str(o, "uuid", w->uuid);
    add_num(o, "bytes", w->bytes);
    add_num(o, "median", t_k);
    add_num(o, "mean", timed ? w->time_ns.mean : NAN);
    add_num(o, "min", timed ? w->time_ns.min : NAN);
    add_num(o, "max", timed ? w->time_ns.max : NAN);
    add_num(o, "stddev", timed ? w->time_ns.stddev : NAN);
    add_num(o, "gbps", w->bytes / t_k);
    cJSON *smp = cJSON_AddArrayToObject(o, "samples_ns");
    for (int k = 0; k < w->n_samples && w->samples_ns; k++) cJSON_AddItemToArray(smp, num_or_null(w->samples_ns[k]));
    cJSON_AddBoolToObject(o, "pass", w->check.pass);
    add_num(o, "max_abs_err", w->check.max_abs_err);
    add_num(o, "max_rel_err", w->check.max_rel_err);
    add_num(o, "matched_ratio", w->check.matched_ratio);
    cJSON_AddNumberToObject(o, "n", (double)w->check.n);
    cJSON_AddNumberToObject(o, "n_matched", (double)w->check.n_matched);
    cJSON_AddNumberToObject(o, "n_nonfinite", (double)w->check.n_nonfinite);
    add_str(o, "reason", w->check.reason);
    cJSON_AddNumberToObject(o, "rounds", w->rounds_run);
    if (w->reward_hack) cJSON_AddBoolToObject(o, "reward_hack", 1);
    if (w->have_yardstick) {
        cJSON *y = cJSON_AddObjectToObject(o, "float64_yardstick");
        cJSON_AddBoolToObject(y, "pass", w->yardstick.pass);
        add_num(y, "max_abs_err", w->yardstick.max_abs_err);
        add_num(y, "max_rel_err", w->yardstick.max_rel_err);
        add_num(y, "matched_ratio", w->yardstick.matched_ratio);
    }
    add_num(o, "t_k_ns", t_k);
    add_num(o, "t_sol_ns", t_sol);
    add_num(o, "t_b_ns", t_b);
    add_num(o, "sol_score", score);
    add_num(o, "speedup", isfinite(t_b) && t_k > 0 ? t_b / t_k : NAN);
    return o;
}

/* run.spec: status, timing, sourceNative and ropegrad's detail (sol, rows). */
static cJSON *run_spec(const rg_run_result *r, cJSON *rows, cJSON *sol)
{
    cJSON *run = cJSON_CreateObject();
    double mean, geomean;
    rg_manifest_row_stats(rows, &mean, &geomean);
    add_str(run, "status", r->passed == r->total && r->total > 0 ? "passed" : "failed");
    cJSON *tm = cJSON_AddObjectToObject(run, "timing");
    cJSON *lat = cJSON_AddObjectToObject(tm, "latencyNs");
    add_num(lat, "geomean", geomean);
    add_num(lat, "mean", mean);
    add_str(tm, "primaryStatistic", "geomean");
    add_str(run, "observedAt", r->started_at);
    cJSON *sn = cJSON_AddObjectToObject(run, "sourceNative");
    add_str(sn, "source", "ropegrad");
    add_str(sn, "benchmark", r->suite);
    cJSON_AddItemToObject(sn, "metrics", rg_manifest_metrics(rows, geomean / 1e6));
    cJSON *d = cJSON_AddObjectToObject(run, "ropegrad");
    cJSON *corr = cJSON_AddObjectToObject(d, "correctness");
    cJSON_AddNumberToObject(corr, "passed", r->passed);
    cJSON_AddNumberToObject(corr, "total", r->total);
    cJSON_AddItemToObject(d, "sol", sol);
    cJSON_AddItemToObject(d, "workloads", rows);
    return run;
}

cJSON *rg_manifest_build(const rg_run_result *r, const rg_suite *s, const rg_baseline *b, char *err,
                         size_t errlen)
{
    if (!r || !s) {
        snprintf(err, errlen, "manifest: no run or no suite");
        return NULL;
    }
    if (r->n_workloads == 0 || !r->workloads) {
        snprintf(err, errlen, "manifest: the run has no workloads");
        return NULL;
    }
    if (check_timed(r, err, errlen)) return NULL;
    parts p = {0};
    p.spec[RG_ROLE_PROTOCOL] = protocol_spec(r);
    p.spec[RG_ROLE_ENVIRONMENT] = environment_spec(&r->env);
    p.spec[RG_ROLE_WORKLOAD] = workload_spec(r, s, err, errlen);
    if (r->impl) {
        p.spec[RG_ROLE_IMPLEMENTATION] = rg_impl_spec(r);
    } else {
        p.spec[RG_ROLE_IMPLEMENTATION] = implementation_spec(r->backend, r->kernel, r->kernel_name, RG_ROPEGRAD_VERSION,
                                                             rg_implementation_digest(), r->env.build_flags);
        add_revision(p.spec[RG_ROLE_IMPLEMENTATION]);
    }
    if (!p.spec[RG_ROLE_IMPLEMENTATION]) snprintf(err, errlen, "manifest: the plugin's files were not hashed");
    if (!p.spec[RG_ROLE_WORKLOAD] || !p.spec[RG_ROLE_IMPLEMENTATION]) {
        parts_free(&p);
        return NULL;
    }
    sol_inputs si;
    cJSON *sol = sol_block(r, s, b, &si);
    cJSON *rows = cJSON_CreateArray();
    for (size_t i = 0; i < r->n_workloads; i++) cJSON_AddItemToArray(rows, workload_row(&r->workloads[i], &si, b));
    p.spec[RG_ROLE_RUN] = run_spec(r, rows, sol);
    names_for(&p, r->backend, r->kernel, r->started_at, r->suite, r->env.gpu_name[0] ? r->env.gpu_name : r->env.cpu_model);
    if (r->impl) plugin_names(&p, r);
    return assemble(&p, err, errlen);
}

/* ---- an old ManifestBundle, converted ---------------------------------------------------- */

static cJSON *dup_or_null(const cJSON *v) { return v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull(); }

static const cJSON *legacy_spec(const cJSON *old, const char *kind)
{
    const cJSON *items = rg_json_get(old, "items");
    for (const cJSON *it = cJSON_IsArray(items) ? items->child : NULL; it; it = it->next) {
        const char *k = rg_json_str(it, "kind");
        if (k && !strcmp(k, kind) && cJSON_IsObject(rg_json_get(it, "spec"))) return rg_json_get(it, "spec");
    }
    return NULL;
}

/* ---- the old rule, for conversion only ---------------------------------------------------- */

/* An old bundle's own digests: each item's metadata.digest over its spec, the
 * run's protocol/environment/workload references and comparison key. */
int rg_legacy_verify(const cJSON *old, char *err, size_t errlen)
{
    static const char *const kinds[3] = {"BenchmarkRun", "BenchmarkProtocol", "ExecutionEnvironment"};
    char d[3][RG_DIGEST_LEN], e2[RG_ERRLEN];
    const cJSON *items = rg_json_get(old, "items");
    for (int k = 0; k < 3; k++) {
        const cJSON *item = NULL;
        int count = 0;
        for (const cJSON *it = cJSON_IsArray(items) ? items->child : NULL; it; it = it->next) {
            const char *ik = rg_json_str(it, "kind");
            if (ik && !strcmp(ik, kinds[k])) item = it, count++;
        }
        const cJSON *spec = rg_json_get(item, "spec");
        const char *rec = rg_json_str(rg_json_get(item, "metadata"), "digest");
        if (count != 1 || !cJSON_IsObject(spec) || !rec) {
            snprintf(err, errlen, "old manifest: no single %s item with a spec and metadata.digest", kinds[k]);
            return 2;
        }
        if (rg_digest_json(spec, d[k], e2, sizeof e2)) {
            snprintf(err, errlen, "old manifest: %s spec: %s", kinds[k], e2);
            return 2;
        }
        if (strcmp(rec, d[k])) {
            snprintf(err, errlen, "old manifest: %s spec digest mismatch (it was changed after it was made)", kinds[k]);
            return 1;
        }
    }
    const cJSON *run = legacy_spec(old, "BenchmarkRun");
    char dw[RG_DIGEST_LEN];
    const char *pr = rg_json_str(run, "protocolDigest"), *er = rg_json_str(run, "environmentDigest"),
               *wr = rg_json_str(run, "workloadDigest");
    if (!pr || !er || !wr || !cJSON_IsObject(rg_json_get(run, "workload")) ||
        rg_digest_json(rg_json_get(run, "workload"), dw, e2, sizeof e2)) {
        snprintf(err, errlen, "old manifest: the run lacks its digests or workload");
        return 2;
    }
    if (strcmp(pr, d[1]) || strcmp(er, d[2]) || strcmp(wr, dw)) {
        snprintf(err, errlen, "old manifest: a digest the run names does not match (it was changed after it was made)");
        return 1;
    }
    return 0;
}

/* An old bundle's BenchmarkProtocol spec as the protocol object's spec. */
static cJSON *legacy_protocol(const cJSON *proto)
{
    cJSON *ps = cJSON_CreateObject();
    cJSON_AddItemToObject(ps, "harness", dup_or_null(rg_json_get(proto, "harness")));
    cJSON *c = cJSON_Duplicate(rg_json_get(proto, "correctness"), 1);
    if (!c) c = cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(c, "comparator");
    cJSON_AddItemToObject(ps, "correctness", c);
    cJSON *ms = cJSON_AddObjectToObject(ps, "measurement");
    add_str(ms, "timer", rg_json_str_or_empty(proto, "timer"));
    add_str(ms, "primaryStatistic", "geomean");
    add_str(ms, "perWorkloadStatistic", "median");
    add_str(ms, "unit", "ns");
    cJSON_AddItemToObject(ms, "warmup", dup_or_null(rg_json_get(proto, "warmup")));
    cJSON_AddItemToObject(ms, "iterations", dup_or_null(rg_json_get(proto, "iterations")));
    add_str(ms, "coldL2", rg_json_str_or_empty(proto, "coldL2"));
    const cJSON *seed = rg_json_get(proto, "seed");
    char sb[32] = "";
    if (cJSON_IsNumber(seed) && seed->valuedouble >= 0 && seed->valuedouble < 1.8e19)
        snprintf(sb, sizeof sb, "%llu", (unsigned long long)seed->valuedouble);
    else snprintf(sb, sizeof sb, "%.31s", rg_json_str_or_empty(proto, "seed"));
    add_str(ms, "seed", sb);
    add_str(ms, "inputs", rg_json_str_or_empty(proto, "inputs"));
    cJSON *cm = cJSON_AddObjectToObject(ps, "comparability");
    add_str(cm, "family", RG_FAMILY);
    add_str(cm, "notes", rg_json_str_or_empty(rg_json_get(proto, "comparability"), "notes"));
    return ps;
}

/* An old bundle's ExecutionEnvironment spec as the environment object's spec. */
static cJSON *legacy_environment(const cJSON *env)
{
    const cJSON *gpu = rg_json_get(env, "gpu"), *cpu = rg_json_get(env, "cpu"), *rgv = rg_json_get(env, "ropegrad");
    cJSON *es = cJSON_CreateObject();
    cJSON *hw = cJSON_AddObjectToObject(es, "hardware");
    if (cJSON_IsObject(gpu)) {
        add_str(hw, "vendor", "nvidia");
        add_str(hw, "product", rg_json_str_or_empty(gpu, "product"));
        add_str(hw, "architecture", rg_json_str(gpu, "architecture") ? rg_json_str(gpu, "architecture") : "unknown");
        cJSON_AddItemToObject(hw, "smCount", dup_or_null(rg_json_get(gpu, "smCount")));
        cJSON_AddItemToObject(hw, "l2Bytes", dup_or_null(rg_json_get(gpu, "l2Bytes")));
        if (cJSON_IsNumber(rg_json_get(gpu, "memBandwidthGBps")))
            cJSON_AddItemToObject(hw, "memBandwidthGBps", dup_or_null(rg_json_get(gpu, "memBandwidthGBps")));
        cJSON_AddItemToObject(hw, "clocksMHz", dup_or_null(rg_json_get(gpu, "clocksMHz")));
    } else {
        add_str(hw, "vendor", "cpu");
        add_str(hw, "product", rg_json_str_or_empty(cpu, "model"));
        add_str(hw, "architecture", rg_json_str_or_empty(cpu, "isa"));
    }
    cJSON_AddItemToObject(hw, "cpu", dup_or_null(cpu));
    cJSON *sw = cJSON_AddObjectToObject(es, "software");
    cJSON *lib = cJSON_AddObjectToObject(sw, "libraries");
    add_str(lib, "ropegrad", rg_json_str_or_empty(rgv, "version"));
    if (rg_json_str(gpu, "cudaRuntime")) add_str(lib, "cudaRuntime", rg_json_str(gpu, "cudaRuntime"));
    if (rg_json_str(gpu, "driver")) add_str(lib, "driver", rg_json_str(gpu, "driver"));
    add_str(sw, "os", rg_json_str_or_empty(env, "os"));
    cJSON *host = cJSON_AddObjectToObject(es, "host");
    add_str(host, "hostname", rg_json_str_or_empty(env, "hostname"));
    return es;
}

/* The old run's three per-workload lists (timing, correctness,
 * sourceNative) merged into one row each. */
static cJSON *legacy_rows(const cJSON *run)
{
    const cJSON *osn = rg_json_get(run, "sourceNative");
    const cJSON *tm = rg_json_get(run, "timing"), *corr = rg_json_get(run, "correctness");
    cJSON *rows = cJSON_CreateArray();
    const cJSON *tw = rg_json_get(tm, "workloads"), *per = rg_json_get(osn, "perWorkload"),
                *cw = rg_json_get(corr, "workloads");
    const cJSON *pw = cJSON_IsArray(per) ? per->child : NULL, *kw = cJSON_IsArray(cw) ? cw->child : NULL;
    for (const cJSON *t = cJSON_IsArray(tw) ? tw->child : NULL; t; t = t->next) {
        cJSON *o = cJSON_Duplicate(t, 1);
        for (const cJSON *x = kw ? kw->child : NULL; x; x = x->next)
            if (strcmp(x->string, "index")) cJSON_AddItemToObject(o, x->string, cJSON_Duplicate(x, 1));
        for (const cJSON *x = pw ? pw->child : NULL; x; x = x->next)
            if (strcmp(x->string, "index")) cJSON_AddItemToObject(o, x->string, cJSON_Duplicate(x, 1));
        cJSON_AddItemToArray(rows, o);
        if (pw) pw = pw->next;
        if (kw) kw = kw->next;
    }
    return rows;
}

/* The old run as the run object's spec, with its merged rows. */
static cJSON *legacy_run(const cJSON *run, cJSON *rows)
{
    const cJSON *osn = rg_json_get(run, "sourceNative");
    const cJSON *tm = rg_json_get(run, "timing"), *corr = rg_json_get(run, "correctness");
    cJSON *rs = cJSON_CreateObject();
    const cJSON *ss = rg_json_get(tm, "suite");
    add_str(rs, "status", rg_json_str_or_empty(run, "status"));
    cJSON *ntm = cJSON_AddObjectToObject(rs, "timing");
    cJSON *lat = cJSON_AddObjectToObject(ntm, "latencyNs");
    add_num(lat, "geomean", rg_json_num(ss, "geomean_of_medians"));
    add_num(lat, "mean", rg_json_num(ss, "mean_of_medians"));
    add_str(ntm, "primaryStatistic", "geomean");
    add_str(rs, "observedAt", rg_json_str_or_empty(run, "observedAt"));
    cJSON *sn = cJSON_AddObjectToObject(rs, "sourceNative");
    add_str(sn, "source", "ropegrad");
    add_str(sn, "benchmark", rg_json_str_or_empty(run, "definition"));
    cJSON_AddItemToObject(sn, "metrics", rg_manifest_metrics(rows, rg_json_num(ss, "geomean_of_medians") / 1e6));
    cJSON *d = cJSON_AddObjectToObject(rs, "ropegrad");
    cJSON *nc = cJSON_AddObjectToObject(d, "correctness");
    cJSON_AddItemToObject(nc, "passed", dup_or_null(rg_json_get(corr, "passed")));
    cJSON_AddItemToObject(nc, "total", dup_or_null(rg_json_get(corr, "total")));
    cJSON *sol = cJSON_Duplicate(rg_json_get(osn, "source"), 1);
    if (!sol) sol = cJSON_CreateObject();
    const cJSON *suite = rg_json_get(run, "suite");
    if (rg_json_str(suite, "figuresFile")) add_str(sol, "figuresFile", rg_json_str(suite, "figuresFile"));
    if (rg_json_str(suite, "figuresGpu")) add_str(sol, "figuresGpu", rg_json_str(suite, "figuresGpu"));
    cJSON_AddItemToObject(d, "sol", sol);
    cJSON_AddItemToObject(d, "workloads", rows);
    return rs;
}

cJSON *rg_manifest_convert_legacy(const cJSON *old, char *err, size_t errlen)
{
    if (!rg_manifest_is_legacy(old)) {
        snprintf(err, errlen, "not an old ManifestBundle manifest (kind ManifestBundle with items)");
        return NULL;
    }
    /* It must have been a sound record of the old format: re-checked by the
     * old rule first, so a conversion never launders a tampered file. */
    if (rg_legacy_verify(old, err, errlen)) return NULL;
    const cJSON *run = legacy_spec(old, "BenchmarkRun"), *proto = legacy_spec(old, "BenchmarkProtocol"),
                *env = legacy_spec(old, "ExecutionEnvironment");
    const cJSON *impl = rg_json_get(run, "implementation"), *rgv = rg_json_get(env, "ropegrad");
    const cJSON *gpu = rg_json_get(env, "gpu"), *cpu = rg_json_get(env, "cpu");
    parts p = {0};
    p.spec[RG_ROLE_PROTOCOL] = legacy_protocol(proto);
    p.spec[RG_ROLE_ENVIRONMENT] = legacy_environment(env);
    /* workload, implementation */
    p.spec[RG_ROLE_WORKLOAD] = cJSON_Duplicate(rg_json_get(run, "workload"), 1);
    p.spec[RG_ROLE_IMPLEMENTATION] = implementation_spec(
        rg_json_str_or_empty(impl, "backend"), rg_json_int(impl, "kernel"), rg_json_str_or_empty(impl, "kernelName"),
        rg_json_str_or_empty(impl, "version"), rg_json_str_or_empty(run, "implementationDigest"),
        rg_json_str_or_empty(rgv, "buildFlags"));
    p.spec[RG_ROLE_RUN] = legacy_run(run, legacy_rows(run));
    const char *product = cJSON_IsObject(gpu) ? rg_json_str_or_empty(gpu, "product") : rg_json_str_or_empty(cpu, "model");
    names_for(&p, rg_json_str_or_empty(impl, "backend"), rg_json_int(impl, "kernel"),
              rg_json_str_or_empty(run, "observedAt"), rg_json_str_or_empty(run, "definition"), product);
    for (int k = 0; k < RG_N_ROLES; k++) {
        if (!p.spec[k]) {
            snprintf(err, errlen, "old manifest: its %s part is missing", rg_role_name(k));
            parts_free(&p);
            return NULL;
        }
    }
    return assemble(&p, err, errlen);
}
