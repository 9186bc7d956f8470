/* SPDX-License-Identifier: Apache-2.0 */
/* test_rank_trust.c -- the trust classes (rank.h rg_manifest_rank_class)
 * through the ranking, #1, the model, the pages and the JSON API:
 *   - a manifest and an official traces file claiming 1.02x T_SOL on every
 *     workload (below the GPU's launch floor, hardware.h): suspect, never
 *     ranked, never #1 or a headline;
 *   - a CPU run claiming about 12 TB/s: beyond the CPU memory ceiling, suspect;
 *   - a traces file of one workload of a 16-workload suite: partial, never
 *     ranked, its group has no #1 and no headline;
 *   - a run recorded on a busy machine: busy, marked, not ranked;
 *   - a run without samples: reported, ranked apart from the measured runs;
 *   - one x reference per run on every page and in the API, and why when empty;
 *   - runs of an older harness version: superseded, listed after, never ranked. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hardware.h"
#include "model.h"
#include "rank.h"
#include "render.h"
#include "test_record_fixture.h"
#include "test_util.h"
#include "traces.h"
#include "traces_import.h"

#define DEF "014_rotary_embedding_with_attention_scaling_backward"
#define TRACES RG_SOURCE_DIR "/tests/data/official-traces/traces-014-h200-passed.jsonl"

static rg_registry *fresh(const char *name)
{
    rg_registry *g = fx_fresh_registry(name);
    if (!g) fail_msg("cannot open a fresh registry %s", name);
    return g;
}

static int64_t store(rg_registry *g, cJSON *m, const char *evidence)
{
    int64_t id;
    int existed;
    char err[RG_ERRLEN];
    if (!m) fail_msg("no manifest to store");
    if (rg_registry_store(g, m, evidence, 0, &id, &existed, err, sizeof err)) fail_msg("store: %s", err);
    cJSON_Delete(m);
    return id;
}

static rg_rank_class class_of(cJSON *doc, char *reason, size_t n)
{
    char err[RG_ERRLEN];
    rg_manifest m;
    if (rg_manifest_read(doc, &m, err, sizeof err)) fail_msg("read: %s", err);
    rg_rank_class c = rg_manifest_rank_class(&m, RG_EVIDENCE_IMPORTED, reason, n);
    rg_manifest_free(&m);
    return c;
}

/* Each workload's samples set to t[i] (ns, a 0.1% spread), the figures recomputed. */
static void set_times(rg_run_result *r, const double *t)
{
    for (size_t i = 0; i < r->n_workloads; i++) {
        rg_workload_result *w = &r->workloads[i];
        for (int k = 0; k < (int)w->n_samples; k++) w->samples_ns[k] = t[i] * (1.0 + 0.001 * (double)k);
        rg_time_stats_compute(w->samples_ns, (int)w->n_samples, &w->time_ns);
        w->gbps = w->bytes / w->time_ns.median;
    }
    fx_run_totals(r);
}

/* A fixture run on gpu ("" CPU) whose every workload takes factor x its
 * index T_SOL (GPU), or moves its bytes at gbps (CPU; gbps 0: factor x the
 * fixture's time); busy_load > 0: that 1-minute load on 4 CPUs. */
static cJSON *forged(const char *gpu, double factor, double gbps, double busy_load, int stamp)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, gpu, 7, 1.0, stamp);
    double t[FX_N];
    if (*gpu) {
        cJSON *honest = rg_manifest_build(&r, &s, NULL, err, sizeof err);
        assert_non_null(honest);
        rg_manifest m;
        rg_sol_check c;
        assert_int_equal(rg_manifest_read(honest, &m, err, sizeof err), 0);
        assert_int_equal(rg_manifest_sol_check(&m, &c, t, err, sizeof err), 0);
        assert_int_equal(c.state, RG_SOL_VERIFIED);
        rg_manifest_free(&m);
        cJSON_Delete(honest);
        for (int i = 0; i < FX_N; i++) t[i] *= factor;
    } else {
        for (int i = 0; i < FX_N; i++)   /* bytes / (GB/s) = ns */
            t[i] = gbps > 0 ? r.workloads[i].bytes / gbps : r.workloads[i].time_ns.median * factor;
    }
    if (factor > 0 || gbps > 0) set_times(&r, t);
    if (busy_load > 0) {
        r.env.load_known = 1;
        r.env.load_avg_1m = busy_load;
        r.env.load_cpus = 4;
    }
    cJSON *doc = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!doc) fail_msg("build: %s", err);
    fx_run_free(&r);
    fx_suite_free(&s);
    return doc;
}

