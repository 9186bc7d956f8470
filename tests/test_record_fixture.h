/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_record_fixture.h -- hand-built runs for the record's tests.
 *
 * A small suite (three workloads) and a completed run over it, filled field
 * by field as the harness would, so the record's tests do not depend on
 * timing anything. `scale` multiplies every time (a slower or faster
 * variant); `gpu` is "" for a CPU run or a product name.
 */
#ifndef TEST_RECORD_FIXTURE_H
#define TEST_RECORD_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "record.h"
#include "sol_check.h"

#define FX_N 3
#define FX_SAMPLES 5

static void fx_suite(rg_suite *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "014_rotary_embedding_with_attention_scaling_backward");
    snprintf(s->dir, sizeof s->dir, "%s/suites/014-rope_backward", RG_SOURCE_DIR);
    s->head_dim = 128;
    s->n_workloads = FX_N;
    s->workloads = calloc(FX_N, sizeof *s->workloads);
    static const int64_t B[FX_N] = {32, 2, 1}, S[FX_N] = {256, 3637, 128};
    static const char *uuid[FX_N] = {"80418e26-ee3d-5ceb-b175-0a7b83f1f47a", "3349eb65-de68-52c8-a03a-0df3f9b59030",
                                     "2cfdf084-aef8-5abf-9f1d-6a9782b77ea2"};
    static const double sol_ms[FX_N] = {0.0011, 0.001, 0.0004}, base_ms[FX_N] = {0.05712, 0.057248, 0.048639};
    for (int i = 0; i < FX_N; i++) {
        rg_workload *w = &s->workloads[i];
        w->index = i;
        snprintf(w->uuid, sizeof w->uuid, "%s", uuid[i]);
        w->batch_size = B[i];
        w->seq_len = S[i];
        w->head_dim = 128;
        w->attention_scaling = i == 2 ? 0.125f : 0.0883883f;
        w->max_atol = 1e-5;
        w->max_rtol = 1e-5;
        w->required_matched_ratio = 0.99;
        w->max_error_cap = NAN;
        w->sol_ms = sol_ms[i];
        w->baseline_ms = base_ms[i];
    }
    s->have_figures = 1;
    snprintf(s->figures_gpu, sizeof s->figures_gpu, "B200");
    snprintf(s->figures_file, sizeof s->figures_file, "%s/suites/014-rope_backward/b200-figures.json", RG_SOURCE_DIR);
    s->figures_warmup = 10;
    s->figures_iterations = 50;
    s->figures_seed = 200;
}

static void fx_suite_free(rg_suite *s) { free(s->workloads); }

/* The suites the index judges fixture runs against (rg_sol_set_suites): the
 * bundled suite of 014 cut to the fixture's FX_N workloads, so that a fixture
 * run covers its whole suite (rank.h: a run of fewer workloads than its
 * suite is partial) while T_SOL still comes from the bundled bytes; every
 * other definition as bundled. Built once, never freed, like the bundled ones. */
static inline const rg_suite *fx_suites(const char *definition)
{
    static rg_suite cut;
    static rg_workload w[FX_N];
    static int state;   /* 0 not built, 1 built, -1 none */
    const rg_suite *b = rg_suite_bundled(definition);
    if (!b || strcmp(definition, "014_rotary_embedding_with_attention_scaling_backward")) return b;
    if (!state) {
        rg_suite fx;
        fx_suite(&fx);
        size_t k = 0;
        for (size_t i = 0; i < fx.n_workloads; i++)
            for (size_t j = 0; j < b->n_workloads && k < FX_N; j++)
                if (!strcmp(b->workloads[j].uuid, fx.workloads[i].uuid)) w[k++] = b->workloads[j];
        fx_suite_free(&fx);
        cut = *b;
        cut.workloads = w;
        cut.n_workloads = k;
        state = k == FX_N ? 1 : -1;
    }
    return state > 0 ? &cut : NULL;
}

/* Registers fx_suites with the index, built before any thread asks. */
static inline void fx_register_suites(void)
{
    (void)fx_suites("014_rotary_embedding_with_attention_scaling_backward");
    rg_sol_set_suites(fx_suites);
}

