/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_time.c -- issue 24 points 5 and 6: observedAt is an RFC 3339
 * date-time (the grammar of section 5.6, ranges of 5.7) and not more than a
 * day ahead of the index's clock; history and alerts order by the index's
 * receipt time where an observed time is not credible; zero, negative and
 * non-finite latencies (primary figure, workload figures, samples) are
 * refused by verify and by import. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#include "rank.h"
#include "test_record_fixture.h"

#define PUBLIC RG_SOURCE_DIR "/tests/data/kernelindex/run-01a03529.manifest.json"

static void test_rfc3339_grammar(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double epoch;   /* NAN: must be refused */
    } cases[] = {
        {"1970-01-01T00:00:00Z", 0},
        {"2026-06-06T11:08:16.947Z", 1780744096.947},
        {"1985-04-12T23:20:50.52Z", 482196050.52},               /* RFC 3339 5.8 */
        {"1996-12-19T16:39:57-08:00", 851042397},                 /* 5.8 */
        {"1990-12-31T23:59:60Z", 662688000},                      /* 5.8: a leap second */
        {"1990-12-31T15:59:60-08:00", 662688000},                 /* 5.8: the same, local */
        {"1937-01-01T12:00:27.87+00:20", -1041337172.13},         /* 5.8: Amsterdam */
        {"2026-12-01t10:00:00z", 1796119200},                     /* 5.6 NOTE: lower case t, z */
        {"2024-02-29T00:00:00+00:00", 1709164800},                /* a leap day */
        {"2026-12-01T10:00:00-00:00", 1796119200},                /* 4.3: unknown local offset */
        {"2026-12-01T10:00:00.123456789+05:30", 1796099400.123456789},
        {"2026-13-01T10:00:00Z", NAN},                            /* month 13 */
        {"2026-00-01T10:00:00Z", NAN},
        {"2026-02-29T10:00:00Z", NAN},                            /* not a leap year */
        {"2100-02-29T10:00:00Z", NAN},                            /* nor 2100 */
        {"2026-04-31T10:00:00Z", NAN},
        {"2026-12-01T24:00:00Z", NAN},
        {"2026-12-01T10:60:00Z", NAN},
        {"2026-12-01T10:00:61Z", NAN},
        {"2026-12-01T10:00:60Z", NAN},                            /* a leap second not at 23:59 UTC */
        {"2026-12-01T10:00:00+24:00", NAN},
        {"2026-12-01T10:00:00+05:60", NAN},
        {"2026-12-01T10:00:00+0530", NAN},
        {"2026-12-01T10:00:00", NAN},                             /* no offset */
        {"2026-12-01 10:00:00Z", NAN},                            /* the note's space: not the grammar */
        {"2026-12-01 10:00:00", NAN},
        {"2026-12-01T10:00:00.Z", NAN},                           /* secfrac needs a digit */
        {"2026-12-01T10:00Z", NAN},
        {"2026-12-01", NAN},
        {"26-12-01T10:00:00Z", NAN},
        {"2026-1-01T10:00:00Z", NAN},
        {"2026-12-01T10:00:00Zjunk", NAN},
        {"2026-12-01T10:00:00ZZ", NAN},
        {"+2026-12-01T10:00:00Z", NAN},
        {"yesterday", NAN},
        {"", NAN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double t = -12345;
        int rc = rg_rfc3339_parse(cases[i].text, &t);
        if (isnan(cases[i].epoch)) {
            if (rc == 0) fail_msg("\"%s\" was accepted", cases[i].text);
        } else {
            if (rc) fail_msg("\"%s\" was refused", cases[i].text);
            if (fabs(t - cases[i].epoch) > 1e-3) fail_msg("\"%s\": %.3f, wanted %.3f", cases[i].text, t, cases[i].epoch);
        }
    }
    double t;
    assert_int_equal(rg_rfc3339_parse(NULL, &t), -1);
    assert_int_equal(rg_rfc3339_parse("1970-01-01T00:00:00Z", NULL), -1);
}

static char *public_text(void)
{
    size_t n;
    char *t = tu_slurp(PUBLIC, &n);
    assert_non_null(t);
    return t;
}

/* The public record with run.spec edited by f (its run digest follows: no
 * digest names the run object). */
static char *public_edited(void (*f)(cJSON *run_spec, void *), void *ctx)
{
    char *t = public_text(), err[RG_ERRLEN];
    cJSON *d = rg_json_parse_strict(t, strlen(t), "public", err, sizeof err);
    free(t);
    assert_non_null(d);
    f(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "run"), "spec"), ctx);
    char *out = rg_json_print(d, 1, err, sizeof err);
    cJSON_Delete(d);
    assert_non_null(out);
    return out;
}

