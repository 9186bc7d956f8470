/* SPDX-License-Identifier: Apache-2.0 */
/* test_rank_tables.c -- a group above RG_INTERVAL_RANK_MAX runs, ranked from
 * the rank tables (rank_tables.h): a run page's rank, group size and #1 are
 * the registry's (counted), also right after a push changed them, through
 * the model and through the server's cached pages; a table is built once per
 * generation, and the writer's warm build is the one the next page uses. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "rank_tables.h"
#include "test_record_fixture.h"
#include "test_serve_fixture.h"
#include "test_util.h"

#define TOKEN "test-token-0123456789abcdef"
#define GROUP (RG_INTERVAL_RANK_MAX + 10)

static char db[600], tokfile[600];
static int next_stamp = 1;

/* A run of the one group (kernel 1 on an H200), scale times the fixture's figures, as JSON text. */
static char *run_text(double scale)
{
    char *t = fx_manifest_text("NVIDIA H200", 1, scale, next_stamp++);
    if (!t) fail_msg("no manifest");
    return t;
}

static int64_t import(rg_registry *g, double scale)
{
    int64_t id = fx_import(g, "NVIDIA H200", 1, scale, next_stamp++);
    if (id < 0) fail_msg("import failed");
    return id;
}

/* GROUP runs of one comparison group, slower with each id. */
static int setup(void **state)
{
    fx_path(db, sizeof db, "rank_tables.db");
    fx_path(tokfile, sizeof tokfile, "rank_tables.token");
    char err[RG_ERRLEN];
    if (fx_token_file(tokfile, TOKEN)) return -1;
    tu_unlink_db(db);
    rg_registry *g;
    if (rg_registry_open(db, 1, &g, err, sizeof err)) return -1;
    for (int i = 0; i < GROUP; i++) import(g, 1.0 + 0.01 * i);
    rg_registry_close(g);
    return 0;
}

static int teardown(void **state)
{
    tu_unlink_db(db);
    unlink(tokfile);
    return 0;
}

/* The page of id agrees with the registry's own count (rg_registry_rank_of). */
static void page_matches_registry(rg_registry *g, int64_t id, int *rank_out, int *size_out, int64_t *first_out)
{
    char err[RG_ERRLEN];
    int rank, size;
    int64_t first;
    assert_int_equal(rg_registry_rank_of(g, id, &rank, &size, &first, err, sizeof err), 0);
    rg_run_view v;
    assert_int_equal(rg_model_run(g, id, &v, err, sizeof err), 0);
    assert_false(v.interval_ranked);   /* above RG_INTERVAL_RANK_MAX: the tables' path */
    if (v.rank != rank || v.group_size != size || v.first_id != first)
        fail_msg("run #%lld: page rank %d of %d, #1 %lld; registry %d of %d, #1 %lld", (long long)id, v.rank,
                 v.group_size, (long long)v.first_id, rank, size, (long long)first);
    rg_model_run_free(&v);
    if (rank_out) *rank_out = rank;
    if (size_out) *size_out = size;
    if (first_out) *first_out = first;
}

/* A push through another connection (the writer's) moves every rank below
 * it: the next page shows the new rank at once, and the group is ordered
 * once for the new generation, not once per page. */
static void test_push_moves_ranks(void **state)
{
    char err[RG_ERRLEN];
    rg_registry *g, *writer;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    assert_int_equal(rg_registry_open(db, 0, &writer, err, sizeof err), 0);
    const int64_t ids[] = {1, 2, GROUP / 2, GROUP};
    int rank[4], size;
    int64_t first;
    for (int i = 0; i < 4; i++) page_matches_registry(g, ids[i], &rank[i], &size, &first);
    assert_int_equal(size, GROUP);
    assert_int_equal(rank[0], 1);
    assert_int_equal(rank[3], GROUP);
    int64_t fastest = import(writer, 0.5);
    unsigned long built = rg_rank_tables_builds();
    for (int i = 0; i < 4; i++) {
        int now, now_size;
        int64_t now_first;
        page_matches_registry(g, ids[i], &now, &now_size, &now_first);
        assert_int_equal(now, rank[i] + 1);
        assert_int_equal(now_size, GROUP + 1);
        assert_int_equal(now_first, fastest);
    }
    assert_int_equal(rg_rank_tables_builds() - built, 1);   /* four pages, one build */
    page_matches_registry(g, fastest, &rank[0], NULL, NULL);
    assert_int_equal(rank[0], 1);
    rg_registry_close(writer);
    rg_registry_close(g);
}

