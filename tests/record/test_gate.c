/* SPDX-License-Identifier: Apache-2.0 */
/* test_gate.c -- the regression gate's history and busy-machine rules
 * (src/record/stats/gate.h): the z-score judgement on known figures, a busy CPU run
 * never SLOW (pairwise and against history), and `runs check` choosing the
 * history rule once a line has five earlier credible runs. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "gate.h"
#include "model.h"
#include "rank.h"
#include "test_record_fixture.h"
#include "test_util.h"

static char dir[512];
static char out_text[1 << 16], err_text[1 << 14];

#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "gate");
    return tu_fresh_dir(dir);
}

static int teardown(void **state) { return tu_rm_rf(dir); }

/* A CPU fixture manifest (4 threads) recorded at load average `load` (NAN:
 * not recorded) with other processes' and steal's CPUs over the run (NAN:
 * not measured, as in records made before they were). */
static cJSON *cpu_manifest_share(double scale, int stamp, double load, double other, double steal)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, "", 0, scale, stamp);
    if (!isnan(load)) r.env.load_known = 1, r.env.load_avg_1m = load, r.env.load_cpus = 4;
    if (!isnan(other)) r.env.cpu_share = (rg_cpu_share){1, other, steal, 2.5};
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!m) fail_msg("build: %s", err);
    fx_run_free(&r);
    fx_suite_free(&s);
    return m;
}

static cJSON *cpu_manifest(double scale, int stamp, double load) { return cpu_manifest_share(scale, stamp, load, NAN, NAN); }

static void read_manifest(cJSON *doc, rg_manifest *m)
{
    char err[RG_ERRLEN];
    if (rg_manifest_read(doc, m, err, sizeof err)) fail_msg("read: %s", err);
    cJSON_Delete(doc);
}