/* A run of kernel `kernel` taking about scale * (5, 9, 3) us per workload
 * (CPU runs: 1000x that). `stamp` makes observedAt (and so the run digest)
 * unique. */
static void fx_run(rg_run_result *r, const rg_suite *s, const char *gpu, int kernel, double scale, int stamp)
{
    memset(r, 0, sizeof *r);
    snprintf(r->suite, sizeof r->suite, "%s", s->name);
    snprintf(r->suite_dir, sizeof r->suite_dir, "%s", s->dir);
    int cpu = !gpu || !*gpu;
    snprintf(r->backend, sizeof r->backend, "%s", cpu ? "cpu" : "cuda");
    r->kernel = kernel;
    snprintf(r->kernel_name, sizeof r->kernel_name, "variant-%d", kernel);
    snprintf(r->device, sizeof r->device, "%s", cpu ? "Test CPU Model (4 threads)" : gpu);
    snprintf(r->timer, sizeof r->timer, "%s", cpu ? "wall-clock" : "cupti");
    snprintf(r->cold_l2, sizeof r->cold_l2, "2x L2 zeroed before every iteration");
    snprintf(r->inputs, sizeof r->inputs, "normal");
    r->warmup = 2;
    r->iterations = FX_SAMPLES;
    r->seed = 200;
    snprintf(r->started_at, sizeof r->started_at, "2026-01-%02dT10:00:%02dZ", 1 + stamp / 60 % 28, stamp % 60);
    rg_env *e = &r->env;
    snprintf(e->hostname, sizeof e->hostname, "testhost");
    snprintf(e->os, sizeof e->os, "Linux 6.1 x86_64");
    snprintf(e->cpu_model, sizeof e->cpu_model, "Test CPU Model");
    e->cpu_threads = 4;
    snprintf(e->cpu_isa, sizeof e->cpu_isa, "avx2");
    if (!cpu) {
        snprintf(e->gpu_name, sizeof e->gpu_name, "%s", gpu);
        snprintf(e->gpu_arch, sizeof e->gpu_arch, "sm_90");
        e->gpu_sm_count = 132;
        e->gpu_l2_bytes = 62914560;
        e->gpu_mem_bandwidth_gbps = 4800;
        snprintf(e->driver_version, sizeof e->driver_version, "580.65");
        snprintf(e->cuda_runtime_version, sizeof e->cuda_runtime_version, "13.0");
        e->sm_clock_mhz_start = 1980, e->sm_clock_mhz_end = 1965;
        e->mem_clock_mhz_start = 3201, e->mem_clock_mhz_end = 3201;
    } else {
        e->sm_clock_mhz_start = e->sm_clock_mhz_end = e->mem_clock_mhz_start = e->mem_clock_mhz_end = -1;
    }
    snprintf(e->ropegrad_version, sizeof e->ropegrad_version, "%s", ropegrad_version());
    snprintf(e->build_flags, sizeof e->build_flags, "test flags");
    /* The fixture's suite (FX_N workloads) or a whole bundled one (fx_manifest_whole). */
    const size_t nw = s->n_workloads;
    r->n_workloads = nw;
    r->workloads = calloc(nw, sizeof *r->workloads);
    static const double base_us[FX_N] = {5, 9, 3};
    double lsum = 0, sum = 0;
    for (size_t i = 0; i < nw; i++) {
        rg_workload_result *w = &r->workloads[i];
        const rg_workload *sw = &s->workloads[i];
        w->index = sw->index;
        snprintf(w->uuid, sizeof w->uuid, "%s", sw->uuid);
        w->batch_size = sw->batch_size, w->seq_len = sw->seq_len, w->head_dim = sw->head_dim;
        w->bytes = (double)(sw->batch_size * sw->seq_len * 772 + sw->batch_size * 256);
        w->check.pass = 1;
        w->check.max_abs_err = 1.5e-7 * (i + 1);
        w->check.max_rel_err = 2.5e-6;
        w->check.matched_ratio = 1;
        w->check.n = w->check.n_matched = sw->batch_size * sw->seq_len;
        w->timed = 1;
        w->n_samples = FX_SAMPLES;
        w->samples_ns = calloc(FX_SAMPLES, sizeof *w->samples_ns);
        /* Beyond FX_N (a whole suite): the bytes at 1 TB/s on top, so that
         * no workload is faster than its T_SOL. */
        double t = (base_us[i % FX_N] * 1e3 + (i < FX_N ? 0 : w->bytes / 1e3)) * scale * (cpu ? 1000 : 1);
        /* Irregular fractions on purpose: digests must survive doubles
         * whose shortest form needs all 17 digits. */
        for (int k = 0; k < FX_SAMPLES; k++) w->samples_ns[k] = t * (1.0 + 0.01 * (k - 2)) + 1.0 / 3.0;
        rg_time_stats_compute(w->samples_ns, FX_SAMPLES, &w->time_ns);
        w->gbps = w->bytes / w->time_ns.median;
        w->sol_ms = sw->sol_ms;
        w->baseline_ms = sw->baseline_ms;
        sum += w->time_ns.median;
        lsum += log(w->time_ns.median);
    }
    r->passed = r->total = (int)nw;
    r->mean_ns = sum / (double)nw;
    r->geomean_ns = exp(lsum / (double)nw);
}

