/*
 * manifest.c -- a run as three KernelIndex objects, and checking them again.
 *
 *   {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ManifestBundle",
 *    "metadata": {...}, "items": [BenchmarkRun, BenchmarkProtocol, ExecutionEnvironment]}
 *
 * Each item is {apiVersion, kind, metadata: {name, digest}, spec}; digest is
 * "sha256:" + hex SHA-256 of the RFC 8785 form of spec. The run's spec names
 * the other two by digest, so one changed figure anywhere breaks a digest:
 *
 *   workloadDigest       over spec.workload (definition + per workload: uuid, axes, tolerance)
 *   protocolDigest       over the BenchmarkProtocol spec
 *   environmentDigest    over the ExecutionEnvironment spec
 *   implementationDigest over the kernel sources + build flags (made at build time)
 *   comparisonKey        over {definition, workloadDigest, device, protocolDigest}:
 *                        runs with one key measured the same thing the same way
 *                        on the same product, so their times can be ranked.
 *
 * Figures that follow from others (per-workload statistics from the samples,
 * suite statistics from the medians, SOL scores and speedups from the times)
 * are recomputed by verify too, so an edit cannot hide behind a re-hash of
 * one spec alone without re-deriving everything consistently.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record.h"
#include "rg_util.h"

/* ---- small cJSON helpers ------------------------------------------------------- */

/* A number, or null for NAN/Inf (JSON has no other way to say "unknown"). */
static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static void add_num(cJSON *o, const char *k, double v) { cJSON_AddItemToObject(o, k, num_or_null(v)); }
static void add_str(cJSON *o, const char *k, const char *v) { cJSON_AddItemToObject(o, k, cJSON_CreateString(v ? v : "")); }
static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    cJSON_AddItemToObject(o, k, v && *v ? cJSON_CreateString(v) : cJSON_CreateNull());
}
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

/* The envelope the bundle and each item share: {apiVersion, kind, metadata};
 * the caller fills *metadata (members keep the order they are added in). */
static cJSON *new_object(const char *kind, cJSON **metadata)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "apiVersion", RG_API_VERSION);
    add_str(o, "kind", kind);
    *metadata = cJSON_AddObjectToObject(o, "metadata");
    return o;
}

static cJSON *make_item(const char *kind, const char *name, cJSON *spec, char digest[RG_DIGEST_LEN],
                        char *err, size_t errlen)
{
    if (rg_digest_json(spec, digest, err, errlen)) {
        cJSON_Delete(spec);
        return NULL;
    }
    cJSON *md;
    cJSON *it = new_object(kind, &md);
    add_str(md, "name", name);
    add_str(md, "digest", digest);
    cJSON_AddItemToObject(it, "spec", spec);
    return it;
}

/* The device a comparison key names: the GPU product, or the CPU model. */
static const char *env_device(const cJSON *env_spec)
{
    const cJSON *gpu = rg_json_get(env_spec, "gpu");
    if (cJSON_IsObject(gpu) && rg_json_str(gpu, "product")) return rg_json_str(gpu, "product");
    const cJSON *cpu = rg_json_get(env_spec, "cpu");
    return cJSON_IsObject(cpu) ? rg_json_str(cpu, "model") : NULL;
}

static int comparison_key(const char *definition, const char *workload_digest, const char *device,
                          const char *protocol_digest, char out[RG_DIGEST_LEN], char *err, size_t errlen)
{
    cJSON *k = cJSON_CreateObject();
    add_str(k, "definition", definition);
    add_str(k, "workloadDigest", workload_digest);
    add_str(k, "device", device);
    add_str(k, "protocolDigest", protocol_digest);
    int rc = rg_digest_json(k, out, err, errlen);
    cJSON_Delete(k);
    return rc;
}

/* ---- the three specs ------------------------------------------------------------ */