/* The writer's warm build after a push is the table the next page ranks with. */
static void test_warm_is_used(void **state)
{
    char err[RG_ERRLEN];
    rg_registry *g, *writer;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    assert_int_equal(rg_registry_open(db, 0, &writer, err, sizeof err), 0);
    int64_t id = import(writer, 0.4);
    rg_run_row row;
    assert_int_equal(rg_registry_get(writer, id, &row, NULL, err, sizeof err), 0);
    unsigned long built = rg_rank_tables_builds();
    assert_int_equal(rg_rank_tables_warm(writer, row.comparison_key, err, sizeof err), 0);
    assert_int_equal(rg_rank_tables_builds() - built, 1);
    int rank;
    page_matches_registry(g, id, &rank, NULL, NULL);
    assert_int_equal(rank, 1);
    page_matches_registry(g, 3, NULL, NULL, NULL);
    assert_int_equal(rg_rank_tables_builds() - built, 1);   /* the pages built nothing */
    rg_registry_close(writer);
    rg_registry_close(g);
}

/* A page that read the generation just before a push, ranked after the
 * writer kept the new generation's table: it still gets a rank (from a
 * build of its own), not an error (the load benchmark saw two 500s). */
static void test_page_older_than_the_table(void **state)
{
    char err[RG_ERRLEN];
    rg_registry *g, *writer;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    assert_int_equal(rg_registry_open(db, 0, &writer, err, sizeof err), 0);
    int64_t before_push;
    assert_int_equal(rg_registry_generation(g, &before_push, err, sizeof err), 0);
    int64_t id = import(writer, 0.2);
    rg_run_row row;
    assert_int_equal(rg_registry_get(writer, id, &row, NULL, err, sizeof err), 0);
    assert_int_equal(rg_rank_tables_warm(writer, row.comparison_key, err, sizeof err), 0);
    rg_run_row third;
    assert_int_equal(rg_registry_get(g, 3, &third, NULL, err, sizeof err), 0);
    int rank, size;
    int64_t first;
    if (rg_rank_tables_rank(g, before_push, &third, &rank, &size, &first, err, sizeof err))
        fail_msg("a page of the generation before the push: %s", err);
    assert_true(rank > 0 && size > GROUP);
    rg_registry_close(writer);
    rg_registry_close(g);
}

/* "Rank R of N" on the served page of id (the server caches pages per generation). */
static void served_rank(rg_server *s, int64_t id, int *rank, int *size)
{
    char path[64];
    snprintf(path, sizeof path, "/runs/%lld", (long long)id);
    rg_request q = {.method = "GET", .path = path};
    rg_response r;
    rg_serve_route(s, &q, &r);
    assert_int_equal(r.status, 200);
    const char *p = strstr(r.body, "Rank ");
    if (!p || sscanf(p, "Rank %d of %d", rank, size) != 2) fail_msg("no rank on the page of run #%lld", (long long)id);
    free(r.body);
}

/* Through the server: a page asked for before and after a push (POST
 * /api/runs) shows the rank of the registry after it, never the cached one. */
static void test_served_page_after_push(void **state)
{
    rg_server *s = fx_serve(db, tokfile);
    int rank, size, rank2, size2;
    served_rank(s, 5, &rank, &size);
    served_rank(s, 5, &rank2, &size2);   /* cached: the same */
    assert_int_equal(rank2, rank);
    char *t = run_text(0.3);
    rg_request q = {.method = "POST", .path = "/api/runs", .authorization = "Bearer " TOKEN, .body = t,
                    .body_len = strlen(t)};
    rg_response r;
    rg_serve_route(s, &q, &r);
    assert_int_equal(r.status, 201);
    free(r.body);
    free(t);
    served_rank(s, 5, &rank2, &size2);
    assert_int_equal(rank2, rank + 1);
    assert_int_equal(size2, size + 1);
    rg_serve_destroy(s);
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_moves_ranks),
        cmocka_unit_test(test_warm_is_used),
        cmocka_unit_test(test_served_page_after_push),
        cmocka_unit_test(test_page_older_than_the_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