static void test_judge(void **state)
{
    const double h[6] = {100, 101, 99, 100.5, 99.5, 100};   /* mean 100, sd ~0.71 */
    double m, sd, z;
    assert_int_equal(rg_gate_judge(h, 6, 101, 5, 0.05, &m, &sd, &z), RG_VERDICT_SAME);
    assert_true(fabs(m - 100) < 1e-12 && sd > 0.7 && sd < 0.72 && fabs(z - 1 / sd) < 1e-9);
    assert_int_equal(rg_gate_judge(h, 6, 110, 5, 0.05, &m, &sd, &z), RG_VERDICT_SLOW);
    assert_int_equal(rg_gate_judge(h, 6, 90, 5, 0.05, &m, &sd, &z), RG_VERDICT_FAST);
    /* Far beyond z, but inside the minimum effect: SAME. */
    assert_int_equal(rg_gate_judge(h, 6, 104, 5, 0.05, &m, &sd, &z), RG_VERDICT_SAME);
    /* Beyond the minimum effect, inside the history's own spread: SAME. */
    const double wide[5] = {80, 120, 90, 110, 100};
    assert_int_equal(rg_gate_judge(wide, 5, 115, 5, 0.05, &m, &sd, &z), RG_VERDICT_SAME);
    /* No spread at all: the minimum effect alone decides. */
    const double flat[5] = {100, 100, 100, 100, 100};
    assert_int_equal(rg_gate_judge(flat, 5, 106, 5, 0.05, &m, &sd, &z), RG_VERDICT_SLOW);
    assert_int_equal(rg_gate_judge(flat, 5, 103, 5, 0.05, &m, &sd, &z), RG_VERDICT_SAME);
    /* Too little history, or figures that are not positive and finite. */
    assert_int_equal(rg_gate_judge(h, 4, 200, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge(h, 6, NAN, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge(h, 6, -1, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
    const double bad[5] = {100, 100, INFINITY, 100, 100};
    assert_int_equal(rg_gate_judge(bad, 5, 200, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge(NULL, 5, 200, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
}

/* One wild run in a history: the mean and sd move and widen so far that a
 * 10% slower run is SAME; the median and MAD do not, and call it SLOW, while
 * a same-code run stays SAME under both. */
static void test_judge_robust(void **state)
{
    const double h[7] = {100, 101, 99, 100.5, 99.5, 100, 240};
    double c, s, z;
    assert_int_equal(rg_gate_judge(h, 7, 110, 5, 0.05, &c, &s, &z), RG_VERDICT_SAME);
    assert_int_equal(rg_gate_judge_robust(h, 7, 110, 5, 0.05, &c, &s, &z), RG_VERDICT_SLOW);
    assert_true(c == 100 && fabs(s - 1.4826 * 0.5) < 1e-12 && fabs(z - 10 / s) < 1e-9);   /* |deviations| median 0.5 */
    assert_int_equal(rg_gate_judge_robust(h, 7, 101, 5, 0.05, &c, &s, &z), RG_VERDICT_SAME);
    assert_int_equal(rg_gate_judge_robust(h, 7, 90, 5, 0.05, &c, &s, &z), RG_VERDICT_FAST);
    assert_int_equal(rg_gate_judge_robust(h, 6, 101, 5, 0.05, &c, &s, &z), RG_VERDICT_SAME);   /* even n */
    assert_true(c == 100);
    /* No spread: the minimum effect alone decides. */
    const double flat[5] = {100, 100, 100, 100, 100};
    assert_int_equal(rg_gate_judge_robust(flat, 5, 106, 5, 0.05, &c, &s, &z), RG_VERDICT_SLOW);
    assert_int_equal(rg_gate_judge_robust(flat, 5, 103, 5, 0.05, &c, &s, &z), RG_VERDICT_SAME);
    /* Bad input: UNCLEAR, the history left as it was (not sorted in place). */
    assert_int_equal(rg_gate_judge_robust(h, 4, 200, 5, 0.05, &c, &s, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge_robust(h, RG_GATE_LOOKBACK + 1, 200, 5, 0.05, &c, &s, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge_robust(h, 7, NAN, 5, 0.05, &c, &s, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge_robust(h, 7, 110, 0, 0.05, &c, &s, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge_robust(NULL, 7, 110, 5, 0.05, &c, &s, &z), RG_VERDICT_UNCLEAR);
    assert_true(h[6] == 240 && h[0] == 100);
}

static void test_busy(void **state)
{
    rg_manifest m;
    char why[64];
    read_manifest(cpu_manifest(1, 1, 2.0), &m);   /* half of 4 CPUs: busy */
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 1);
    assert_string_equal(why, "load average 2.00 on 4 CPUs");
    rg_manifest_free(&m);
    read_manifest(cpu_manifest(1, 1, 1.9), &m);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 0);
    rg_manifest_free(&m);
    read_manifest(cpu_manifest(1, 1, NAN), &m);   /* not recorded: not called busy */
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 0);
    rg_manifest_free(&m);
    read_manifest(cpu_manifest(1, 1, 2.5), &m);   /* a record without the share over the run */
    assert_true(isnan(m.other_cpus) && isnan(m.steal_cpus) && isnan(m.share_seconds));
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 1);
    assert_string_equal(why, "load average 2.50 on 4 CPUs");
    rg_manifest_free(&m);
    read_manifest(fx_manifest("NVIDIA H200", 0, 1, 1), &m);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 0);
    rg_manifest_free(&m);
}

/* The share over the run decides when it was measured: other processes at
 * a quarter of the CPUs or more, or steal at 5% of them or more; the load average at
 * the start no longer does. */
static void test_busy_share(void **state)
{
    rg_manifest m;
    char why[96];
    read_manifest(cpu_manifest_share(1, 1, 0.1, 1.0, 0.0), &m);
    assert_true(m.other_cpus == 1.0 && m.steal_cpus == 0.0 && m.share_seconds == 2.5);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 1);
    assert_string_equal(why, "other processes used 1.00 of 4 CPUs over the run");
    rg_manifest_free(&m);
    read_manifest(cpu_manifest_share(1, 1, 0.1, 0.95, 0.15), &m);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 0);
    assert_string_equal(why, "");
    rg_manifest_free(&m);
    read_manifest(cpu_manifest_share(1, 1, 0.1, 0.3, 0.2), &m);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 1);
    assert_string_equal(why, "steal took 0.20 of 4 CPUs over the run");
    rg_manifest_free(&m);
    /* A busy load average at the start, a quiet run: not busy. */
    read_manifest(cpu_manifest_share(1, 1, 3.5, 0.9, 0.0), &m);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 0);
    rg_manifest_free(&m);
    /* A quiet load average at the start, a busy loop started just before the run: busy. */
    read_manifest(cpu_manifest_share(1, 1, 0.2, 1.3, 0.0), &m);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 1);
    assert_string_equal(why, "other processes used 1.30 of 4 CPUs over the run");
    rg_manifest_free(&m);
}

/* The run page's Environment: the value of row `key`, NULL when absent. */
static const char *env_row(const rg_run_view *v, const char *key)
{
    for (size_t i = 0; i < v->environment.n; i++)
        if (!strcmp(v->environment.items[i].key, key)) return v->environment.items[i].value;
    return NULL;
}

static void run_view(cJSON *doc, rg_run_view *v)
{
    rg_manifest m;
    rg_run_row row;
    char err[RG_ERRLEN];
    read_manifest(doc, &m);
    memset(&row, 0, sizeof row);
    row.id = 7;
    if (rg_model_run_from_manifest(&m, &row, v, err, sizeof err)) fail_msg("model: %s", err);
    rg_manifest_free(&m);
}

/* The run page shows the share over the run and the gate's judgement of it
 * beside the load average; a record without it, the load average's. */
static void test_run_page_share(void **state)
{
    rg_run_view v;
    run_view(cpu_manifest_share(1, 1, 0.2, 2.2, 0.01), &v);
    assert_string_equal(env_row(&v, "load average (1 min)"), "0.20 on 4 online CPUs, at the run's start");
    assert_string_equal(env_row(&v, "CPU taken by others (over the run)"),
                        "other processes 2.20 of 4 CPUs, steal 0.01, over 2.5 s · busy (other processes used 2.20 of 4 "
                        "CPUs over the run): the regression gate calls it UNCLEAR, never SLOW");
    rg_model_run_free(&v);
    run_view(cpu_manifest_share(1, 1, 3.0, 0.3, 0.0), &v);
    assert_string_equal(env_row(&v, "CPU taken by others (over the run)"),
                        "other processes 0.30 of 4 CPUs, steal 0.00, over 2.5 s · not busy (others below 25% of the "
                        "CPUs, steal below 5%)");
    rg_model_run_free(&v);
    run_view(cpu_manifest(1, 1, 3.0), &v);
    assert_null(env_row(&v, "CPU taken by others (over the run)"));
    assert_non_null(strstr(env_row(&v, "load average (1 min)"), "3.00 on 4 online CPUs · busy (at or above half"));
    rg_model_run_free(&v);
}

/* A run 30% slower than its baseline: SLOW when quiet, UNCLEAR when busy. */
static void test_busy_pair_never_slow(void **state)
{
    rg_manifest base, quiet, busy;
    read_manifest(cpu_manifest(1, 1, 0.1), &base);
    read_manifest(cpu_manifest(1.3, 2, 0.1), &quiet);
    read_manifest(cpu_manifest(1.3, 3, 3.5), &busy);
    rg_check_row *rows;
    size_t n;
    char err[RG_ERRLEN];
    assert_int_equal(rg_check_runs(&base, &quiet, 0.05, 0.05, &rows, &n, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++) assert_int_equal(rows[i].verdict, RG_VERDICT_SLOW);
    free(rows);
    assert_int_equal(rg_check_runs(&base, &busy, 0.05, 0.05, &rows, &n, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].verdict, RG_VERDICT_UNCLEAR);
        assert_non_null(strstr(rows[i].why, "busy machine: load average 3.50 on 4 CPUs"));
    }
    free(rows);
    rg_manifest_free(&base);
    rg_manifest_free(&quiet);
    rg_manifest_free(&busy);
}

static int64_t store(rg_registry *g, cJSON *m)
{
    char err[RG_ERRLEN];
    int64_t id;
    int existed;
    if (rg_registry_store(g, m, RG_EVIDENCE_MEASURED, 0, &id, &existed, err, sizeof err)) fail_msg("store: %s", err);
    cJSON_Delete(m);
    return id;
}

/* Six quiet runs within 1% of each other, then: a 1% slower run SAME, a 10%
 * slower run SLOW (exit 1), the same 10% slower run recorded busy UNCLEAR
 * (exit 0); a busy run in the history is left out of it. */
static void test_history_rule(void **state)
{
    char db[600], err[RG_ERRLEN];
    snprintf(db, sizeof db, "%s/g.db", dir);
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 1, &g, err, sizeof err), 0);
    const double scale[6] = {1.0, 1.01, 0.99, 1.005, 0.995, 1.0};
    for (int i = 0; i < 6; i++) store(g, cpu_manifest(scale[i], 10 + i, 0.2));
    int64_t busy_hist = store(g, cpu_manifest(3.0, 16, 3.0));   /* far off, but busy: not history */
    int64_t same = store(g, cpu_manifest(1.01, 17, 0.2));
    rg_gate_history h;
    assert_int_equal(rg_gate_history_check(g, same, RG_GATE_Z, 0.05, &h, err, sizeof err), 0);
    assert_int_equal(h.n, 6);
    assert_int_equal(h.skipped, 1);
    assert_int_equal(h.verdict, RG_VERDICT_SAME);
    int64_t slow = store(g, cpu_manifest(1.10, 18, 0.2));
    int64_t slow_busy = store(g, cpu_manifest(1.10, 19, 2.5));
    int64_t slow_shared = store(g, cpu_manifest_share(1.10, 20, 0.2, 2.2, 0.01));
    int64_t slow_stolen = store(g, cpu_manifest_share(1.10, 21, 0.2, 0.5, 0.3));
    int64_t after = store(g, cpu_manifest_share(1.0, 22, 0.2, 0.3, 0.01));
    assert_int_equal(rg_gate_history_check(g, after, RG_GATE_Z, 0.05, &h, err, sizeof err), 0);
    assert_int_equal(h.skipped, 4);   /* the four busy runs, by load average, other processes and steal */
    assert_int_equal(h.n, 8);
    int64_t same_busy = store(g, cpu_manifest_share(1.0, 23, 0.2, 2.2, 0.01));   /* the same figure, busy */
    rg_registry_close(g);
    (void)busy_hist;
    /* A busy run says nothing either way: UNCLEAR even at the history's own figure. */
    assert_int_equal(rg("runs check %lld --db g.db", (long long)same_busy), 3);
    assert_non_null(strstr(out_text, ": UNCLEAR"));
    assert_null(strstr(out_text, ": SAME"));

    assert_int_equal(rg("runs check %lld --db g.db", (long long)same), 0);
    assert_non_null(strstr(out_text, "against the history of its line: 6 earlier credible runs"));
    assert_non_null(strstr(out_text, "1 left out (failed, suspect or busy)"));
    assert_non_null(strstr(out_text, ": SAME"));
    assert_int_equal(rg("runs check %lld --db g.db", (long long)slow), 1);
    assert_non_null(strstr(out_text, "earlier credible runs"));   /* the same-code run #8 joined the history */
    assert_non_null(strstr(out_text, ": SLOW"));
    assert_non_null(strstr(out_text, "regression"));
    assert_int_equal(rg("runs check %lld --db g.db", (long long)slow_busy), 3);
    assert_non_null(strstr(out_text, ": UNCLEAR"));
    assert_non_null(strstr(out_text, "busy machine (load average 2.50 on 4 CPUs): UNCLEAR, never SLOW"));
    assert_int_equal(rg("runs check %lld --db g.db", (long long)slow_shared), 3);
    assert_non_null(strstr(out_text, ": UNCLEAR"));
    assert_non_null(strstr(out_text, "busy machine (other processes used 2.20 of 4 CPUs over the run): UNCLEAR, never SLOW"));
    assert_int_equal(rg("runs check %lld --db g.db", (long long)slow_stolen), 3);
    assert_non_null(strstr(out_text, "busy machine (steal took 0.30 of 4 CPUs over the run): UNCLEAR, never SLOW"));
    /* A higher z threshold than the slowdown's z: SAME. */
    assert_int_equal(rg("runs check %lld --db g.db --z 100", (long long)slow), 0);
    assert_non_null(strstr(out_text, ": SAME"));
    /* --against keeps the pairwise check: 6 same-code pairs of history are too few (RG_NOISE_MIN_PAIRS) and
     * there is no calibration, so the default noise (band 24.4%) cannot tell 10% from noise: UNCLEAR. */
    assert_int_equal(rg("runs check %lld --against 1 --alpha 0.05 --db g.db", (long long)slow), 3);
    assert_non_null(strstr(out_text, "Mann-Whitney"));
    assert_non_null(strstr(out_text, "from the default 5%"));
    /* Bad --z: one line, exit 2. */
    assert_int_equal(rg("runs check %lld --db g.db --z 0", (long long)slow), 2);
    assert_int_equal(rg("runs history %lld --db g.db --z 3", (long long)slow), 2);
    assert_non_null(strstr(err_text, "--z only applies to check"));
}