static const rg_ranked *find(const rg_ranked *e, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (e[i].row.id == id) return &e[i];
    fail_msg("run #%lld not in the group", (long long)id);
    return NULL;
}

static rg_ranked *group_of(rg_registry *g, int64_t id, size_t *n)
{
    char err[RG_ERRLEN];
    rg_run_row row;
    rg_ranked *e;
    assert_int_equal(rg_registry_get(g, id, &row, NULL, err, sizeof err), 0);
    assert_int_equal(rg_registry_rank_group(g, row.comparison_key, NULL, &e, n, err, sizeof err), 0);
    return e;
}

static int64_t first_of(rg_registry *g, int64_t id)
{
    char err[RG_ERRLEN];
    rg_run_row row;
    int64_t first;
    assert_int_equal(rg_registry_get(g, id, &row, NULL, err, sizeof err), 0);
    assert_int_equal(rg_registry_first(g, row.comparison_key, &first, err, sizeof err), 0);
    return first;
}

/* The front page's headline rows name run id as #1 (and no other of those given). */
static void headline_is(rg_registry *g, int64_t id, int64_t not_id)
{
    char err[RG_ERRLEN], want[64], other[64];
    rg_index_view iv;
    assert_int_equal(rg_model_index(g, &iv, err, sizeof err), 0);
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *html = rg_render_index(&ctx, &iv, err, sizeof err);
    assert_non_null(html);
    const char *h = strstr(html, "id=\"headlines\""), *end = h ? strstr(h, "</table>") : NULL;
    if (!h || !end) fail_msg("no headline table:\n%s", html);
    snprintf(want, sizeof want, "/runs/%lld\"", (long long)id);
    snprintf(other, sizeof other, "/runs/%lld\"", (long long)not_id);
    const char *w = strstr(h, want), *o = strstr(h, other);
    assert_true(w && w < end);
    assert_true(!o || o > end);
    free(html);
    rg_model_index_free(&iv);
}

/* honest_doc and fake_doc stored in a fresh registry db (one group): the
 * honest run ranks 1 and is #1 and the headline, the fake one is listed
 * with rank 0. Returns the registry (open) and both ids. */
static rg_registry *honest_over_fake(const char *db, cJSON *honest_doc, cJSON *fake_doc, int64_t *honest, int64_t *fake)
{
    rg_registry *g = fresh(db);
    *honest = store(g, honest_doc, RG_EVIDENCE_MEASURED);
    *fake = store(g, fake_doc, RG_EVIDENCE_IMPORTED);
    size_t n;
    rg_ranked *e = group_of(g, *honest, &n);
    assert_int_equal(n, 2);
    assert_int_equal(e[0].row.id, *honest);
    assert_int_equal(find(e, n, *honest)->rank, 1);
    assert_int_equal(find(e, n, *fake)->rank, 0);
    assert_int_equal(find(e, n, *fake)->rank_class, RG_CLASS_SUSPECT);
    free(e);
    assert_int_equal(first_of(g, *fake), *honest);
    headline_is(g, *honest, *fake);
    return g;
}

/* Issue 40 item 4: a manifest claiming 1.02x T_SOL on every workload. */
static void test_manifest_near_sol(void **state)
{
    fx_register_suites();
    char err[RG_ERRLEN], why[RG_RANK_REASON_LEN];
    cJSON *doc = forged("NVIDIA H200", 1.02, 0, 0, 2);
    assert_int_equal(class_of(doc, why, sizeof why), RG_CLASS_SUSPECT);
    assert_non_null(strstr(why, "launch floor"));
    rg_gpu_floor fl;
    assert_int_equal(rg_gpu_floor_lookup("NVIDIA H200", &fl), 1);
    assert_true(fl.launch_ns > 500 && fl.launch_ns < 700 && fl.peak_tbps == 4.8);
    assert_int_equal(rg_gpu_floor_lookup("NVIDIA H100 80GB HBM3", &fl), 1);
    assert_true(fl.launch_ns >= 800 && fl.launch_ns <= 1000);
    assert_int_equal(rg_gpu_floor_lookup("NVIDIA H100 PCIe", &fl), 0);   /* no measured span: none assumed */

    int64_t honest, fake;
    rg_registry *g = honest_over_fake("trust_sol.db", fx_manifest("NVIDIA H200", 1, 1.0, 1), doc, &honest, &fake);
    /* The problem page's JSON: the forged run listed, unranked, with its class and reason. */
    rg_problem_view pv;
    assert_int_equal(rg_model_problem(g, DEF, &pv, err, sizeof err), 0);
    char *json = rg_api_problem(&pv, err, sizeof err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"rank_class\":\"suspect\""));
    assert_non_null(strstr(json, "\"rank_class\":\"measured\""));
    assert_non_null(strstr(json, "below the H200 launch floor"));
    free(json);
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *html = rg_render_problem(&ctx, &pv, err, sizeof err);
    assert_non_null(strstr(html, "<tr><td>suspect</td>"));
    free(html);
    rg_model_problem_free(&pv);
    rg_registry_close(g);
}