static void set_observed(cJSON *spec, void *ctx)
{
    cJSON_ReplaceItemInObject(spec, "observedAt", cJSON_CreateString((const char *)ctx));
}

/* rg_manifest_parse_verified (verify + import + POST /api/runs): the code and a one-line reason. */
static int import_check(const char *text, char *err, size_t errlen)
{
    cJSON *out = NULL;
    int rc = rg_manifest_parse_verified(text, strlen(text), NULL, &out, NULL, err, errlen);
    cJSON_Delete(out);
    return rc;
}

static void utc(time_t t, char out[32])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void test_observed_at_refused(void **state)
{
    (void)state;
    char err[RG_ERRLEN], soon[32], later[32];
    utc(time(NULL) + 3600, soon);
    utc(time(NULL) + 3 * 86400, later);
    const char *bad[] = {"yesterday", "2026-13-01T10:00:00Z", "2026-12-01 10:00:00", "2026-12-01T10:00:00", later,
                         "2999-01-01T00:00:00Z"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *t = public_edited(set_observed, (void *)bad[i]);
        int rc = import_check(t, err, sizeof err);
        if (rc == 0) fail_msg("observedAt \"%s\" was imported", bad[i]);
        assert_null(strchr(err, '\n'));
        assert_non_null(strstr(err, "observedAt"));
        free(t);
    }
    /* An hour ahead (clocks differ) and the record's own date are fine. */
    const char *good[] = {soon, "2026-06-06T11:08:16.947Z"};
    for (size_t i = 0; i < 2; i++) {
        char *t = public_edited(set_observed, (void *)good[i]);
        if (import_check(t, err, sizeof err)) fail_msg("observedAt \"%s\" refused: %s", good[i], err);
        free(t);
    }
}

typedef struct latency_edit {
    const char *mean;   /* the number's text */
} latency_edit;

static void set_latency(cJSON *spec, void *ctx)
{
    const latency_edit *e = ctx;
    cJSON *tm = cJSON_GetObjectItem(spec, "timing");
    cJSON *v = cJSON_Parse(e->mean);
    assert_non_null(v);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(tm, "latencyNs"), "mean", v);
    /* latency_ms states the same figure: keep the two consistent. */
    cJSON *mt = cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "sourceNative"), "metrics");
    cJSON_ReplaceItemInObject(mt, "latency_ms", cJSON_CreateNumber(v->valuedouble / 1e6));
}

static void test_primary_latency_refused(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    const char *bad[] = {"0", "-5406", "-0.0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        latency_edit e = {bad[i]};
        char *t = public_edited(set_latency, &e);
        int rc = import_check(t, err, sizeof err);
        if (rc == 0) fail_msg("latencyNs.mean %s was imported", bad[i]);
        assert_null(strchr(err, '\n'));
        assert_non_null(strstr(err, "finite and positive"));
        free(t);
    }
    latency_edit ok = {"5406"};
    char *t = public_edited(set_latency, &ok);
    if (import_check(t, err, sizeof err)) fail_msg("the public record refused: %s", err);
    free(t);
}

/* A ropegrad run whose samples hold a zero (its statistics follow the samples,
 * so every figure it states twice agrees). */
static cJSON *run_with_sample(double sample)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, "NVIDIA H200", 1, 1.0, 7);
    rg_workload_result *w = &r.workloads[1];
    w->samples_ns[0] = sample;
    rg_time_stats_compute(w->samples_ns, w->n_samples, &w->time_ns);
    w->gbps = w->bytes / w->time_ns.median;
    fx_run_totals(&r);
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    fx_run_free(&r);
    fx_suite_free(&s);
    if (!m) fail_msg("%s", err);
    return m;
}

static void test_sample_latency_refused(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    const double bad[] = {0.0, -3.0};
    for (size_t i = 0; i < 2; i++) {
        cJSON *m = run_with_sample(bad[i]);
        int rc = rg_manifest_verify(m, err, sizeof err);
        if (rc == 0) fail_msg("verify passed a sample of %g", bad[i]);
        if (!strstr(err, "samples_ns")) fail_msg("%s", err);
        assert_non_null(strstr(err, "finite and positive"));
        char *t = rg_json_print(m, 0, err, sizeof err);
        assert_non_null(t);
        assert_int_not_equal(import_check(t, err, sizeof err), 0);
        assert_null(strchr(err, '\n'));
        free(t);
        cJSON_Delete(m);
    }
    cJSON *m = run_with_sample(9000.5);
    if (rg_manifest_verify(m, err, sizeof err)) fail_msg("a positive sample refused: %s", err);
    cJSON_Delete(m);
}