/* The noise band and the pairwise verdict on known figures. */
static void test_noise_verdict(void **state)
{
    assert_true(fabs(rg_noise_k(0) - 3.090) < 1e-9);
    assert_true(fabs(rg_noise_k(9) - 4.297) < 1e-9);
    assert_true(fabs(rg_noise_k(30) - 3.385) < 1e-9);
    assert_true(rg_noise_k(50) < 3.307 && rg_noise_k(50) > 3.232);   /* between the table's 40 and 60 */
    assert_true(rg_noise_k(100000) > 3.090 && rg_noise_k(100000) < 3.091);
    for (int df = 1; df < 200; df++) assert_true(rg_noise_k(df + 1) <= rg_noise_k(df));   /* never rises */
    /* The default: 5%, k 3.09: exp(3.09 sqrt 2 0.05) = 1.2442. */
    assert_true(fabs(rg_noise_band(RG_NOISE_DEFAULT, 0) - 1.24420) < 1e-4);
    assert_true(isinf(rg_noise_band(NAN, 3)));
    /* n runs against m: sqrt(1/n + 1/m) in place of sqrt 2; three against three exp(3.09 sqrt(2/3) 0.05) = 1.1345. */
    assert_true(rg_noise_band_n(0.04, 12, 1, 1) == rg_noise_band(0.04, 12));
    assert_true(fabs(rg_noise_band_n(RG_NOISE_DEFAULT, 0, 3, 3) - 1.13445) < 1e-4);
    assert_true(fabs(rg_noise_band_n(0.04, 20, 4, 2) - exp(3.552 * sqrt(0.75) * 0.04)) < 1e-9);
    assert_true(isinf(rg_noise_band_n(0.04, 20, 0, 2)));
    const double band = 1.063;   /* sigma 1%, 9 df */
    assert_int_equal(rg_noise_verdict(1.20, 0.05, band), RG_VERDICT_SLOW);
    assert_int_equal(rg_noise_verdict(1 / 1.20, 0.05, band), RG_VERDICT_FAST);
    assert_int_equal(rg_noise_verdict(1.04, 0.05, band), RG_VERDICT_SAME);
    assert_int_equal(rg_noise_verdict(0.96, 0.05, band), RG_VERDICT_SAME);
    assert_int_equal(rg_noise_verdict(1.06, 0.05, band), RG_VERDICT_UNCLEAR);   /* beyond 5%, inside the noise */
    assert_int_equal(rg_noise_verdict(1.20, 0.05, 1.2442), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_noise_verdict(1.30, 0.05, 1.2442), RG_VERDICT_SLOW);
    assert_int_equal(rg_noise_verdict(1.30, 0.50, 1.2442), RG_VERDICT_SAME);    /* within the minimum effect */
    assert_int_equal(rg_noise_verdict(NAN, 0.05, band), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_noise_verdict(0, 0.05, band), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_noise_verdict(1.2, 0.05, 0.5), RG_VERDICT_UNCLEAR);
}