/* The official traces of 014 on an H200, each latency replaced by
 * factor x the workload's index T_SOL (factor 0: as recorded); keep: the
 * first keep lines only (0: all). The text is malloc'd. */
static char *traces_text(double factor, int keep)
{
    char *text = tu_slurp(TRACES, NULL);
    assert_non_null(text);
    const rg_suite *s = rg_suite_bundled(DEF);
    assert_non_null(s);
    size_t cap = strlen(text) * 2 + 1, len = 0;
    char *out = calloc(cap, 1);
    int lines = 0;
    for (char *line = strtok(text, "\n"); line && (!keep || lines < keep); line = strtok(NULL, "\n"), lines++) {
        cJSON *o = cJSON_Parse(line);
        assert_non_null(o);
        const char *uuid = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "workload"), "uuid")->valuestring;
        double bytes = 0;
        for (size_t i = 0; i < s->n_workloads; i++)
            if (!strcmp(s->workloads[i].uuid, uuid)) bytes = s->workloads[i].bytes;
        assert_true(bytes > 0);
        cJSON *perf = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "evaluation"), "performance");
        if (factor > 0) {
            double ms = factor * bytes / 4.8e3 / 1e6;
            double ref = cJSON_GetObjectItem(perf, "reference_latency_ms")->valuedouble;
            cJSON_ReplaceItemInObject(perf, "latency_ms", cJSON_CreateNumber(ms));
            cJSON_ReplaceItemInObject(perf, "speedup_factor", cJSON_CreateNumber(ref / ms));
        }
        char *p = cJSON_PrintUnformatted(o);
        len += (size_t)snprintf(out + len, cap - len, "%s\n", p);
        free(p);
        cJSON_Delete(o);
    }
    free(text);
    return out;
}

static cJSON *traces_manifest(const char *text)
{
    char err[RG_ERRLEN];
    rg_traces t;
    if (rg_traces_parse(text, strlen(text), "t.jsonl", &t, err, sizeof err)) fail_msg("traces: %s", err);
    cJSON *doc = rg_traces_manifest(&t, rg_suite_bundled(DEF), err, sizeof err);
    if (!doc) fail_msg("traces manifest: %s", err);
    rg_traces_free(&t);
    return doc;
}

/* Issue 40 items 4 and 5 for imported traces: at 1.02x T_SOL suspect; one
 * workload of sixteen partial; neither ranked, #1 nor a headline. */
