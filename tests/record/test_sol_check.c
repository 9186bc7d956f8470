/* SPDX-License-Identifier: Apache-2.0 */
/* test_sol_check.c -- the index's own T_SOL (src/record/stats/sol_check.h): the
 * datasheet table (every entry sourced, whole-word and unambiguous names),
 * the verified / cpu / unverifiable states, T_SOL from the bundled suite's
 * bytes whatever the manifest says, and #1 (rg_registry_first). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "rank.h"
#include "test_record_fixture.h"

static void read_doc(cJSON *doc, rg_manifest *m)
{
    char err[RG_ERRLEN];
    if (rg_manifest_read(doc, m, err, sizeof err)) fail_msg("read: %s", err);
}

static void check(const rg_manifest *m, rg_sol_check *c, double *t_sol)
{
    char err[RG_ERRLEN];
    if (rg_manifest_sol_check(m, c, t_sol, err, sizeof err)) fail_msg("sol check: %s", err);
}

/* The GPUs the issue names are in the table, each with its datasheet. */
static void test_datasheet_table(void **state)
{
    static const struct {
        const char *name;
        double tbps;
    } gpus[] = {
        {"NVIDIA H200", 4.8},           {"NVIDIA H100 80GB HBM3", 3.35},   {"NVIDIA H100 PCIe", 2.0},
        {"NVIDIA B200", 8.0},           {"NVIDIA A100-SXM4-40GB", 1.555}, {"NVIDIA A100-SXM4-80GB", 2.039},
        {"NVIDIA A100 80GB PCIe", 1.935}, {"NVIDIA L40S", 0.864},         {"NVIDIA GH200 480GB", 4.0},
    };
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        const char *product, *source;
        assert_float_equal(rg_datasheet_lookup(gpus[i].name, &product, &source), gpus[i].tbps, 0);
        assert_non_null(product);
        if (!source || !strstr(source, "NVIDIA")) fail_msg("%s: no datasheet named", gpus[i].name);
    }
    /* Whole words only, and a name that matches two unrelated GPUs matches none. */
    const char *unknown[] = {"Forged GPU X9000", "NVIDIA XH200", "NVIDIA H2000", "NVIDIA H200 GB200", "", NULL};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *product = "x", *source = "x";
        assert_float_equal(rg_datasheet_lookup(unknown[i], &product, &source), 0, 0);
        assert_null(product);
        assert_null(source);
    }
}

/* A verified run's T_SOL is the bundled suite's bytes over the datasheet
 * bandwidth, whatever t_sol_ns the manifest carries. */
static void test_verified_t_sol(void **state)
{
    cJSON *doc = fx_manifest("NVIDIA H200", 1, 1.0, 1);
    rg_manifest m;
    read_doc(doc, &m);
    for (size_t i = 0; i < m.n_workloads; i++) m.workloads[i].t_sol_ns = 1e-9;   /* forged: ignored */
    rg_suite s;
    char err[RG_ERRLEN];
    assert_int_equal(rg_suite_load(RG_SOURCE_DIR "/suites/014-rope_backward", &s, err, sizeof err), 0);
    double t_sol[FX_N];
    rg_sol_check c;
    check(&m, &c, t_sol);
    assert_int_equal(c.state, RG_SOL_VERIFIED);
    assert_float_equal(c.tbps, 4.8, 0);
    assert_non_null(strstr(c.basis, "H200"));
    for (size_t i = 0; i < FX_N; i++)
        assert_float_equal(t_sol[i], s.op->bytes(&s.workloads[i], s.grad_dtype) / 4.8e3, 1e-9);
    assert_string_equal(rg_sol_state_name(c.state), "verified");
    /* The same run a hundred times faster: suspect against the index's T_SOL. */
    for (size_t i = 0; i < m.n_workloads; i++) m.workloads[i].median = t_sol[i] * 0.5;
    char why[200];
    assert_int_equal(rg_manifest_suspect(&m, why, sizeof why), 1);
    assert_non_null(strstr(why, "below its T_SOL"));
    rg_suite_free(&s);
    rg_manifest_free(&m);
    cJSON_Delete(doc);
}