/* Where the noise comes from: the default, then a stored calibration, then
 * the machine's history once it has RG_NOISE_MIN_PAIRS same-code pairs of
 * quiet runs (busy runs, other machines and later runs left out). */
static void test_noise_sources(void **state)
{
    char db[600], err[RG_ERRLEN];
    snprintf(db, sizeof db, "%s/n.db", dir);
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 1, &g, err, sizeof err), 0);
    rg_manifest probe;
    read_manifest(cpu_manifest(1.0, 1, 0.1), &probe);
    rg_gate_noise n;
    assert_int_equal(rg_gate_noise_for(g, &probe, 0, &n, err, sizeof err), 0);
    assert_string_equal(n.source, "default");
    assert_true(n.sigma == RG_NOISE_DEFAULT && n.df == 0);
    assert_non_null(strstr(n.machine, "testhost"));
    assert_non_null(strstr(n.machine, "cpu"));
    /* A calibration of this machine, and one of another. */
    rg_gate_noise cal = {.sigma = 0.02, .df = 9, .sigma_w = 0.03, .df_w = 27, .n = 10};
    snprintf(cal.machine, sizeof cal.machine, "%s", n.machine);
    snprintf(cal.detail, sizeof cal.detail, "a suite");
    assert_int_equal(rg_registry_noise_put(g, &cal, err, sizeof err), 0);
    rg_gate_noise other = cal;
    snprintf(other.machine, sizeof other.machine, "elsewhere \xC2\xB7 X \xC2\xB7 cpu");
    other.sigma = 0.5;
    assert_int_equal(rg_registry_noise_put(g, &other, err, sizeof err), 0);
    cal.sigma = 0.015;   /* a later calibration replaces the first */
    assert_int_equal(rg_registry_noise_put(g, &cal, err, sizeof err), 0);
    rg_gate_noise bad = cal;
    bad.df = 0;
    assert_int_equal(rg_registry_noise_put(g, &bad, err, sizeof err), 2);
    assert_int_equal(rg_gate_noise_for(g, &probe, 0, &n, err, sizeof err), 0);
    assert_string_equal(n.source, "calibration");
    assert_true(n.sigma == 0.015 && n.df == 9 && n.sigma_w == 0.03 && n.df_w == 27 && n.n == 10);
    assert_string_equal(n.detail, "a suite");
    assert_true(n.created_at[0]);
    rg_gate_noise *all;
    size_t na;
    assert_int_equal(rg_registry_noise_list(g, &all, &na, err, sizeof err), 0);
    assert_int_equal(na, 2);
    free(all);
    /* History: alternating +-1% runs of the same code (log-ratios about +-2%), a busy run between
     * them that does not count; RG_NOISE_MIN_PAIRS pairs make it the source. */
    int stamp = 10;
    for (int i = 0; i < RG_NOISE_MIN_PAIRS; i++) {
        store(g, cpu_manifest(i % 2 ? 1.01 : 0.99, stamp++, 0.1));
        if (i == 3) store(g, cpu_manifest(2.0, stamp++, 3.5));   /* busy: left out */
    }
    assert_int_equal(rg_gate_noise_for(g, &probe, 0, &n, err, sizeof err), 0);
    assert_string_equal(n.source, "calibration");   /* one pair short */
    int64_t last = store(g, cpu_manifest(0.99, stamp++, 0.1));
    int64_t after = store(g, cpu_manifest(1.01, stamp++, 0.1));
    assert_int_equal(rg_gate_noise_for(g, &probe, last, &n, err, sizeof err), 0);
    assert_string_equal(n.source, "calibration");   /* only the runs stored before the one checked */
    assert_int_equal(rg_gate_noise_for(g, &probe, after, &n, err, sizeof err), 0);
    assert_string_equal(n.source, "history");
    assert_int_equal(n.df, RG_NOISE_MIN_PAIRS);
    /* d = log(1.01/0.99) each pair (the fixture's medians scale exactly): sigma = d / sqrt 2. */
    double d = log(1.01 / 0.99);
    assert_true(fabs(n.sigma - d / sqrt(2.0)) < 1e-3);
    assert_true(fabs(n.sigma_w - d / sqrt(2.0)) < 1e-3);
    assert_int_equal(n.df_w, 3 * RG_NOISE_MIN_PAIRS);
    rg_manifest_free(&probe);
    rg_registry_close(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_judge_robust),
        cmocka_unit_test(test_busy),
        cmocka_unit_test(test_busy_share),
        cmocka_unit_test(test_run_page_share),
        cmocka_unit_test(test_busy_pair_never_slow),
        cmocka_unit_test_setup_teardown(test_history_rule, setup, teardown),
        cmocka_unit_test(test_noise_verdict),
        cmocka_unit_test_setup_teardown(test_noise_sources, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