static void test_traces_near_sol_and_partial(void **state)
{
    char why[RG_RANK_REASON_LEN];
    rg_sol_set_suites(rg_suite_bundled);   /* the whole bundled suites, as the CLI registers them */
    char *honest_t = traces_text(0, 0), *fake_t = traces_text(1.02, 0), *one_t = traces_text(0, 1);
    cJSON *honest_doc = traces_manifest(honest_t), *fake_doc = traces_manifest(fake_t), *one_doc = traces_manifest(one_t);
    free(honest_t), free(fake_t), free(one_t);
    assert_int_equal(class_of(honest_doc, why, sizeof why), RG_CLASS_REPORTED);
    assert_int_equal(class_of(fake_doc, why, sizeof why), RG_CLASS_SUSPECT);
    assert_non_null(strstr(why, "launch floor"));
    assert_int_equal(class_of(one_doc, why, sizeof why), RG_CLASS_PARTIAL);
    assert_string_equal(why, "partial: 1 of the 16 workloads of its suite");

    rg_registry *g = fresh("trust_traces.db");
    int64_t one = store(g, one_doc, RG_EVIDENCE_IMPORTED);
    int64_t fake = store(g, fake_doc, RG_EVIDENCE_IMPORTED);
    int64_t honest = store(g, honest_doc, RG_EVIDENCE_IMPORTED);
    size_t n;
    rg_ranked *e = group_of(g, honest, &n);
    assert_int_equal(n, 2);   /* the forged and the honest file: one workload set */
    assert_int_equal(e[0].row.id, honest);
    assert_int_equal(find(e, n, honest)->rank, 1);
    assert_int_equal(find(e, n, honest)->rank_class, RG_CLASS_REPORTED);
    assert_int_equal(find(e, n, fake)->rank, 0);
    free(e);
    /* A group of reported runs only: its #1 is the best verified reported run. */
    assert_int_equal(first_of(g, fake), honest);
    /* The one-workload file: its own group, listed, no rank, no #1, no headline. */
    e = group_of(g, one, &n);
    assert_int_equal(n, 1);
    assert_int_equal(e[0].rank, 0);
    assert_int_equal(e[0].rank_class, RG_CLASS_PARTIAL);
    free(e);
    assert_int_equal(first_of(g, one), 0);
    headline_is(g, honest, one);
    headline_is(g, honest, fake);
    rg_index_view iv;
    char err[RG_ERRLEN];
    assert_int_equal(rg_model_index(g, &iv, err, sizeof err), 0);
    char *json = rg_api_index(&iv, err, sizeof err);
    assert_non_null(strstr(json, "\"best_rank_class\":\"reported\""));   /* the headline says what it is */
    assert_non_null(strstr(json, "\"best_rank_class\":null"));             /* the partial file's group: none */
    free(json);
    rg_model_index_free(&iv);
    rg_registry_close(g);
}

/* Issue 40 item 4 on a CPU: a run claiming about 12 TB/s is beyond the
 * CPU memory ceiling; the honest run of its group stays #1. */
static void test_cpu_ceiling(void **state)
{
    fx_register_suites();
    char why[RG_RANK_REASON_LEN];
    assert_true(rg_cpu_ceiling_gbps("AMD EPYC 9654 96-Core Processor", NULL) == RG_CPU_CEILING_GBPS);
    assert_true(rg_cpu_ceiling_gbps("Intel(R) Xeon(R) CPU Max 9480", NULL) > RG_CPU_CEILING_GBPS);
    cJSON *doc = forged("", 0, 12000, 0, 3);
    assert_int_equal(class_of(doc, why, sizeof why), RG_CLASS_SUSPECT);
    assert_non_null(strstr(why, "beyond the CPU memory ceiling 1000 GB/s"));
    int64_t honest, fake;
    rg_registry_close(honest_over_fake("trust_cpu.db", fx_manifest("", 1, 1.0, 1), doc, &honest, &fake));
}

/* Issue 41 item 6: a run recorded on a busy machine is marked and not ranked. */
static void test_busy_not_ranked(void **state)
{
    fx_register_suites();
    char err[RG_ERRLEN], why[RG_RANK_REASON_LEN];
    cJSON *doc = forged("", 0.5, 0, 3.0, 4);   /* half the honest time, on a busy machine */
    assert_int_equal(class_of(doc, why, sizeof why), RG_CLASS_BUSY);
    assert_string_equal(why, "busy machine: load average 3.00 on 4 CPUs");
    rg_registry *g = fresh("trust_busy.db");
    int64_t honest = store(g, fx_manifest("", 1, 1.0, 1), RG_EVIDENCE_MEASURED);
    int64_t busy = store(g, doc, RG_EVIDENCE_MEASURED);
    size_t n;
    rg_ranked *e = group_of(g, honest, &n);
    assert_int_equal(e[0].row.id, honest);
    assert_int_equal(find(e, n, busy)->rank, 0);
    assert_int_equal(find(e, n, busy)->rank_class, RG_CLASS_BUSY);
    free(e);
    assert_int_equal(first_of(g, busy), honest);
    rg_run_view v;
    assert_int_equal(rg_model_run(g, busy, &v, err, sizeof err), 0);
    assert_int_equal(v.rank, 0);
    assert_int_equal(v.rank_class, RG_CLASS_BUSY);
    char *json = rg_api_run(&v, err, sizeof err);
    assert_non_null(strstr(json, "\"rank_class\":\"busy\""));
    assert_non_null(strstr(json, "\"rank_reason\":\"busy machine: load average 3.00 on 4 CPUs\""));
    free(json);
    rg_model_run_free(&v);
    rg_registry_close(g);
}

/* Issue 41 item 2: reported runs rank among themselves from 1, measured runs
 * by intervals; no "=1" across the two kinds. */
