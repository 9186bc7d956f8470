/* SPDX-License-Identifier: Apache-2.0 */
/* test_rank.c -- ranks with uncertainty, suspect runs, the revision a run
 * records, lines and the previous revision, and the regression check
 * (src/record/stats/rank.h), over fixture runs with many samples. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "rank.h"
#include "render.h"
#include "rg_util.h"
#include "test_record_fixture.h"

#define NS 41

/* A fixture run with NS samples per workload spread +-0.5% around
 * scale * (5, 9, 3) us (deterministic); flags selects the revision (the
 * implementation's buildFlags). fail_zero: workload 1's output was all zero. */
static cJSON *many(const char *gpu, int kernel, double scale, int stamp, const char *flags, int fail_zero)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, gpu, kernel, scale, stamp);
    snprintf(r.env.build_flags, sizeof r.env.build_flags, "%s", flags);
    double lsum = 0, sum = 0;
    for (size_t i = 0; i < r.n_workloads; i++) {
        rg_workload_result *w = &r.workloads[i];
        double t = w->time_ns.median;
        free(w->samples_ns);
        w->samples_ns = calloc(NS, sizeof *w->samples_ns);
        w->n_samples = NS;
        for (int k = 0; k < NS; k++) w->samples_ns[k] = t * (1.0 + 0.005 * sin(k * 2.399963)) + 0.25;
        rg_time_stats_compute(w->samples_ns, NS, &w->time_ns);
        w->gbps = w->bytes / w->time_ns.median;
        sum += w->time_ns.median;
        lsum += log(w->time_ns.median);
    }
    if (fail_zero) {
        r.workloads[1].check.pass = 0;
        snprintf(r.workloads[1].check.reason, sizeof r.workloads[1].check.reason,
                 "output is all zero but the reference is not");
        r.passed = FX_N - 1;
    }
    r.mean_ns = sum / FX_N;
    r.geomean_ns = exp(lsum / FX_N);
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!m) fail_msg("many: %s", err);
    fx_run_free(&r);
    fx_suite_free(&s);
    return m;
}

static void read_typed(cJSON *doc, rg_manifest *m)
{
    char err[RG_ERRLEN];
    if (rg_manifest_read(doc, m, err, sizeof err)) fail_msg("read: %s", err);
}

static void test_interval(void **state)
{
    (void)state;
    cJSON *doc = many("NVIDIA H200", 1, 1.0, 1, "f", 0);
    rg_manifest m;
    read_typed(doc, &m);
    char err[RG_ERRLEN];
    assert_int_equal(rg_manifest_verify_typed(&m, NULL, err, sizeof err), 0);
    rg_interval iv;
    assert_int_equal(rg_run_interval(&m, 0.95, &iv, err, sizeof err), 0);
    assert_true(iv.known);
    assert_true(iv.lo < iv.est && iv.est < iv.hi);
    /* +-0.5% samples: the interval is inside +-0.6% of the geomean. */
    assert_true(iv.lo > iv.est * 0.994 && iv.hi < iv.est * 1.006);
    /* A higher confidence never narrows it. */
    rg_interval wide;
    assert_int_equal(rg_run_interval(&m, 0.999, &wide, err, sizeof err), 0);
    assert_true(wide.lo <= iv.lo && wide.hi >= iv.hi);
    assert_int_equal(rg_run_interval(&m, 1.5, &iv, err, sizeof err), 2);
    char buf[96];
    assert_non_null(strstr(rg_interval_label(&wide, buf, sizeof buf), "["));
    rg_manifest_free(&m);
    cJSON_Delete(doc);

    /* The public record: one published mean, no samples: [x, x], unknown. */
    cJSON *pub = rg_json_read_file(RG_SOURCE_DIR "/tests/data/kernelindex/run-01a03529.manifest.json", err, sizeof err);
    if (!pub) fail_msg("the public record: %s", err);
    {
        read_typed(pub, &m);
        assert_int_equal(rg_run_interval(&m, 0.95, &iv, err, sizeof err), 0);
        assert_false(iv.known);
        assert_true(iv.lo == iv.est && iv.hi == iv.est);
        assert_non_null(strstr(rg_interval_label(&iv, buf, sizeof buf), "unknown"));
        rg_manifest_free(&m);
        cJSON_Delete(pub);
    }
    /* Five samples cannot bound a median at 95%: "too few samples". */
    doc = fx_manifest("NVIDIA H200", 1, 1.0, 2);
    read_typed(doc, &m);
    assert_int_equal(rg_run_interval(&m, 0.95, &iv, err, sizeof err), 0);
    assert_true(iv.known);
    assert_non_null(strstr(rg_interval_label(&iv, buf, sizeof buf), "too few samples"));
    rg_manifest_free(&m);
    cJSON_Delete(doc);
}