/* What makes a run unverifiable, and what a CPU run is. */
static void test_states(void **state)
{
    rg_manifest m;
    rg_sol_check c;
    cJSON *doc = fx_manifest("Forged GPU X9000", 1, 0.01, 2);
    read_doc(doc, &m);
    check(&m, &c, NULL);
    assert_int_equal(c.state, RG_SOL_UNVERIFIABLE);
    assert_non_null(strstr(c.basis, "not in the index's datasheet table"));
    assert_int_equal(rg_manifest_suspect(&m, NULL, 0), 0);   /* unverifiable, not suspect */
    rg_manifest_free(&m);
    cJSON_Delete(doc);

    /* A workload the bundled suite does not have, a problem it does not know. */
    doc = fx_manifest("NVIDIA H200", 1, 1.0, 3);
    read_doc(doc, &m);
    snprintf(m.workloads[1].uuid, sizeof m.workloads[1].uuid, "00000000-0000-0000-0000-000000000000");
    check(&m, &c, NULL);
    assert_int_equal(c.state, RG_SOL_UNVERIFIABLE);
    assert_non_null(strstr(c.basis, "workload 1"));
    snprintf(m.benchmark, sizeof m.benchmark, "999_not_a_bundled_problem");
    check(&m, &c, NULL);
    assert_int_equal(c.state, RG_SOL_UNVERIFIABLE);
    assert_non_null(strstr(c.basis, "not a bundled suite"));
    rg_manifest_free(&m);
    cJSON_Delete(doc);

    /* A CPU run: no bandwidth bound, ranked as before. */
    doc = fx_manifest("", 1, 1.0, 4);
    read_doc(doc, &m);
    check(&m, &c, NULL);
    assert_int_equal(c.state, RG_SOL_CPU);
    /* ... but a "CPU" run that names a GPU of the table is held to that GPU's T_SOL. */
    snprintf(m.product, sizeof m.product, "NVIDIA H200");
    for (size_t i = 0; i < m.n_workloads; i++) m.workloads[i].median = 1;
    check(&m, &c, NULL);
    assert_int_equal(c.state, RG_SOL_VERIFIED);
    assert_int_equal(rg_manifest_suspect(&m, NULL, 0), 1);
    rg_manifest_free(&m);
    cJSON_Delete(doc);

    char err[RG_ERRLEN];
    assert_int_equal(rg_manifest_sol_check(NULL, &c, NULL, err, sizeof err), 2);
}

static int64_t store(rg_registry *g, cJSON *doc)
{
    int64_t id;
    int existed;
    char err[RG_ERRLEN];
    if (rg_registry_store(g, doc, RG_EVIDENCE_IMPORTED, 0, &id, &existed, err, sizeof err)) fail_msg("store: %s", err);
    cJSON_Delete(doc);
    return id;
}

/* #1 is the best passed, verified, non-suspect run; none when the group has none. */
static void test_first(void **state)
{
    char path[512], err[RG_ERRLEN];
    fx_path(path, sizeof path, "first.db");
    unlink(path);
    rg_registry *g;
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 0);
    int64_t fast_forged = store(g, fx_manifest("NVIDIA H200", 2, 0.01, 10));
    int64_t slow = store(g, fx_manifest("NVIDIA H200", 1, 1.2, 11));
    int64_t fast = store(g, fx_manifest("NVIDIA H200", 3, 1.0, 12));
    int64_t unknown = store(g, fx_manifest("Forged GPU X9000", 1, 1.0, 13));
    rg_run_row a, b;
    assert_int_equal(rg_registry_get(g, fast, &a, NULL, err, sizeof err), 0);
    assert_int_equal(rg_registry_get(g, unknown, &b, NULL, err, sizeof err), 0);
    int64_t first = -1;
    assert_int_equal(rg_registry_first(g, a.comparison_key, &first, err, sizeof err), 0);
    assert_int_equal(first, fast);
    assert_int_equal(rg_registry_first(g, b.comparison_key, &first, err, sizeof err), 0);
    assert_int_equal(first, 0);
    rg_ranked e;
    int ranked;
    assert_int_equal(rg_registry_rank_run(g, fast_forged, &e, &ranked, err, sizeof err), 0);
    assert_true(e.suspect && !rg_ranked_may_be_first(&e));
    assert_int_equal(rg_registry_rank_run(g, slow, &e, &ranked, err, sizeof err), 0);
    assert_true(rg_ranked_may_be_first(&e));
    assert_int_equal(rg_registry_rank_run(g, unknown, &e, &ranked, err, sizeof err), 0);
    assert_int_equal(e.sol.state, RG_SOL_UNVERIFIABLE);
    assert_false(rg_ranked_may_be_first(&e));
    assert_int_equal(rg_registry_first(NULL, a.comparison_key, &first, err, sizeof err), 2);
    rg_registry_close(g);
    unlink(path);
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datasheet_table),
        cmocka_unit_test(test_verified_t_sol),
        cmocka_unit_test(test_states),
        cmocka_unit_test(test_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