static void test_reported_ranked_apart(void **state)
{
    fx_register_suites();
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN], why[RG_RANK_REASON_LEN];
    rg_registry *g = fresh("trust_reported.db");
    int64_t measured = store(g, fx_manifest("NVIDIA H200", 1, 1.0, 1), RG_EVIDENCE_MEASURED);
    int64_t rep[2];
    for (int k = 0; k < 2; k++) {
        fx_suite(&s);
        fx_run(&r, &s, "NVIDIA H200", 2 + k, 0.9 + 0.3 * k, 2 + k);
        for (size_t i = 0; i < r.n_workloads; i++) r.workloads[i].n_samples = 0;   /* the figures alone */
        cJSON *doc = rg_manifest_build(&r, &s, NULL, err, sizeof err);
        for (size_t i = 0; i < r.n_workloads; i++) r.workloads[i].n_samples = FX_SAMPLES;
        fx_run_free(&r);
        fx_suite_free(&s);
        if (!doc) fail_msg("build: %s", err);
        assert_int_equal(class_of(doc, why, sizeof why), RG_CLASS_REPORTED);
        rep[k] = store(g, doc, RG_EVIDENCE_IMPORTED);
    }
    size_t n;
    rg_ranked *e = group_of(g, measured, &n);
    assert_int_equal(n, 3);
    assert_int_equal(e[0].row.id, measured);   /* measured first, though the reported run is faster */
    assert_int_equal(e[0].rank, 1);
    assert_false(e[0].tied);
    assert_int_equal(find(e, n, rep[0])->rank, 1);
    assert_int_equal(find(e, n, rep[1])->rank, 2);
    assert_false(find(e, n, rep[0])->tied);
    free(e);
    assert_int_equal(first_of(g, measured), measured);
    rg_run_view v;
    assert_int_equal(rg_model_run(g, rep[1], &v, err, sizeof err), 0);
    assert_int_equal(v.rank, 2);
    assert_int_equal(v.group_size, 2);   /* of the reported table */
    assert_int_equal(v.rank_class, RG_CLASS_REPORTED);
    rg_model_run_free(&v);
    rg_registry_close(g);
}

/* A fixture run on an H200 named kernel_name, scale x the fixture's times,
 * workload 1 slow x more. */
static cJSON *named_run(const char *kernel_name, double scale, double slow, int stamp)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, "NVIDIA H200", 0, scale, stamp);
    snprintf(r.kernel_name, sizeof r.kernel_name, "%s", kernel_name);
    double t[FX_N];
    for (int i = 0; i < FX_N; i++) t[i] = r.workloads[i].time_ns.median * (i == 1 ? slow : 1.0);
    set_times(&r, t);
    cJSON *doc = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!doc) fail_msg("build: %s", err);
    fx_run_free(&r);
    fx_suite_free(&s);
    return doc;
}

/* Issue 41 item 2: one x reference per run, the same on the problem page,
 * the run page and in the API: the mean over the workloads of the group's
 * reference run's median over the run's (not the ratio of the primary
 * figures, not the record's own speedup against the suite's B200 figures);
 * an empty cell says why. */