/* A fixture run with another observedAt (stored as an older ropegrad would
 * have: the store itself does not judge the clock); revision != NULL names
 * another implementation digest (another revision of the same line). */
static int64_t store_revision(rg_registry *g, int kernel, int stamp, const char *observed, const char *revision)
{
    cJSON *m = fx_manifest("NVIDIA H200", kernel, 1.0, stamp);
    assert_non_null(m);
    cJSON *spec = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "run"), "spec");
    cJSON_ReplaceItemInObject(spec, "observedAt", cJSON_CreateString(observed));
    if (revision) cJSON_ReplaceItemInObject(spec, "implementationDigest", cJSON_CreateString(revision));
    int64_t id;
    int existed;
    char err[RG_ERRLEN];
    if (rg_registry_store(g, m, RG_EVIDENCE_MEASURED, 0, &id, &existed, err, sizeof err)) fail_msg("%s", err);
    cJSON_Delete(m);
    return id;
}

static int64_t store_observed(rg_registry *g, int kernel, int stamp, const char *observed)
{
    return store_revision(g, kernel, stamp, observed, NULL);
}

/* A new registry at db (named name), and soon: six hours from now (a credible observed time). */
static rg_registry *fresh_registry(char *db, size_t n, const char *name, char soon[32])
{
    char err[RG_ERRLEN];
    fx_path(db, n, name);
    unlink(db);
    rg_registry *g;
    if (rg_registry_open(db, 1, &g, err, sizeof err)) fail_msg("%s", err);
    utc(time(NULL) + 6 * 3600, soon);
    return g;
}

/* History orders by the receipt time where the observed time is not
 * credible (not RFC 3339, or more than a day after the index received it). */
static void test_history_orders_by_receipt(void **state)
{
    (void)state;
    char db[600], err[RG_ERRLEN], soon[32];
    rg_registry *g = fresh_registry(db, sizeof db, "time.db", soon);
    int64_t future = store_observed(g, 1, 1, "2999-01-01T00:00:00Z");
    int64_t words = store_observed(g, 1, 2, "~tomorrow");
    int64_t credible = store_observed(g, 1, 3, soon);
    int64_t old = store_observed(g, 1, 4, "2026-01-05T10:00:00+01:00");
    rg_ranked *e;
    size_t n;
    assert_int_equal(rg_registry_line(g, credible, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 4);
    /* old (January), then the two received now (by id), then the credible one six hours ahead. */
    assert_int_equal(e[0].row.id, old);
    assert_int_equal(e[1].row.id, future);
    assert_int_equal(e[2].row.id, words);
    assert_int_equal(e[3].row.id, credible);
    free(e);
    rg_run_row row;
    assert_int_equal(rg_registry_get(g, future, &row, NULL, err, sizeof err), 0);
    double received;
    assert_int_equal(rg_rfc3339_parse(row.created_at, &received), 0);
    assert_true(rg_run_time(&row) == received);
    rg_registry_close(g);
    unlink(db);
}

/* The regressions feed takes each line's latest run by the same order: a run
 * claiming the year 2999 is not the latest once a credible later one exists. */
static void test_regressions_latest_by_receipt(void **state)
{
    (void)state;
    char db[600], err[RG_ERRLEN], soon[32];
    rg_registry *g = fresh_registry(db, sizeof db, "time-alerts.db", soon);
    static const char rev_a[] = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    static const char rev_b[] = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    int64_t claimed = store_revision(g, 1, 1, "2999-01-01T00:00:00Z", rev_a);
    int64_t credible = store_revision(g, 1, 2, soon, rev_b);
    rg_regression *r;
    size_t n;
    assert_int_equal(rg_registry_regressions(g, 0.01, 0.05, 0, &r, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].run_id, credible);
    assert_int_equal(r[0].base_id, claimed);
    rg_regressions_free(r, n);
    rg_registry_close(g);
    unlink(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339_grammar),
        cmocka_unit_test(test_observed_at_refused),
        cmocka_unit_test(test_primary_latency_refused),
        cmocka_unit_test(test_sample_latency_refused),
        cmocka_unit_test(test_history_orders_by_receipt),
        cmocka_unit_test(test_regressions_latest_by_receipt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