/* The run's mean and geomean of the per-workload medians again, after a test
 * edited a workload's samples or statistics. */
static inline void fx_run_totals(rg_run_result *r)
{
    double lsum = 0, sum = 0;
    for (size_t i = 0; i < r->n_workloads; i++) {
        sum += r->workloads[i].time_ns.median;
        lsum += log(r->workloads[i].time_ns.median);
    }
    r->mean_ns = sum / (double)r->n_workloads;
    r->geomean_ns = exp(lsum / (double)r->n_workloads);
}

/* Nothing timed, as the harness leaves a run: with fail_reason, every
 * workload failed (the first with fail_reason, as a GPU fault leaves it, the
 * rest "not run"); with NULL, a `check` run (iterations 0, timer "none")
 * whose every workload passed. */
static inline void fx_run_untimed(rg_run_result *r, const char *fail_reason)
{
    for (size_t i = 0; i < r->n_workloads; i++) {
        rg_workload_result *w = &r->workloads[i];
        free(w->samples_ns);
        w->samples_ns = NULL;
        w->n_samples = 0;
        w->timed = 0;
        memset(&w->time_ns, 0, sizeof w->time_ns);
        w->gbps = NAN;
        if (fail_reason) {
            w->check.pass = 0;
            snprintf(w->check.reason, sizeof w->check.reason, "%s", i ? "not run" : fail_reason);
        }
    }
    if (!fail_reason) {
        snprintf(r->timer, sizeof r->timer, "none");
        snprintf(r->cold_l2, sizeof r->cold_l2, "none (not timed)");
        r->warmup = r->iterations = 0;
    }
    r->passed = fail_reason ? 0 : r->total;
    r->mean_ns = r->geomean_ns = NAN;
}

static void fx_run_free(rg_run_result *r)
{
    for (size_t i = 0; i < r->n_workloads; i++) free(r->workloads[i].samples_ns);
    free(r->workloads);
    r->workloads = NULL;
}

/* The manifest of a fixture run (asserts nothing; NULL on failure). */
static cJSON *fx_manifest(const char *gpu, int kernel, double scale, int stamp)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, gpu, kernel, scale, stamp);
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!m) fprintf(stderr, "fx_manifest: %s\n", err);
    fx_run_free(&r);
    fx_suite_free(&s);
    return m;
}

/* The manifest of a fixture run over the whole bundled suite of 014 (its
 * 16 workloads: a run the index ranks when it judges against the bundled
 * suites, as the CLI does; rank.h, partial runs). The first FX_N workloads
 * take fx_manifest's times; NULL on failure. */
static inline cJSON *fx_manifest_whole(const char *gpu, int kernel, double scale, int stamp)
{
    const rg_suite *s = rg_suite_bundled("014_rotary_embedding_with_attention_scaling_backward");
    rg_run_result r;
    char err[RG_ERRLEN];
    if (!s) {
        fprintf(stderr, "fx_manifest_whole: no bundled suite of 014\n");
        return NULL;
    }
    fx_run(&r, s, gpu, kernel, scale, stamp);
    cJSON *m = rg_manifest_build(&r, s, NULL, err, sizeof err);
    if (!m) fprintf(stderr, "fx_manifest_whole: %s\n", err);
    fx_run_free(&r);
    return m;
}

