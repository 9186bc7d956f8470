/* SPDX-License-Identifier: Apache-2.0 */
/* test_replicate_samples.c -- issue 24 point 4: `runs replicate` judges
 * agreement from the replica's samples against the original's; a min, max
 * or stddev read from a file is never evidence.
 *   - rg_samples_agree on synthetic samples: the same distribution agrees;
 *     a 3x shift, or a spread so wide that the interval cannot bound the
 *     ratio, does not; no samples cannot be judged;
 *   - an original (measured here, then edited) that claims a 3x faster
 *     median with a wide spread of samples is not replicated;
 *   - an original without samples whose min/max claim any time is
 *     "reproduced within X%", and its evidence stays what it was. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "test_util.h"

#include "test_record_fixture.h"

/* replicate runs through the harness, as the CLI's `runs replicate` does. */
static const rg_replicate_runner harness = {rg_suite_load, rg_run_suite};

#define SUITE RG_SOURCE_DIR "/suites/014-rope_backward"

static void test_samples_agree_rule(void **state)
{
    (void)state;
    double a[40], same[40], slow[40], wide[40];
    for (int i = 0; i < 40; i++) {
        a[i] = 1000 + (i * 7 % 13);        /* 1000..1012 */
        same[i] = 1001 + (i * 5 % 11);     /* the same distribution, shuffled */
        slow[i] = 3 * a[i];
        wide[i] = i % 2 ? 10 * a[i] : a[i] / 10;
    }
    rg_shift s;
    assert_int_equal(rg_samples_agree(a, 40, same, 40, RG_REPLICATE_THRESHOLD, &s), 1);
    assert_true(s.lo <= 1.01 && s.hi >= 0.99);
    assert_int_equal(rg_samples_agree(a, 40, slow, 40, RG_REPLICATE_THRESHOLD, &s), 0);
    assert_true(s.ratio > 2.9 && s.ratio < 3.1);
    /* A spread that wide bounds nothing: not agreement, whatever the medians. */
    assert_int_equal(rg_samples_agree(wide, 40, a, 40, RG_REPLICATE_THRESHOLD, &s), 0);
    assert_int_equal(rg_samples_agree(a, 0, same, 40, RG_REPLICATE_THRESHOLD, &s), -1);
    assert_int_equal(rg_samples_agree(NULL, 40, same, 40, RG_REPLICATE_THRESHOLD, NULL), -1);
    double bad[2] = {1000, -1};
    assert_int_equal(rg_samples_agree(a, 40, bad, 2, RG_REPLICATE_THRESHOLD, NULL), -1);
}

typedef enum { FORGE_WIDE_SAMPLES, FORGE_NO_SAMPLES } forge;

/* A real CPU run of two small workloads here, then edited as a forger would:
 * the workload's figures follow the edited samples (so it verifies). */
static cJSON *forged_original(forge how)
{
    rg_suite s;
    rg_run_result r;
    rg_run_options o;
    char err[RG_ERRLEN];
    if (rg_suite_load(SUITE, &s, err, sizeof err)) fail_msg("%s", err);
    rg_run_options_default(&o);
    o.backend = "cpu";
    o.warmup = 1;
    o.iterations = 12;
    o.threads = 1;
    o.timed = 1;
    o.verbose = 0;
    const int idx[2] = {2, 4};
    if (rg_run_suite(&s, idx, 2, &o, &r, err, sizeof err)) fail_msg("%s", err);
    for (size_t i = 0; i < r.n_workloads; i++) {
        rg_workload_result *w = &r.workloads[i];
        double t = w->time_ns.median;
        if (how == FORGE_WIDE_SAMPLES) {
            /* 7 of 12 samples three times faster than measured, 5 fifty times slower: */
            for (int k = 0; k < w->n_samples; k++) w->samples_ns[k] = k < 7 ? t / 3 * (1 + 0.01 * k) : 50 * t;
            rg_time_stats_compute(w->samples_ns, w->n_samples, &w->time_ns);
        } else {
            free(w->samples_ns);
            w->samples_ns = NULL;
            w->n_samples = 0;
            w->time_ns.min = 1;
            w->time_ns.max = 1e12;
            w->time_ns.stddev = 1e11;
        }
        w->gbps = w->bytes / w->time_ns.median;
    }
    fx_run_totals(&r);
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!m) fail_msg("%s", err);
    if (rg_manifest_verify(m, err, sizeof err)) fail_msg("the forged original does not verify: %s", err);
    rg_run_result_free(&r);
    rg_suite_free(&s);
    return m;
}

/* Stores the original, replicates it here; the output, and the evidence after. */
static char *replicate(forge how, int *agreed, char evidence[16])
{
    char db[600], err[RG_ERRLEN];
    fx_path(db, sizeof db, how == FORGE_WIDE_SAMPLES ? "rep-wide.db" : "rep-none.db");
    unlink(db);
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 1, &g, err, sizeof err), 0);
    cJSON *m = forged_original(how);
    int64_t id, rid;
    int existed;
    if (rg_registry_store(g, m, RG_EVIDENCE_MEASURED, 0, &id, &existed, err, sizeof err)) fail_msg("%s", err);
    cJSON_Delete(m);
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    assert_non_null(out);
    if (rg_record_replicate(g, id, SUITE, &harness, 0, out, &rid, agreed, err, sizeof err)) fail_msg("replicate: %s", err);
    fclose(out);
    rg_run_row row;
    assert_int_equal(rg_registry_get(g, id, &row, NULL, err, sizeof err), 0);
    snprintf(evidence, 16, "%s", row.evidence);
    rg_registry_close(g);
    unlink(db);
    return text;
}

static void test_wide_samples_not_replicated(void **state)
{
    (void)state;
    int agreed = -1;
    char ev[16];
    char *out = replicate(FORGE_WIDE_SAMPLES, &agreed, ev);
    if (agreed || strcmp(ev, RG_EVIDENCE_MEASURED)) fail_msg("agreed %d, evidence %s:\n%s", agreed, ev, out);
    assert_non_null(strstr(out, "DIFFERS"));
    assert_non_null(strstr(out, "did not agree"));
    free(out);
}

static void test_no_samples_only_reproduced(void **state)
{
    (void)state;
    int agreed = -1;
    char ev[16];
    char *out = replicate(FORGE_NO_SAMPLES, &agreed, ev);
    if (agreed || strcmp(ev, RG_EVIDENCE_MEASURED)) fail_msg("agreed %d, evidence %s:\n%s", agreed, ev, out);
    const char *p = strstr(out, "reproduced within ");
    if (!p) fail_msg("no 'reproduced within X%%':\n%s", out);
    double x = -1;
    assert_int_equal(sscanf(p, "reproduced within %lf%%", &x), 1);
    assert_true(x >= 0 && x < 1e6);
    assert_non_null(strstr(out, "cannot be replicated"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_agree_rule),
        cmocka_unit_test(test_wide_samples_not_replicated),
        cmocka_unit_test(test_no_samples_only_reproduced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