static cJSON *protocol_spec(const rg_run_result *r)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *h = cJSON_AddObjectToObject(p, "harness");
    add_str(h, "name", "ropegrad");
    add_str(h, "version", ropegrad_version());
    add_str(p, "definition", r->suite);
    add_str(p, "timer", r->timer);
    cJSON_AddNumberToObject(p, "warmup", r->warmup);
    cJSON_AddNumberToObject(p, "iterations", r->iterations);
    add_str(p, "coldL2", r->cold_l2);
    /* Seeds beyond 2^53 do not survive a JSON number: keep them as text. */
    if (r->seed <= (1ULL << 53)) {
        cJSON_AddNumberToObject(p, "seed", (double)r->seed);
    } else {
        char s[32];
        snprintf(s, sizeof s, "%llu", (unsigned long long)r->seed);
        add_str(p, "seed", s);
    }
    add_str(p, "inputs", r->inputs);
    cJSON *st = cJSON_AddObjectToObject(p, "statistics");
    add_str(st, "unit", "ns");
    add_str(st, "perWorkload", "median of the timed iterations");
    add_str(st, "suite", "geometric mean of the per-workload medians");
    cJSON *c = cJSON_AddObjectToObject(p, "correctness");
    add_str(c, "reference", r->reference[0] ? r->reference : "float64 (ropegrad_backward_reference, libm sin/cos)");
    add_str(c, "element", "ok when |out - ref| <= max_atol + max_rtol * |ref|");
    add_str(c, "workload", "correct when matched ratio >= required_matched_ratio and, if max_error_cap is set, "
                           "max |out - ref| <= max_error_cap");
    add_str(c, "failures", "any NaN/Inf in output or reference; an all-zero output where the reference is not");
    add_str(c, "tolerances", "per workload, from the suite (BenchmarkRun spec.workload)");
    add_str(c, "scoring", "a workload that fails correctness scores 0 and counts as not faster");
    cJSON *cm = cJSON_AddObjectToObject(p, "comparability");
    char fam[512];
    snprintf(fam, sizeof fam, "sol-execbench/%s/%s", r->suite, r->timer);
    add_str(cm, "family", fam);
    add_str(cm, "notes", "Times compare within one family, on one device product, over one workload set "
                         "(the comparison key). Absolute times drift between machines and runs: compare in one "
                         "run where possible. Wall-clock CPU times and CUPTI GPU kernel spans are not comparable.");
    return p;
}

static cJSON *environment_spec(const rg_env *e)
{
    cJSON *s = cJSON_CreateObject();
    add_str(s, "hostname", e->hostname);
    add_str(s, "os", e->os);
    cJSON *cpu = cJSON_AddObjectToObject(s, "cpu");
    add_str(cpu, "model", e->cpu_model);
    cJSON_AddNumberToObject(cpu, "threads", e->cpu_threads);
    add_str(cpu, "isa", e->cpu_isa);
    if (e->gpu_name[0]) {
        cJSON *g = cJSON_AddObjectToObject(s, "gpu");
        add_str(g, "product", e->gpu_name);
        add_str_or_null(g, "architecture", e->gpu_arch);
        cJSON_AddNumberToObject(g, "smCount", e->gpu_sm_count);
        cJSON_AddNumberToObject(g, "l2Bytes", (double)e->gpu_l2_bytes);
        add_num(g, "memBandwidthGBps", e->gpu_mem_bandwidth_gbps > 0 ? e->gpu_mem_bandwidth_gbps : NAN);
        add_str_or_null(g, "driver", e->driver_version);
        add_str_or_null(g, "cudaRuntime", e->cuda_runtime_version);
        cJSON *ck = cJSON_AddObjectToObject(g, "clocksMHz");
        add_int_or_null(ck, "smStart", e->sm_clock_mhz_start);
        add_int_or_null(ck, "smEnd", e->sm_clock_mhz_end);
        add_int_or_null(ck, "memStart", e->mem_clock_mhz_start);
        add_int_or_null(ck, "memEnd", e->mem_clock_mhz_end);
    } else {
        cJSON_AddNullToObject(s, "gpu");
    }
    cJSON *rg = cJSON_AddObjectToObject(s, "ropegrad");
    add_str(rg, "version", e->ropegrad_version);
    add_str(rg, "buildFlags", e->build_flags);
    return s;
}

static const rg_workload *suite_workload(const rg_suite *s, int index)
{
    for (size_t i = 0; i < s->n_workloads; i++)
        if (s->workloads[i].index == index) return &s->workloads[i];
    return NULL;
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
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", wr->index);
        add_str(o, "uuid", wr->uuid);
        cJSON *ax = cJSON_AddObjectToObject(o, "axes");
        cJSON_AddNumberToObject(ax, "batch_size", (double)wr->batch_size);
        cJSON_AddNumberToObject(ax, "seq_len", (double)wr->seq_len);
        cJSON_AddNumberToObject(ax, "head_dim", (double)wr->head_dim);
        add_num(o, "attention_scaling", sw->attention_scaling);
        cJSON *t = cJSON_AddObjectToObject(o, "tolerance");
        add_num(t, "max_atol", sw->max_atol);
        add_num(t, "max_rtol", sw->max_rtol);
        add_num(t, "required_matched_ratio", sw->required_matched_ratio);
        add_num(t, "max_error_cap", sw->max_error_cap);
        cJSON_AddItemToArray(list, o);
    }
    return w;
}

/* Suite statistics from per-workload medians: what the manifest defines as
 * its primary suite figure, recomputed the same way by verify. */
static void suite_stats(const double *med, size_t n, double *mean, double *geomean)
{
    double s = 0, l = 0;
    for (size_t i = 0; i < n; i++) {
        s += med[i];
        l += log(med[i]);
    }
    *mean = n ? s / (double)n : NAN;
    *geomean = n ? exp(l / (double)n) : NAN;
}

/* Per-workload SOL figures and the sourceNative block. */
typedef struct sol_inputs {
    int mode_figures;       /* T_SOL and T_b from the suite's figures file */
    double tbps;            /* datasheet bandwidth when not, 0 when unknown */
    const char *product;
} sol_inputs;