static void test_suspect(void **state)
{
    (void)state;
    char why[200];
    rg_manifest m;
    /* On a B200 (the suite's figures: T_SOL 1.1, 1.0, 0.4 us) a run at 5, 9, 3 us is fine... */
    cJSON *doc = many("NVIDIA B200", 1, 1.0, 3, "f", 0);
    read_typed(doc, &m);
    assert_int_equal(rg_manifest_suspect(&m, why, sizeof why), 0);
    assert_string_equal(why, "");
    rg_manifest_free(&m);
    cJSON_Delete(doc);
    /* ... one at a tenth of that is faster than the memory allows on workload 0. */
    doc = many("NVIDIA B200", 1, 0.1, 4, "f", 0);
    read_typed(doc, &m);
    assert_int_equal(rg_manifest_suspect(&m, why, sizeof why), 1);
    assert_non_null(strstr(why, "workload 0"));
    assert_non_null(strstr(why, "T_SOL"));
    rg_manifest_free(&m);
    cJSON_Delete(doc);
    /* An output that broke the all-zero rule. */
    doc = many("NVIDIA H200", 1, 1.0, 5, "f", 1);
    read_typed(doc, &m);
    assert_int_equal(rg_manifest_suspect(&m, why, sizeof why), 1);
    assert_non_null(strstr(why, "all zero"));
    rg_manifest_free(&m);
    cJSON_Delete(doc);
}

static void test_revision_recorded(void **state)
{
    (void)state;
    cJSON *doc = many("NVIDIA H200", 1, 1.0, 6, "f", 0);
    rg_manifest m;
    read_typed(doc, &m);
    char label[48];
    rg_revision_label(&m, label, sizeof label);
    if (!rg_build_git_commit()[0]) {
        /* Built from a tarball: the revision is the implementation digest. */
        printf("not built from a git checkout: the revision is the implementation digest\n");
        assert_string_equal(m.git_commit, "");
        assert_non_null(strstr(label, "impl "));
    } else {
        assert_string_equal(m.git_commit, rg_build_git_commit());
        assert_int_equal(m.git_dirty, rg_build_git_dirty());
        assert_int_equal(strncmp(label, "git ", 4), 0);
        assert_int_equal(strncmp(label + 4, m.git_commit, 12), 0);
    }
    /* The sources digest keeps its meaning: the kernel sources and flags only. */
    assert_string_equal(m.sources_digest, rg_implementation_digest());
    rg_manifest_free(&m);
    cJSON_Delete(doc);
}

static int64_t store(rg_registry *g, cJSON *m, const char *evidence, int64_t replicates_of)
{
    int64_t id;
    int existed;
    char err[RG_ERRLEN];
    if (rg_registry_store(g, m, evidence, replicates_of, &id, &existed, err, sizeof err)) fail_msg("store: %s", err);
    cJSON_Delete(m);
    return id;
}

static rg_registry *fresh(const char *name)
{
    rg_registry *g = fx_fresh_registry(name);
    if (!g) fail_msg("cannot open a fresh registry %s", name);
    return g;
}

static const rg_ranked *find(const rg_ranked *e, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (e[i].row.id == id) return &e[i];
    fail_msg("run #%lld not in the group", (long long)id);
    return NULL;
}