/* A fixture run's manifest as compact JSON text (free() it); NULL with a message on stderr. */
static inline char *fx_manifest_text(const char *gpu, int kernel, double scale, int stamp)
{
    char err[RG_ERRLEN] = "no manifest";
    cJSON *m = fx_manifest(gpu, kernel, scale, stamp);
    char *t = m ? rg_json_print(m, 0, err, sizeof err) : NULL;
    if (!t) fprintf(stderr, "fx_manifest_text: %s\n", err);
    cJSON_Delete(m);
    return t;
}

/* A fixture run imported into g: its id, or -1 with a message on stderr. */
static inline int64_t fx_import(rg_registry *g, const char *gpu, int kernel, double scale, int stamp)
{
    char err[RG_ERRLEN];
    char *t = fx_manifest_text(gpu, kernel, scale, stamp);
    int64_t id = -1;
    int existed;
    if (t && rg_registry_import(g, t, strlen(t), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err)) {
        fprintf(stderr, "fx_import: %s\n", err);
        id = -1;
    }
    free(t);
    return id;
}

/* Writes manifest m (deleted after) as dir/name through the atomic writer;
 * 0, or -1 with a message on stderr. */
static inline int fx_write_doc(const char *dir, const char *name, cJSON *m)
{
    char path[1024], err[RG_ERRLEN];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *t = m ? rg_json_print(m, 1, err, sizeof err) : NULL;
    int rc = t ? rg_write_file_atomic(path, t, strlen(t), err, sizeof err) : -1;
    if (rc) fprintf(stderr, "fx_write_doc: %s: %s\n", path, m ? err : "no manifest");
    free(t);
    cJSON_Delete(m);
    return rc ? -1 : 0;
}

/* The manifest of a fixture run written to path (as text, as a user would
 * have it); 0, or -1 on failure. */
static inline int fx_write_manifest(const char *path, const char *gpu, int kernel, double scale, int stamp)
{
    char err[256];
    cJSON *m = fx_manifest(gpu, kernel, scale, stamp);
    char *t = m ? rg_json_print(m, 1, err, sizeof err) : NULL;
    cJSON_Delete(m);
    FILE *f = t ? fopen(path, "w") : NULL;
    int ok = f && fputs(t, f) >= 0;
    if (f) ok &= fclose(f) == 0;
    free(t);
    return ok ? 0 : -1;
}

/* A fresh path under the build tree for a test's files. */
static void fx_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/test-record-%ld-%s", RG_BINARY_DIR, (long)getpid(), name);
}

/* A fresh registry at path (any old one and its WAL removed), open for
 * writing; NULL with a message on stderr on failure. */
static inline rg_registry *fx_fresh_registry_at(const char *path)
{
    char p2[1100], err[RG_ERRLEN];
    unlink(path);
    snprintf(p2, sizeof p2, "%s-wal", path);
    unlink(p2);
    snprintf(p2, sizeof p2, "%s-shm", path);
    unlink(p2);
    rg_registry *g;
    if (rg_registry_open(path, 1, &g, err, sizeof err)) {
        fprintf(stderr, "fx_fresh_registry_at: %s\n", err);
        return NULL;
    }
    return g;
}

/* The same under the build tree, by name (fx_path). */
static inline rg_registry *fx_fresh_registry(const char *name)
{
    char path[512];
    fx_path(path, sizeof path, name);
    return fx_fresh_registry_at(path);
}

/* A fresh registry at db holding one imported fixture run; 0, or -1 with a message on stderr. */
static inline int fx_one_run_registry(const char *db)
{
    char err[RG_ERRLEN];
    unlink(db);
    rg_registry *g;
    if (rg_registry_open(db, 1, &g, err, sizeof err)) {
        fprintf(stderr, "fx_one_run_registry: %s\n", err);
        return -1;
    }
    int64_t id = fx_import(g, "NVIDIA H200", 1, 1.0, 1);
    rg_registry_close(g);
    return id < 0 ? -1 : 0;
}

#endif