static cJSON *source_native(const rg_run_result *r, const rg_suite *s, const rg_baseline *b)
{
    sol_inputs si = {0};
    const char *gpu = r->env.gpu_name;
    if (gpu[0] && s->have_figures && contains_ci(gpu, s->figures_gpu)) si.mode_figures = 1;
    else if (gpu[0]) si.tbps = rg_datasheet_bandwidth_tbps(gpu, &si.product);

    cJSON *sn = cJSON_CreateObject();
    cJSON *src = cJSON_CreateObject();
    char detail[512];
    if (si.mode_figures) {
        add_str(src, "tSol", "suite-figures");
        snprintf(detail, sizeof detail, "%.60s figures from %.300s", s->figures_gpu, base_name(s->figures_file));
        add_str(src, "tSolDetail", detail);
    } else if (si.tbps > 0) {
        add_str(src, "tSol", "datasheet");
        snprintf(detail, sizeof detail, "bytes any kernel must move / %s datasheet bandwidth %g TB/s", si.product,
                 si.tbps);
        add_str(src, "tSolDetail", detail);
        add_num(src, "datasheetTBps", si.tbps);
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
    } else if (si.mode_figures) {
        add_str(src, "baseline", "suite-figures");
    } else {
        add_str(src, "baseline", "none");
    }

    cJSON *per = cJSON_CreateArray();
    double sol_sum = 0, sp_sum = 0;
    int n_sol = 0, n_b = 0, fast = 0;
    for (size_t i = 0; i < r->n_workloads; i++) {
        const rg_workload_result *w = &r->workloads[i];
        double t_k = w->time_ns.median;
        double t_sol = NAN, t_b = NAN;
        if (si.mode_figures) {
            t_sol = w->sol_ms * 1e6;
            t_b = w->baseline_ms * 1e6;
        } else if (si.tbps > 0) {
            t_sol = w->bytes / (si.tbps * 1e3);   /* bytes / (TB/s) in ns */
        }
        if (b) t_b = rg_baseline_lookup(b, w->index);
        double score = rg_sol_score(t_k, t_sol, t_b);
        if (!isnan(score) && !w->check.pass) score = 0;
        double speedup = isfinite(t_b) && t_k > 0 ? t_b / t_k : NAN;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", w->index);
        add_num(o, "t_k_ns", t_k);
        add_num(o, "t_sol_ns", t_sol);
        add_num(o, "t_b_ns", t_b);
        add_num(o, "sol_score", score);
        add_num(o, "speedup", speedup);
        cJSON_AddItemToArray(per, o);
        if (!isnan(score)) sol_sum += score, n_sol++;
        if (!isnan(speedup)) {
            sp_sum += speedup, n_b++;
            if (w->check.pass && t_k < t_b) fast++;
        }
    }
    double mean, geomean;
    double *med = malloc(r->n_workloads * sizeof *med);
    for (size_t i = 0; med && i < r->n_workloads; i++) med[i] = r->workloads[i].time_ns.median;
    suite_stats(med, med ? r->n_workloads : 0, &mean, &geomean);
    free(med);
    add_num(sn, "sol_score", n_sol ? sol_sum / n_sol : NAN);
    add_num(sn, "latency", geomean / 1e6);
    add_str(sn, "latency_unit", "ms (geometric mean of per-workload medians)");
    add_num(sn, "avg_speedup", n_b ? sp_sum / n_b : NAN);
    cJSON_AddNumberToObject(sn, "fast_1_count", fast);
    cJSON_AddNumberToObject(sn, "fast_1_total", n_b);
    cJSON_AddNumberToObject(sn, "scored_workloads", n_sol);
    cJSON_AddItemToObject(sn, "source", src);
    cJSON_AddItemToObject(sn, "perWorkload", per);
    return sn;
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
    for (size_t i = 0; i < r->n_workloads; i++) {
        const rg_workload_result *w = &r->workloads[i];
        if (!w->timed || !(w->time_ns.median > 0) || !isfinite(w->time_ns.median)) {
            snprintf(err, errlen, "manifest: workload %d was not timed (only timed runs are recorded)", w->index);
            return NULL;
        }
    }
    char d_proto[RG_DIGEST_LEN], d_env[RG_DIGEST_LEN], d_work[RG_DIGEST_LEN], d_key[RG_DIGEST_LEN],
        d_run[RG_DIGEST_LEN];
    cJSON *pspec = protocol_spec(r);
    cJSON *espec = environment_spec(&r->env);
    cJSON *wspec = workload_spec(r, s, err, errlen);
    if (!wspec) {
        cJSON_Delete(pspec);
        cJSON_Delete(espec);
        return NULL;
    }
    if (rg_digest_json(pspec, d_proto, err, errlen) || rg_digest_json(espec, d_env, err, errlen) ||
        rg_digest_json(wspec, d_work, err, errlen) ||
        comparison_key(r->suite, d_work, env_device(espec), d_proto, d_key, err, errlen)) {
        cJSON_Delete(pspec);
        cJSON_Delete(espec);
        cJSON_Delete(wspec);
        return NULL;
    }

    cJSON *run = cJSON_CreateObject();
    add_str(run, "definition", r->suite);
    add_str(run, "status", r->passed == r->total && r->total > 0 ? "passed" : "failed");
    add_str(run, "observedAt", r->started_at);
    cJSON *impl = cJSON_AddObjectToObject(run, "implementation");
    add_str(impl, "name", "ropegrad");
    add_str(impl, "version", ropegrad_version());
    add_str(impl, "backend", r->backend);
    cJSON_AddNumberToObject(impl, "kernel", r->kernel);
    add_str(impl, "kernelName", r->kernel_name);
    add_str(impl, "device", r->device);
    cJSON *su = cJSON_AddObjectToObject(run, "suite");
    add_str(su, "name", s->name);
    add_str(su, "dir", r->suite_dir);
    add_str_or_null(su, "figuresFile", s->have_figures ? base_name(s->figures_file) : NULL);
    add_str_or_null(su, "figuresGpu", s->have_figures ? s->figures_gpu : NULL);
    cJSON_AddItemToObject(run, "workload", wspec);

    cJSON *corr = cJSON_AddObjectToObject(run, "correctness");
    cJSON_AddNumberToObject(corr, "passed", r->passed);
    cJSON_AddNumberToObject(corr, "total", r->total);
    cJSON *cw = cJSON_AddArrayToObject(corr, "workloads");
    cJSON *tm = cJSON_AddObjectToObject(run, "timing");
    add_str(tm, "unit", "ns");
    add_str(tm, "primaryStatistic", "median");
    add_str(tm, "suitePrimaryStatistic", "geomean_of_medians");
    cJSON *tw = cJSON_AddArrayToObject(tm, "workloads");
    double *med = malloc(r->n_workloads * sizeof *med);
    if (!med) {
        cJSON_Delete(run);
        cJSON_Delete(pspec);
        cJSON_Delete(espec);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < r->n_workloads; i++) {
        const rg_workload_result *w = &r->workloads[i];
        cJSON *c = cJSON_CreateObject();
        cJSON_AddNumberToObject(c, "index", w->index);
        cJSON_AddBoolToObject(c, "pass", w->check.pass);
        add_num(c, "max_abs_err", w->check.max_abs_err);
        add_num(c, "max_rel_err", w->check.max_rel_err);
        add_num(c, "matched_ratio", w->check.matched_ratio);
        cJSON_AddNumberToObject(c, "n", (double)w->check.n);
        cJSON_AddNumberToObject(c, "n_matched", (double)w->check.n_matched);
        cJSON_AddNumberToObject(c, "n_nonfinite", (double)w->check.n_nonfinite);
        add_str(c, "reason", w->check.reason);
        cJSON_AddItemToArray(cw, c);

        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "index", w->index);
        add_str(t, "uuid", w->uuid);
        add_num(t, "bytes", w->bytes);
        add_num(t, "median", w->time_ns.median);
        add_num(t, "mean", w->time_ns.mean);
        add_num(t, "min", w->time_ns.min);
        add_num(t, "max", w->time_ns.max);
        add_num(t, "stddev", w->time_ns.stddev);
        add_num(t, "gbps", w->time_ns.median > 0 ? w->bytes / w->time_ns.median : NAN);
        cJSON *smp = cJSON_AddArrayToObject(t, "samples_ns");
        for (int k = 0; k < w->n_samples && w->samples_ns; k++) cJSON_AddItemToArray(smp, num_or_null(w->samples_ns[k]));
        cJSON_AddItemToArray(tw, t);
        med[i] = w->time_ns.median;
    }
    double mean, geomean;
    suite_stats(med, r->n_workloads, &mean, &geomean);
    free(med);
    cJSON *ss = cJSON_AddObjectToObject(tm, "suite");
    add_num(ss, "geomean_of_medians", geomean);
    add_num(ss, "mean_of_medians", mean);
    cJSON_AddItemToObject(run, "sourceNative", source_native(r, s, b));
    add_str(run, "protocolDigest", d_proto);
    add_str(run, "workloadDigest", d_work);
    add_str(run, "environmentDigest", d_env);
    add_str(run, "implementationDigest", rg_implementation_digest());
    add_str(run, "comparisonKey", d_key);

    char name[128], run_name[128], stamp[32];
    size_t k = 0;
    for (const char *p = r->started_at; *p && k + 1 < sizeof stamp; p++)
        if (isalnum((unsigned char)*p)) stamp[k++] = (char)tolower((unsigned char)*p);
    stamp[k] = 0;
    snprintf(run_name, sizeof run_name, "ropegrad-%s-k%d-%s", r->backend, r->kernel, stamp);
    cJSON *i_run = make_item("BenchmarkRun", run_name, run, d_run, err, errlen);
    snprintf(name, sizeof name, "protocol-%.12s", d_proto + 7);
    cJSON *i_proto = make_item("BenchmarkProtocol", name, pspec, d_proto, err, errlen);
    snprintf(name, sizeof name, "environment-%.12s", d_env + 7);
    cJSON *i_env = make_item("ExecutionEnvironment", name, espec, d_env, err, errlen);
    if (!i_run || !i_proto || !i_env) {
        cJSON_Delete(i_run);
        cJSON_Delete(i_proto);
        cJSON_Delete(i_env);
        return NULL;
    }
    cJSON *md;
    cJSON *m = new_object(RG_MANIFEST_KIND, &md);
    char gen[64];
    snprintf(gen, sizeof gen, "ropegrad %s", ropegrad_version());
    add_str(md, "generator", gen);
    add_str(md, "name", run_name);
    cJSON *items = cJSON_AddArrayToObject(m, "items");
    cJSON_AddItemToArray(items, i_run);
    cJSON_AddItemToArray(items, i_proto);
    cJSON_AddItemToArray(items, i_env);
    return m;
}