static void test_rank_ties_and_suspects(void **state)
{
    (void)state;
    char err[RG_ERRLEN], buf[16];
    rg_registry *g = fresh("rank.db");
    /* One group (B200): a and b 0.2% apart (their intervals overlap: a tie),
     * c 50% slower, d ten times faster than a: below T_SOL, suspect. */
    int64_t a = store(g, many("NVIDIA B200", 1, 1.0, 10, "f", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t b = store(g, many("NVIDIA B200", 2, 1.002, 11, "f", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t c = store(g, many("NVIDIA B200", 3, 1.5, 12, "f", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t d = store(g, many("NVIDIA B200", 4, 0.1, 13, "f", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t f = store(g, many("NVIDIA B200", 5, 0.9, 14, "f", 1), RG_EVIDENCE_MEASURED, 0);   /* failed */
    rg_run_row row;
    assert_int_equal(rg_registry_get(g, a, &row, NULL, err, sizeof err), 0);
    rg_ranked *e;
    size_t n;
    assert_int_equal(rg_registry_rank_group(g, row.comparison_key, NULL, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 5);
    assert_int_equal(find(e, n, a)->rank, 1);
    assert_int_equal(find(e, n, b)->rank, 1);
    assert_true(find(e, n, a)->tied && find(e, n, b)->tied);
    assert_string_equal(rg_rank_label(find(e, n, b), buf, sizeof buf), "=1");
    assert_int_equal(find(e, n, c)->rank, 3);
    assert_false(find(e, n, c)->tied);
    assert_string_equal(rg_rank_label(find(e, n, c), buf, sizeof buf), "3");
    /* The fastest run is suspect: listed after the ranked runs, never ranked. */
    assert_true(find(e, n, d)->suspect);
    assert_false(find(e, n, d)->confirmed);
    assert_int_equal(find(e, n, d)->rank, 0);
    assert_int_equal(find(e, n, d)->rank_class, RG_CLASS_SUSPECT);
    assert_non_null(strstr(find(e, n, d)->rank_reason, "suspect: "));
    assert_int_equal(find(e, n, a)->rank_class, RG_CLASS_MEASURED);
    assert_int_equal(find(e, n, f)->rank_class, RG_CLASS_FAILED);
    /* A failed run is not ranked, and is last. */
    assert_int_equal(find(e, n, f)->rank, 0);
    assert_string_equal(rg_rank_label(find(e, n, f), buf, sizeof buf), "-");
    assert_int_equal(e[n - 1].row.id, f);
    assert_int_equal(e[n - 2].row.id, d);
    free(e);
    int size;
    /* A replication here that agreed confirms the suspect run: it ranks by its interval, first. */
    int64_t d2 = store(g, many("NVIDIA B200", 4, 0.1, 15, "f", 0), RG_EVIDENCE_REPLICATED, d);
    int upgraded;
    assert_int_equal(rg_registry_link_replication(g, d, d2, 1, FX_N, FX_N, &upgraded, err, sizeof err), 0);
    assert_true(upgraded);
    rg_ranked me;
    assert_int_equal(rg_registry_rank_run(g, d, &me, &size, err, sizeof err), 0);
    assert_true(me.suspect && me.confirmed);
    assert_int_equal(me.rank, 1);
    rg_registry_close(g);
}

static void test_line_and_previous_revision(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    rg_registry *g = fresh("line.db");
    /* One line (kernel 1) over two revisions, a rerun of the second, and another line (kernel 2). */
    int64_t r1 = store(g, many("NVIDIA H200", 1, 1.0, 20, "rev-1", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t k2 = store(g, many("NVIDIA H200", 2, 1.0, 21, "rev-1", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t r2 = store(g, many("NVIDIA H200", 1, 1.2, 22, "rev-2", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t r2b = store(g, many("NVIDIA H200", 1, 1.2, 23, "rev-2", 0), RG_EVIDENCE_MEASURED, 0);
    rg_ranked *e;
    size_t n;
    assert_int_equal(rg_registry_line(g, r2b, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(e[0].row.id, r1);
    assert_int_equal(e[1].row.id, r2);
    assert_int_equal(e[2].row.id, r2b);
    assert_string_equal(e[1].revision, e[2].revision);
    assert_string_not_equal(e[0].row.implementation_digest, e[1].row.implementation_digest);
    free(e);
    int64_t base;
    assert_int_equal(rg_registry_previous_revision(g, r2b, &base, err, sizeof err), 0);
    assert_int_equal(base, r1);   /* not r2: the same revision */
    assert_int_equal(rg_registry_previous_revision(g, r1, &base, err, sizeof err), 0);
    assert_int_equal(base, 0);    /* the first revision */
    assert_int_equal(rg_registry_previous_revision(g, k2, &base, err, sizeof err), 0);
    assert_int_equal(base, 0);    /* alone in its line */
    assert_int_equal(rg_registry_line(g, 999, &e, &n, err, sizeof err), 1);

    /* The trend chart: one point per run, an interval whisker at each. */
    assert_int_equal(rg_registry_line(g, r1, &e, &n, err, sizeof err), 0);
    rg_buf b = {0};
    rg_chart_trend(&b, e, n);
    char *svg = rg_buf_finish(&b, err, sizeof err);
    assert_non_null(svg);
    int points = 0, whiskers = 0;
    for (const char *p = svg; (p = strstr(p, "<circle class=\"point")); p++) points++;
    for (const char *p = svg; (p = strstr(p, "<line class=\"interval\"")); p++) whiskers++;
    assert_int_equal(points, 3);
    assert_int_equal(whiskers, 3);
    assert_non_null(strstr(svg, "run #1, "));
    free(svg);
    free(e);

    /* Alerts: the latest revision of kernel 1's line is 20% slower than the
     * previous revision on every workload; kernel 2's line has one revision. */
    rg_regression *rr;
    size_t nrr;
    assert_int_equal(rg_registry_regressions(g, RG_STATS_ALPHA, RG_STATS_THRESHOLD, 1, &rr, &nrr, err, sizeof err), 0);
    assert_int_equal(nrr, 1);
    assert_int_equal(rr[0].run_id, r2b);
    assert_int_equal(rr[0].base_id, r1);
    assert_int_equal(rr[0].n_slow, FX_N);
    char *json = rg_regressions_json(rr, nrr, RG_STATS_ALPHA, RG_STATS_THRESHOLD, err, sizeof err);
    assert_non_null(json);
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "regressions");
    assert_int_equal(cJSON_GetArraySize(list), 1);
    const cJSON *first = cJSON_GetArrayItem(list, 0);
    assert_int_equal((int)cJSON_GetObjectItemCaseSensitive(first, "run")->valuedouble, (int)r2b);
    const cJSON *w0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(first, "workloads"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w0, "verdict")->valuestring, "SLOW");
    assert_float_equal(cJSON_GetObjectItemCaseSensitive(w0, "ratio")->valuedouble, 1.2, 0.01);
    cJSON_Delete(doc);
    free(json);
    rg_regressions_free(rr, nrr);
    /* A fix: a third revision back at the first's speed is no regression against the second. */
    int64_t r3 = store(g, many("NVIDIA H200", 1, 1.0, 24, "rev-3", 0), RG_EVIDENCE_MEASURED, 0);
    assert_int_equal(rg_registry_regressions(g, RG_STATS_ALPHA, RG_STATS_THRESHOLD, 1, &rr, &nrr, err, sizeof err), 0);
    assert_int_equal(nrr, 0);
    rg_regressions_free(rr, nrr);
    assert_int_equal(rg_registry_regressions(g, RG_STATS_ALPHA, RG_STATS_THRESHOLD, 0, &rr, &nrr, err, sizeof err), 0);
    assert_int_equal(nrr, 1);
    assert_int_equal(rr[0].run_id, r3);
    assert_int_equal(rr[0].base_id, r2b);
    assert_int_equal(rr[0].n_fast, FX_N);
    rg_regressions_free(rr, nrr);
    rg_registry_close(g);
}

static void test_check_runs(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    rg_manifest base, same, slow, fast;
    cJSON *d0 = many("NVIDIA H200", 1, 1.0, 30, "f", 0), *d1 = many("NVIDIA H200", 1, 1.001, 31, "f", 0),
          *d2 = many("NVIDIA H200", 1, 1.2, 32, "f", 0), *d3 = many("NVIDIA H200", 1, 0.8, 33, "f", 0);
    read_typed(d0, &base);
    read_typed(d1, &same);
    read_typed(d2, &slow);
    read_typed(d3, &fast);
    rg_check_row *r;
    size_t n;
    const rg_manifest *runs[3] = {&same, &slow, &fast};
    const rg_verdict want[3] = {RG_VERDICT_SAME, RG_VERDICT_SLOW, RG_VERDICT_FAST};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(rg_check_runs(&base, runs[k], RG_STATS_ALPHA, RG_STATS_THRESHOLD, &r, &n, err, sizeof err), 0);
        assert_int_equal(n, FX_N);
        for (size_t i = 0; i < n; i++) {
            assert_true(r[i].have);
            if (r[i].verdict != want[k])
                fail_msg("case %d workload %zu: %s, ratio %.4f [%.4f, %.4f] p %.3g", k, i, rg_verdict_name(r[i].verdict),
                         r[i].shift.ratio, r[i].shift.lo, r[i].shift.hi, r[i].shift.p);
        }
        if (k == 1) assert_float_equal(r[0].shift.ratio, 1.2, 0.01);
        free(r);
    }
    /* Bad input: an alpha outside (0, 1). */
    assert_int_equal(rg_check_runs(&base, &slow, 1.5, 0.05, &r, &n, err, sizeof err), 2);
    /* Five samples a side: no verdict can be significant at 1%: never SLOW. */
    cJSON *f0 = fx_manifest("NVIDIA H200", 1, 1.0, 34), *f1 = fx_manifest("NVIDIA H200", 1, 1.2, 35);
    rg_manifest m0, m1;
    read_typed(f0, &m0);
    read_typed(f1, &m1);
    assert_int_equal(rg_check_runs(&m0, &m1, RG_STATS_ALPHA, RG_STATS_THRESHOLD, &r, &n, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++) assert_int_not_equal(r[i].verdict, RG_VERDICT_SLOW);
    free(r);
    rg_manifest_free(&m0), rg_manifest_free(&m1), cJSON_Delete(f0), cJSON_Delete(f1);
    rg_manifest_free(&base), rg_manifest_free(&same), rg_manifest_free(&slow), rg_manifest_free(&fast);
    cJSON_Delete(d0), cJSON_Delete(d1), cJSON_Delete(d2), cJSON_Delete(d3);
}

/* The pages: ties and the method on the problem and run pages, suspect
 * flags, the history page's trend chart, the front page's regressions. */
static void test_pages(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    rg_registry *g = fresh("pages.db");
    int64_t a = store(g, many("NVIDIA B200", 1, 1.0, 60, "rev-1", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t b = store(g, many("NVIDIA B200", 2, 1.002, 61, "rev-1", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t d = store(g, many("NVIDIA B200", 4, 0.1, 62, "rev-1", 0), RG_EVIDENCE_MEASURED, 0);
    int64_t a2 = store(g, many("NVIDIA B200", 1, 1.2, 63, "rev-2", 0), RG_EVIDENCE_MEASURED, 0);
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);

    rg_run_view v;
    assert_int_equal(rg_model_run(g, b, &v, err, sizeof err), 0);
    char *html = rg_render_run(&ctx, &v, err, sizeof err);
    assert_non_null(html);
    assert_non_null(strstr(html, "Rank =1 of 3 in its comparison group (tied"));   /* the suspect run is not ranked */
    assert_non_null(strstr(html, "share a rank"));
    assert_non_null(strstr(html, "id=\"interval\">95% interval "));
    assert_non_null(strstr(html, "id=\"history-link\""));
    assert_null(strstr(html, "id=\"suspect\""));
    free(html);
    rg_model_run_free(&v);
    /* The suspect run: flagged, listed, not ranked. */
    assert_int_equal(rg_model_run(g, d, &v, err, sizeof err), 0);
    html = rg_render_run(&ctx, &v, err, sizeof err);
    assert_non_null(html);
    assert_non_null(strstr(html, "id=\"suspect\""));
    assert_non_null(strstr(html, "below its T_SOL"));
    assert_non_null(strstr(html, "Not ranked: suspect"));
    assert_non_null(strstr(html, "id=\"rank-class\">Trust: <span class=\"badge suspect\">suspect</span> suspect: "));
    free(html);
    char *json = rg_api_run(&v, err, sizeof err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"suspect\":true"));
    assert_non_null(strstr(json, "\"rank_class\":\"suspect\""));
    assert_non_null(strstr(json, "\"rank_reason\":\"suspect: workload "));
    free(json);
    rg_model_run_free(&v);

    rg_problem_view pv;
    assert_int_equal(rg_model_problem(g, "014_rotary_embedding_with_attention_scaling_backward", &pv, err, sizeof err), 0);
    html = rg_render_problem(&ctx, &pv, err, sizeof err);
    assert_non_null(html);
    assert_non_null(strstr(html, "<td class=\"rank\">=1</td>"));
    assert_non_null(strstr(html, "badge suspect"));
    assert_non_null(strstr(html, "id=\"rank-method\""));
    free(html);
    rg_model_problem_free(&pv);

    rg_compare_view cv;
    assert_int_equal(rg_model_compare(g, a, a2, &cv, err, sizeof err), 0);
    assert_true(cv.n == FX_N && cv.rows[0].shift);
    assert_float_equal(cv.rows[0].ratio, 1.2, 0.01);
    html = rg_render_compare(&ctx, &cv, err, sizeof err);
    assert_non_null(html);
    assert_non_null(strstr(html, "SLOW (p "));
    assert_non_null(strstr(html, "Hodges-Lehmann"));
    free(html);
    rg_model_compare_free(&cv);
    assert_int_equal(rg_model_compare(g, a, d, &cv, err, sizeof err), 0);
    html = rg_render_compare(&ctx, &cv, err, sizeof err);
    assert_non_null(strstr(html, "badge suspect"));
    assert_non_null(strstr(html, "FAST (p "));
    free(html);
    rg_model_compare_free(&cv);

    rg_history_view hv;
    assert_int_equal(rg_model_history(g, a, &hv, err, sizeof err), 0);
    assert_int_equal(hv.n, 2);
    assert_int_equal(hv.e[1].row.id, a2);
    html = rg_render_history(&ctx, &hv, err, sizeof err);
    assert_non_null(html);
    assert_non_null(strstr(html, "<svg class=\"trend\""));
    assert_non_null(strstr(html, "class=\"interval\""));
    assert_non_null(strstr(html, "<table id=\"history\">"));
    free(html);
    rg_model_history_free(&hv);

    rg_index_view iv;
    assert_int_equal(rg_model_index(g, &iv, err, sizeof err), 0);
    assert_true(iv.alerts_checked);
    assert_int_equal(iv.n_alerts, 1);
    assert_int_equal(iv.alerts[0].run_id, a2);
    html = rg_render_index(&ctx, &iv, err, sizeof err);
    assert_non_null(html);
    assert_non_null(strstr(html, "is SLOW on 3 of 3 workloads"));
    assert_non_null(strstr(html, "/api/regressions"));
    free(html);
    rg_model_index_free(&iv);
    rg_registry_close(g);
}

/* A tree with a repeated member name prints as text the strict reader
 * refuses: the registry refuses to store it rather than store what it
 * cannot read back (found by fuzz_registry_import). */
static void test_store_refuses_unreadable(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    rg_registry *g = fresh("dup.db");
    cJSON *doc = fx_manifest("NVIDIA H200", 1, 1.0, 70);
    cJSON_AddItemToObject(doc, "protocol", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(doc, "protocol"), 1));
    int64_t id;
    int existed;
    assert_int_equal(rg_registry_store(g, doc, RG_EVIDENCE_IMPORTED, 0, &id, &existed, err, sizeof err), 2);
    assert_non_null(strstr(err, "repeated"));
    cJSON_Delete(doc);
    rg_run_row *rows;
    size_t n;
    assert_int_equal(rg_registry_list(g, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 0);
    free(rows);
    rg_registry_close(g);
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interval),
        cmocka_unit_test(test_suspect),
        cmocka_unit_test(test_revision_recorded),
        cmocka_unit_test(test_rank_ties_and_suspects),
        cmocka_unit_test(test_line_and_previous_revision),
        cmocka_unit_test(test_check_runs),
        cmocka_unit_test(test_pages),
        cmocka_unit_test(test_store_refuses_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