static void test_one_x_reference(void **state)
{
    fx_register_suites();
    char err[RG_ERRLEN];
    rg_registry *g = fresh("trust_xref.db");
    cJSON *run_doc = named_run("variant-0", 1.0, 3.0, 1);
    rg_manifest m;
    assert_int_equal(rg_manifest_read(run_doc, &m, err, sizeof err), 0);
    double own = m.avg_speedup, med[FX_N], want = 0, geo_run = m.primary_ns;
    for (int i = 0; i < FX_N; i++) med[i] = m.workloads[i].median;
    rg_manifest_free(&m);
    int64_t run = store(g, run_doc, RG_EVIDENCE_MEASURED);
    cJSON *ref_doc = named_run(RG_REFERENCE_RUN_NAME " torch 2.5.1", 2.0, 1.0, 2);
    assert_int_equal(rg_manifest_read(ref_doc, &m, err, sizeof err), 0);
    for (int i = 0; i < FX_N; i++) want += m.workloads[i].median / med[i] / FX_N;
    double ratio_of_primaries = m.primary_ns / geo_run;
    rg_manifest_free(&m);
    int64_t ref = store(g, ref_doc, RG_EVIDENCE_MEASURED);
    assert_true(fabs(want - ratio_of_primaries) > 0.1);   /* the two definitions disagree here */
    assert_true(!isfinite(own) || fabs(want - own) > 0.1);
    rg_problem_view pv;
    assert_int_equal(rg_model_problem(g, DEF, &pv, err, sizeof err), 0);
    const rg_rank_entry *e = NULL;
    for (size_t i = 0; i < pv.groups[0].n; i++)
        if (pv.groups[0].e[i].id == run) e = &pv.groups[0].e[i];
    assert_non_null(e);
    assert_true(fabs(e->x_ref - want) < 1e-9);
    assert_true(fabs(e->x_ref_run - want) < 1e-9);
    assert_true(e->fast_total == FX_N && e->fast_count == 2);   /* workload 1 is slower than the reference */
    assert_true(isfinite(e->sol));
    rg_model_problem_free(&pv);
    rg_run_view v;
    assert_int_equal(rg_model_run(g, run, &v, err, sizeof err), 0);
    assert_true(fabs(v.x_ref - want) < 1e-9);
    char *json = rg_api_run(&v, err, sizeof err);
    assert_non_null(strstr(json, "\"xReferenceWhy\":null"));
    char src[64];
    snprintf(src, sizeof src, "reference run #%lld", (long long)ref);
    assert_non_null(strstr(json, src));
    free(json);
    rg_model_run_free(&v);
    rg_registry_close(g);
    /* No reference run in the group and the record's reference times are the
     * suite's B200 figures: no figure, and why. */
    g = fresh("trust_noref.db");
    run = store(g, named_run("variant-0", 1.0, 1.0, 3), RG_EVIDENCE_MEASURED);
    assert_int_equal(rg_model_problem(g, DEF, &pv, err, sizeof err), 0);
    json = rg_api_problem(&pv, err, sizeof err);
    assert_non_null(strstr(json, "\"xReference\":null"));
    assert_non_null(strstr(json, "\"xReferenceWhy\":\"no reference timed on this GPU"));
    assert_non_null(strstr(json, "\"casesFasterWhy\":\"no reference timed on this GPU"));
    free(json);
    rg_model_problem_free(&pv);
    rg_registry_close(g);
}

/* Issue 41 item 2: runs of an older version of the group's harness are
 * superseded: listed after the current ones, not ranked, never #1, however
 * fast. */
static void test_old_protocol_superseded(void **state)
{
    fx_register_suites();
    char err[RG_ERRLEN];
    assert_true(rg_version_cmp("0.1.0", "0.2.0") < 0 && rg_version_cmp("0.10.0", "0.9.1") > 0 &&
                rg_version_cmp("1.2", "1.2") == 0);
    rg_registry *g = fresh("trust_old.db");
    cJSON *old = fx_manifest("NVIDIA H200", 1, 0.5, 1);   /* twice as fast, under an older harness */
    cJSON *h = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(old, "protocol"), "spec"), "harness");
    assert_non_null(h);
    cJSON_ReplaceItemInObject(h, "version", cJSON_CreateString("0.0.9"));
    int64_t cur = store(g, fx_manifest("NVIDIA H200", 2, 1.0, 2), RG_EVIDENCE_MEASURED);
    int64_t o = store(g, old, RG_EVIDENCE_IMPORTED);
    size_t n;
    rg_ranked *e = group_of(g, cur, &n);
    assert_int_equal(n, 2);
    assert_int_equal(e[0].row.id, cur);
    assert_int_equal(e[0].rank, 1);
    assert_false(e[0].superseded);
    assert_int_equal(e[1].row.id, o);
    assert_true(e[1].superseded);
    assert_int_equal(e[1].rank, 0);
    assert_non_null(strstr(e[1].harness, " 0.0.9"));
    free(e);
    assert_int_equal(first_of(g, o), cur);
    rg_problem_view pv;
    assert_int_equal(rg_model_problem(g, DEF, &pv, err, sizeof err), 0);
    assert_int_equal(pv.groups[0].n_superseded, 1);
    assert_null(strstr(pv.groups[0].harness, "0.0.9"));
    char *json = rg_api_problem(&pv, err, sizeof err);
    assert_non_null(strstr(json, "\"superseded\":true"));
    free(json);
    rg_model_problem_free(&pv);
    rg_registry_close(g);
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_manifest_near_sol),
                                       cmocka_unit_test(test_traces_near_sol_and_partial),
                                       cmocka_unit_test(test_cpu_ceiling), cmocka_unit_test(test_busy_not_ranked),
                                       cmocka_unit_test(test_reported_ranked_apart),
                                       cmocka_unit_test(test_one_x_reference),
                                       cmocka_unit_test(test_old_protocol_superseded)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