/* ---- lookup ------------------------------------------------------------------------ */

const cJSON *rg_manifest_item(const cJSON *m, const char *kind)
{
    const cJSON *items = rg_json_get(m, "items");
    if (!cJSON_IsArray(items)) return NULL;
    for (const cJSON *it = items->child; it; it = it->next) {
        const char *k = rg_json_str(it, "kind");
        if (k && !strcmp(k, kind)) return it;
    }
    return NULL;
}

const cJSON *rg_manifest_spec(const cJSON *m, const char *kind)
{
    const cJSON *it = rg_manifest_item(m, kind);
    const cJSON *s = it ? rg_json_get(it, "spec") : NULL;
    return cJSON_IsObject(s) ? s : NULL;
}

/* ---- verify --------------------------------------------------------------------------- */

static const char *const kinds[3] = {"BenchmarkRun", "BenchmarkProtocol", "ExecutionEnvironment"};

/* a and b agree to 1e-9 relative (figures recomputed in another order of
 * floating-point operations), or are both absent. */
static int same_figure(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300;
}

static int fig_mismatch(char *msg, size_t msglen, const char *what, double recorded, double computed)
{
    snprintf(msg, msglen, "BenchmarkRun %s does not follow from the figures it derives from: recorded %.17g, "
                          "computed %.17g",
             what, recorded, computed);
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Figures that follow from others, recomputed. 0, 1 (mismatch) or 2 (malformed). */
static int verify_figures(const cJSON *run, char *msg, size_t msglen)
{
    const cJSON *tm = rg_json_get(run, "timing"), *sn = rg_json_get(run, "sourceNative");
    const cJSON *tw = rg_json_get(tm, "workloads"), *per = rg_json_get(sn, "perWorkload");
    const cJSON *cw = rg_json_get(rg_json_get(run, "correctness"), "workloads");
    if (!cJSON_IsArray(tw) || !cJSON_IsArray(per) || !cJSON_IsArray(cw) || cJSON_GetArraySize(tw) == 0 ||
        cJSON_GetArraySize(per) != cJSON_GetArraySize(tw) || cJSON_GetArraySize(cw) != cJSON_GetArraySize(tw)) {
        snprintf(msg, msglen, "BenchmarkRun spec has no timing.workloads, sourceNative.perWorkload and "
                              "correctness.workloads of one length");
        return 2;
    }
    int n = cJSON_GetArraySize(tw);
    double sum = 0, lsum = 0, sol_sum = 0, sp_sum = 0;
    int n_sol = 0, n_b = 0, fast = 0, passed = 0;
    char what[128];
    const cJSON *t = tw->child, *p = per->child, *c = cw->child;
    for (int i = 0; i < n; i++, t = t->next, p = p->next, c = c->next) {
        double med = rg_json_num(t, "median");
        int idx = rg_json_int(t, "index");
        if (!(med > 0)) {
            snprintf(msg, msglen, "BenchmarkRun timing.workloads[%d] has no positive median", i);
            return 2;
        }
        const cJSON *smp = rg_json_get(t, "samples_ns");
        int ns = cJSON_IsArray(smp) ? cJSON_GetArraySize(smp) : 0;
        if (ns > 0) {
            double *v = malloc((size_t)ns * sizeof *v);
            if (!v) {
                snprintf(msg, msglen, "out of memory");
                return 2;
            }
            int k = 0;
            for (const cJSON *x = smp->child; x; x = x->next) v[k++] = cJSON_IsNumber(x) ? x->valuedouble : NAN;
            qsort(v, (size_t)ns, sizeof *v, cmp_double);
            double m = (ns & 1) ? v[ns / 2] : 0.5 * (v[ns / 2 - 1] + v[ns / 2]);
            double lo = v[0], hi = v[ns - 1], s = 0;
            for (k = 0; k < ns; k++) s += v[k];
            free(v);
            const char *names[4] = {"median", "min", "max", "mean"};
            double vals[4] = {m, lo, hi, s / ns};
            for (k = 0; k < 4; k++) {
                if (!same_figure(rg_json_num(t, names[k]), vals[k])) {
                    snprintf(what, sizeof what, "timing.workloads[%d].%s", i, names[k]);
                    return fig_mismatch(msg, msglen, what, rg_json_num(t, names[k]), vals[k]);
                }
            }
        }
        double gbps = rg_json_num(t, "bytes") / med;
        if (!same_figure(rg_json_num(t, "gbps"), gbps)) {
            snprintf(what, sizeof what, "timing.workloads[%d].gbps", i);
            return fig_mismatch(msg, msglen, what, rg_json_num(t, "gbps"), gbps);
        }
        sum += med;
        lsum += log(med);
        if (idx < 0 || rg_json_int(p, "index") != idx || rg_json_int(c, "index") != idx) {
            snprintf(msg, msglen, "BenchmarkRun workload lists disagree on the index of entry %d", i);
            return 1;
        }
        int pass = cJSON_IsTrue(rg_json_get(c, "pass"));
        passed += pass;
        double t_k = rg_json_num(p, "t_k_ns"), t_sol = rg_json_num(p, "t_sol_ns"), t_b = rg_json_num(p, "t_b_ns");
        if (!same_figure(t_k, med)) {
            snprintf(what, sizeof what, "sourceNative.perWorkload[%d].t_k_ns", i);
            return fig_mismatch(msg, msglen, what, t_k, med);
        }
        double score = rg_sol_score(t_k, t_sol, t_b);
        if (!isnan(score) && !pass) score = 0;
        if (!same_figure(rg_json_num(p, "sol_score"), score)) {
            snprintf(what, sizeof what, "sourceNative.perWorkload[%d].sol_score", i);
            return fig_mismatch(msg, msglen, what, rg_json_num(p, "sol_score"), score);
        }
        double sp = isfinite(t_b) && t_k > 0 ? t_b / t_k : NAN;
        if (!same_figure(rg_json_num(p, "speedup"), sp)) {
            snprintf(what, sizeof what, "sourceNative.perWorkload[%d].speedup", i);
            return fig_mismatch(msg, msglen, what, rg_json_num(p, "speedup"), sp);
        }
        if (!isnan(score)) sol_sum += score, n_sol++;
        if (!isnan(sp)) {
            sp_sum += sp, n_b++;
            if (pass && t_k < t_b) fast++;
        }
    }
    const cJSON *ss = rg_json_get(tm, "suite");
    if (!same_figure(rg_json_num(ss, "geomean_of_medians"), exp(lsum / n)))
        return fig_mismatch(msg, msglen, "timing.suite.geomean_of_medians", rg_json_num(ss, "geomean_of_medians"),
                            exp(lsum / n));
    if (!same_figure(rg_json_num(ss, "mean_of_medians"), sum / n))
        return fig_mismatch(msg, msglen, "timing.suite.mean_of_medians", rg_json_num(ss, "mean_of_medians"), sum / n);
    if (!same_figure(rg_json_num(sn, "latency"), exp(lsum / n) / 1e6))
        return fig_mismatch(msg, msglen, "sourceNative.latency", rg_json_num(sn, "latency"), exp(lsum / n) / 1e6);
    double sol = n_sol ? sol_sum / n_sol : NAN, asp = n_b ? sp_sum / n_b : NAN;
    if (!same_figure(rg_json_num(sn, "sol_score"), sol))
        return fig_mismatch(msg, msglen, "sourceNative.sol_score", rg_json_num(sn, "sol_score"), sol);
    if (!same_figure(rg_json_num(sn, "avg_speedup"), asp))
        return fig_mismatch(msg, msglen, "sourceNative.avg_speedup", rg_json_num(sn, "avg_speedup"), asp);
    if (!same_figure(rg_json_num(sn, "fast_1_count"), fast))
        return fig_mismatch(msg, msglen, "sourceNative.fast_1_count", rg_json_num(sn, "fast_1_count"), fast);
    if (!same_figure(rg_json_num(sn, "fast_1_total"), n_b))
        return fig_mismatch(msg, msglen, "sourceNative.fast_1_total", rg_json_num(sn, "fast_1_total"), n_b);
    const cJSON *corr = rg_json_get(run, "correctness");
    if (!same_figure(rg_json_num(corr, "passed"), passed))
        return fig_mismatch(msg, msglen, "correctness.passed", rg_json_num(corr, "passed"), passed);
    const char *status = rg_json_str(run, "status");
    const char *want = passed == n && rg_json_num(corr, "total") == n ? "passed" : "failed";
    if (!status || strcmp(status, want)) {
        snprintf(msg, msglen, "BenchmarkRun status \"%s\" does not follow from correctness (%d of %d passed)",
                 status ? status : "(none)", passed, n);
        return 1;
    }
    return 0;
}

int rg_manifest_verify(const cJSON *m, char *msg, size_t msglen)
{
    char err[RG_ERRLEN];
    if (!cJSON_IsObject(m)) {
        snprintf(msg, msglen, "not a JSON object");
        return 2;
    }
    const char *av = rg_json_str(m, "apiVersion"), *kind = rg_json_str(m, "kind");
    if (!av || strcmp(av, RG_API_VERSION) || !kind || strcmp(kind, RG_MANIFEST_KIND) ||
        !cJSON_IsArray(rg_json_get(m, "items"))) {
        snprintf(msg, msglen, "not a %s manifest (apiVersion %s, kind %s, items)", RG_API_VERSION, RG_API_VERSION,
                 RG_MANIFEST_KIND);
        return 2;
    }
    char computed[3][RG_DIGEST_LEN];
    const cJSON *spec[3];
    for (int k = 0; k < 3; k++) {
        int count = 0;
        const cJSON *item = NULL;
        for (const cJSON *it = rg_json_get(m, "items")->child; it; it = it->next) {
            const char *ik = rg_json_str(it, "kind");
            if (ik && !strcmp(ik, kinds[k])) item = it, count++;
        }
        if (count != 1) {
            snprintf(msg, msglen, "%s %s item", count ? "more than one" : "no", kinds[k]);
            return 2;
        }
        const char *iav = rg_json_str(item, "apiVersion");
        const cJSON *md = rg_json_get(item, "metadata");
        spec[k] = rg_json_get(item, "spec");
        if (!iav || strcmp(iav, RG_API_VERSION) || !cJSON_IsObject(md) || !cJSON_IsObject(spec[k]) ||
            !rg_json_str(md, "digest")) {
            snprintf(msg, msglen, "%s item lacks apiVersion %s, metadata.digest or spec", kinds[k], RG_API_VERSION);
            return 2;
        }
        if (rg_digest_json(spec[k], computed[k], err, sizeof err)) {
            snprintf(msg, msglen, "%s spec: %s", kinds[k], err);
            return 2;
        }
        const char *rec = rg_json_str(md, "digest");
        if (strcmp(rec, computed[k])) {
            snprintf(msg, msglen, "%s spec digest mismatch: recorded %.80s, computed %s", kinds[k], rec, computed[k]);
            return 1;
        }
    }
    /* Cross-references from the run to the other two, the workload and the key. */
    const cJSON *run = spec[0];
    const struct {
        const char *field;
        const char *value;
    } refs[2] = {{"protocolDigest", computed[1]}, {"environmentDigest", computed[2]}};
    for (int k = 0; k < 2; k++) {
        const char *rec = rg_json_str(run, refs[k].field);
        if (!rec) {
            snprintf(msg, msglen, "BenchmarkRun spec has no %s", refs[k].field);
            return 2;
        }
        if (strcmp(rec, refs[k].value)) {
            snprintf(msg, msglen, "BenchmarkRun %s mismatch: recorded %.80s, computed %s", refs[k].field, rec,
                     refs[k].value);
            return 1;
        }
    }
    char d_work[RG_DIGEST_LEN], d_key[RG_DIGEST_LEN];
    const cJSON *wspec = rg_json_get(run, "workload");
    const char *rec_w = rg_json_str(run, "workloadDigest"), *rec_k = rg_json_str(run, "comparisonKey");
    const char *def = rg_json_str(run, "definition"), *dev = env_device(spec[2]);
    if (!cJSON_IsObject(wspec) || !rec_w || !rec_k || !def || !dev) {
        snprintf(msg, msglen, "BenchmarkRun spec lacks workload, workloadDigest, comparisonKey or definition, "
                              "or the environment names no device");
        return 2;
    }
    if (rg_digest_json(wspec, d_work, err, sizeof err)) {
        snprintf(msg, msglen, "BenchmarkRun workload: %s", err);
        return 2;
    }
    if (strcmp(rec_w, d_work)) {
        snprintf(msg, msglen, "BenchmarkRun workloadDigest mismatch: recorded %.80s, computed %s", rec_w, d_work);
        return 1;
    }
    if (comparison_key(def, d_work, dev, computed[1], d_key, err, sizeof err)) {
        snprintf(msg, msglen, "comparison key: %s", err);
        return 2;
    }
    if (strcmp(rec_k, d_key)) {
        snprintf(msg, msglen, "BenchmarkRun comparisonKey mismatch: recorded %.80s, computed %s", rec_k, d_key);
        return 1;
    }
    if (!rg_digest_valid(rg_json_str(run, "implementationDigest"))) {
        snprintf(msg, msglen, "BenchmarkRun implementationDigest is not a sha256 digest");
        return 1;
    }
    return verify_figures(run, msg, msglen);
}

/* ---- the recorded protocol, for replication --------------------------------------- */

void rg_recorded_protocol_free(rg_recorded_protocol *p)
{
    if (!p) return;
    free(p->indices);
    p->indices = NULL;
    p->n_indices = 0;
}

int rg_protocol_from_manifest(const cJSON *m, rg_recorded_protocol *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    const cJSON *run = rg_manifest_spec(m, "BenchmarkRun"), *proto = rg_manifest_spec(m, "BenchmarkProtocol"),
                *env = rg_manifest_spec(m, "ExecutionEnvironment");
    if (!run || !proto || !env) {
        snprintf(err, errlen, "manifest lacks a BenchmarkRun, BenchmarkProtocol or ExecutionEnvironment");
        return 2;
    }
    const char *dir = rg_json_str(rg_json_get(run, "suite"), "dir");
    const char *backend = rg_json_str(rg_json_get(run, "implementation"), "backend");
    const char *inputs = rg_json_str(proto, "inputs");
    double kernel = rg_json_num(rg_json_get(run, "implementation"), "kernel");
    double warm = rg_json_num(proto, "warmup"), iters = rg_json_num(proto, "iterations");
    const cJSON *seed = rg_json_get(proto, "seed");
    const cJSON *wl = rg_json_get(rg_json_get(run, "workload"), "workloads");
    if (!dir || !backend || !inputs || isnan(kernel) || isnan(warm) || isnan(iters) || !seed || !cJSON_IsArray(wl)) {
        snprintf(err, errlen, "manifest lacks the suite dir, backend, kernel, warmup, iterations, seed, inputs or "
                              "workloads needed to run it again");
        return 2;
    }
    /* Range checks before the casts: a NaN or huge double cast to an integer
     * is undefined behaviour (found by fuzzing). */
    if (!(kernel >= 0 && kernel <= 1e9) || !(warm >= 0 && warm <= 1e9) || !(iters >= 1 && iters <= 1e9) ||
        (cJSON_IsNumber(seed) && !(seed->valuedouble >= 0 && seed->valuedouble < 18446744073709551616.0))) {
        snprintf(err, errlen, "manifest: kernel, warmup, iterations or seed out of range");
        return 2;
    }
    snprintf(p->suite_dir, sizeof p->suite_dir, "%s", dir);
    snprintf(p->backend, sizeof p->backend, "%s", backend);
    p->opts.backend = p->backend;
    p->opts.kernel = (int)kernel;
    p->opts.warmup = (int)warm;
    p->opts.iterations = (int)iters;
    if (cJSON_IsNumber(seed)) p->opts.seed = (uint64_t)seed->valuedouble;
    else if (cJSON_IsString(seed)) p->opts.seed = strtoull(seed->valuestring, NULL, 10);
    if (!strcmp(inputs, "normal")) p->opts.inputs = RG_INPUTS_NORMAL;
    else if (!strcmp(inputs, "positions")) p->opts.inputs = RG_INPUTS_POSITIONS;
    else {
        snprintf(err, errlen, "manifest: unknown inputs \"%s\"", inputs);
        return 2;
    }
    double th = rg_json_num(rg_json_get(env, "cpu"), "threads");
    p->opts.threads = !strcmp(backend, "cpu") && th > 0 && th <= 1e6 ? (int)th : 0;
    p->opts.timed = 1;
    int n = cJSON_GetArraySize(wl);
    p->indices = calloc(n ? (size_t)n : 1, sizeof *p->indices);
    if (!p->indices) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (const cJSON *w = wl->child; w; w = w->next) p->indices[p->n_indices++] = rg_json_int(w, "index");
    return 0;
}

/* ---- files --------------------------------------------------------------------------- */

cJSON *rg_json_read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap) break;
        char *b2 = realloc(buf, cap * 2);
        if (!b2) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b2;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read", path);
        return NULL;
    }
    buf[n] = 0;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(buf, n, &end, 0);
    if (!j) {
        size_t at = end && end >= buf ? (size_t)(end - buf) : 0;
        snprintf(err, errlen, "%s: not valid JSON (near byte %zu)", path, at);
        free(buf);
        return NULL;
    }
    /* Trailing content after the document is malformed too. */
    while (end && (size_t)(end - buf) < n && isspace((unsigned char)*end)) end++;
    if (end && (size_t)(end - buf) < n) {
        snprintf(err, errlen, "%s: not valid JSON (trailing content at byte %zu)", path, (size_t)(end - buf));
        cJSON_Delete(j);
        free(buf);
        return NULL;
    }
    free(buf);
    return j;
}

int rg_write_file_atomic(const char *path, const char *data, size_t n, char *err, size_t errlen)
{
    if (!path || !*path || (!data && n)) {
        snprintf(err, errlen, "no output file given");
        return 1;
    }
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    if (!tmp) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    snprintf(tmp, len, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(tmp);
        return 1;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            break;
        }
        off += (size_t)w;
    }
    int ok = off == n && fsync(fd) == 0;
    /* mkstemp makes the file 0600; a manifest or report is for sharing. */
    fchmod(fd, 0644);
    if (close(fd) != 0) ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return 1;
    }
    free(tmp);
    return 0;
}
