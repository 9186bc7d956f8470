/* SPDX-License-Identifier: Apache-2.0 */
/* test_index_field.c -- issue 25, "The problem page shows the field": in a
 * comparison group, x reference comes from the group's reference RUN (the
 * passed "reference (torch eager)" run, the fastest of several; a failed one
 * is not used), every run shows its interval, and the chart draws every
 * implementation per workload. A group without a reference run says so and
 * shows no figure. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <math.h>
#include <unistd.h>

#include "model.h"
#include "render.h"
#include "test_field_fixture.h"

#define DEF "014_rotary_embedding_with_attention_scaling_backward"
#define H200 "NVIDIA H200"
#define REF_NAME "reference (torch eager) torch 2.5.1"

static tu_scratch sc;
static char db[400];

static char *run_text(const char *gpu, const char *kernel_name, double scale, int stamp, int passed)
{
    return fx_named_run_text(gpu, kernel_name, scale, stamp, passed);
}

static int add(rg_registry *g, char *text, int64_t want) { return fx_add(g, text, want); }

/* H200 group: 1 ropegrad (1x), 2 the reference (2x), 3 a slower reference
 * (3x), 4 a failed reference faster than all (0.5x), 5 a plugin (1.5x).
 * CPU group: 6 ropegrad alone. */
static int setup(void **state)
{
    (void)state;
    if (tu_scratch_open(&sc, "rg_field")) return -1;
    snprintf(db, sizeof db, "%s/runs.db", sc.dir);
    char err[RG_ERRLEN];
    rg_registry *g;
    if (rg_registry_open(db, 1, &g, err, sizeof err)) return -1;
    int rc = add(g, run_text(H200, "variant-0", 1.0, 1, 1), 1) || add(g, run_text(H200, REF_NAME, 2.0, 2, 1), 2) ||
             add(g, run_text(H200, REF_NAME, 3.0, 3, 1), 3) || add(g, run_text(H200, REF_NAME, 0.5, 4, 0), 4) ||
             add(g, run_text(H200, "plain-014 1.0.0", 1.5, 5, 1), 5) ||
             add(g, run_text("", "cpu-avx2", 1.0, 6, 1), 6);
    rg_registry_close(g);
    return rc ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(sc.dir);
    return 0;
}

static const rg_group_view *group_of(const rg_problem_view *v, const char *device)
{
    for (size_t i = 0; i < v->n_groups; i++)
        if (strstr(v->groups[i].device, device)) return &v->groups[i];
    return NULL;
}

static const rg_rank_entry *entry(const rg_group_view *g, int64_t id)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->e[i].id == id) return &g->e[i];
    return NULL;
}

static void load(rg_problem_view *v)
{
    char err[RG_ERRLEN];
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    assert_int_equal(rg_model_problem(g, DEF, v, err, sizeof err), 0);
    rg_registry_close(g);
}

static void test_reference_run(void **state)
{
    (void)state;
    rg_problem_view v;
    load(&v);
    const rg_group_view *h = group_of(&v, H200);
    assert_non_null(h);
    assert_int_equal(h->ref_id, 2);   /* the fastest passed reference; #4 failed */
    const rg_rank_entry *own = entry(h, 1), *plug = entry(h, 5), *ref = entry(h, 2), *failed = entry(h, 4);
    assert_non_null(own);
    assert_non_null(plug);
    assert_non_null(ref);
    assert_non_null(failed);
    assert_true(fabs(own->x_ref_run - 2.0) < 0.01);
    assert_true(fabs(plug->x_ref_run - 2.0 / 1.5) < 0.01);
    assert_true(fabs(ref->x_ref_run - 1.0) < 1e-9);
    assert_true(isnan(failed->x_ref_run));
    const rg_group_view *c = group_of(&v, "Test CPU");
    assert_non_null(c);
    assert_int_equal(c->ref_id, 0);
    assert_true(isnan(c->e[0].x_ref_run));
    rg_model_problem_free(&v);
}

static void test_series(void **state)
{
    (void)state;
    rg_problem_view v;
    load(&v);
    const rg_group_view *h = group_of(&v, H200);
    /* One line per implementation (its best run): variant-0, the reference, the plugin. */
    assert_int_equal(h->n_series, 3);
    int refs = 0;
    for (size_t i = 0; i < h->n_series; i++) {
        assert_int_equal(h->series[i].n, FX_N);
        refs += h->series[i].reference;
        if (h->series[i].reference) assert_int_equal(h->series[i].id, 2);
    }
    assert_int_equal(refs, 1);
    /* The reference implementation has three runs, #2 its best; #3 and #4 fold into its row. */
    const rg_rank_entry *ref = entry(h, 2), *slow = entry(h, 3);
    assert_true(ref->impl_best && !slow->impl_best);
    assert_int_equal(ref->impl_runs, 3);
    assert_int_equal((int)h->n_impls, 3);
    rg_model_problem_free(&v);
}

static void test_page(void **state)
{
    (void)state;
    rg_problem_view v;
    load(&v);
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char err[RG_ERRLEN];
    char *html = rg_render_problem(&ctx, &v, err, sizeof err);
    assert_non_null(html);
    assert_non_null(strstr(html, "<th>95% interval</th>"));
    assert_non_null(strstr(html, "× reference</th>"));
    assert_non_null(strstr(html, "from <a class=\"reference-run\" href=\"/runs/2\">run #2</a>"));
    assert_non_null(strstr(html, "2×"));   /* ropegrad: twice as fast as the reference run */
    assert_non_null(strstr(html, "class=\"chart field\""));
    for (int s = 0; s < 3; s++) {
        char legend[32], mark[32];
        snprintf(legend, sizeof legend, "data-legend=\"s%d\"", s);
        snprintf(mark, sizeof mark, "data-series=\"s%d\"", s);
        assert_non_null(strstr(html, legend));
        assert_non_null(strstr(html, mark));
    }
    assert_non_null(strstr(html, "plain-014 1.0.0), workload #"));
    /* The CPU group has no reference run, and says how to record one. */
    assert_non_null(strstr(html, "no \"reference (torch eager)\" run in this group"));
    free(html);
    rg_model_problem_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_run),
        cmocka_unit_test(test_series),
        cmocka_unit_test(test_page),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
