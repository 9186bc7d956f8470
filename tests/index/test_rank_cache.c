/* SPDX-License-Identifier: Apache-2.0 */
/* test_rank_cache.c -- the run pages' group ranks in a group too large to
 * read every interval (model.c's rank tables, kept per registry generation):
 * the same ranks, group size and #1 as the uncached count
 * (rg_registry_rank_of) and rg_registry_first, and a run pushed through
 * another connection (as the server's push thread does) moves the
 * generation, so the next page ranks with it -- never from the old table. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "test_util.h"

#include "model.h"
#include "test_record_fixture.h"

static char db[600];
static int64_t ids[RG_INTERVAL_RANK_MAX + 2];
#define N_RUNS (RG_INTERVAL_RANK_MAX + 2)

static int setup(void **state)
{
    char err[RG_ERRLEN];
    rg_registry *g;
    fx_path(db, sizeof db, "rank-cache.db");
    unlink(db);
    if (rg_registry_open(db, 1, &g, err, sizeof err)) return -1;
    int existed, rc = 0;
    for (int i = 0; i < N_RUNS && !rc; i++) {   /* figures 1.000, 1.001, ... stored in a shuffled order */
        int k = (i * 97) % N_RUNS;
        cJSON *doc = fx_manifest("NVIDIA H200", 1, 1.0 + 0.001 * k, 1000 + k);
        rc = !doc || rg_registry_store(g, doc, RG_EVIDENCE_IMPORTED, 0, &ids[i], &existed, err, sizeof err);
        cJSON_Delete(doc);
    }
    if (rc) fprintf(stderr, "setup: %s\n", err);
    rg_registry_close(g);
    return rc ? -1 : 0;
}

static int teardown(void **state) { return tu_unlink_db(db); }

/* Every tenth run's page rank, size and #1 against the uncached answers; ranks[] filled. */
static void check_against_uncached(rg_registry *g, int *ranks)
{
    char err[RG_ERRLEN];
    for (int i = 0; i < N_RUNS; i += 10) {
        rg_run_view v;
        assert_int_equal(rg_model_run(g, ids[i], &v, err, sizeof err), 0);
        int rank, size;
        int64_t best, best_by_rank;
        assert_int_equal(rg_registry_rank_of(g, ids[i], &rank, &size, &best_by_rank, err, sizeof err), 0);
        rg_run_row row;
        assert_int_equal(rg_registry_get(g, ids[i], &row, NULL, err, sizeof err), 0);
        assert_int_equal(rg_registry_first(g, row.comparison_key, &best, err, sizeof err), 0);
        assert_int_equal(v.interval_ranked, 0);   /* ranked by the figure alone: the table's rank */
        assert_true(v.rank >= 1);
        assert_int_equal(v.rank, rank);
        assert_int_equal(v.group_size, size);
        assert_int_equal(v.first_id, best);
        ranks[i] = v.rank;
        rg_model_run_free(&v);
    }
}

static void test_push_moves_ranks(void **state)
{
    char err[RG_ERRLEN];
    rg_registry *page, *push;   /* two connections: the page's thread and the push's */
    assert_int_equal(rg_registry_open(db, 0, &page, err, sizeof err), 0);
    assert_int_equal(rg_registry_open(db, 0, &push, err, sizeof err), 0);
    int before[N_RUNS] = {0}, after[N_RUNS] = {0};
    check_against_uncached(page, before);
    check_against_uncached(page, before);   /* the second time from the table: the same */
    int64_t gen0, gen1, fast;
    assert_int_equal(rg_registry_generation(page, &gen0, err, sizeof err), 0);
    cJSON *doc = fx_manifest("NVIDIA H200", 1, 0.5, 9999);   /* faster than all */
    int existed;
    assert_int_equal(rg_registry_store(push, doc, RG_EVIDENCE_IMPORTED, 0, &fast, &existed, err, sizeof err), 0);
    cJSON_Delete(doc);
    assert_int_equal(rg_registry_generation(page, &gen1, err, sizeof err), 0);
    assert_int_not_equal(gen0, gen1);
    check_against_uncached(page, after);
    for (int i = 0; i < N_RUNS; i += 10) assert_int_equal(after[i], before[i] + 1);
    rg_run_view v;
    assert_int_equal(rg_model_run(page, fast, &v, err, sizeof err), 0);
    assert_int_equal(v.rank, 1);
    assert_int_equal(v.first_id, fast);
    assert_int_equal(v.group_size, N_RUNS + 1);
    rg_model_run_free(&v);
    rg_registry_close(push);
    rg_registry_close(page);
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_moves_ranks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
