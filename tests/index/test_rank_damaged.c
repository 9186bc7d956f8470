/* SPDX-License-Identifier: Apache-2.0 */
/* test_rank_damaged.c -- a group whose best run's stored manifest has one
 * flipped byte: ranking another run of the group (the rank tables, the
 * model, the served page, a push into the group, the writer's warm build)
 * returns an error, every time, and never frees the group's order twice
 * (rank_tables.c once did: "double free detected" under `serve`). */
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
#include <sqlite3.h>

#include "model.h"
#include "rank_tables.h"
#include "test_record_fixture.h"
#include "test_serve_fixture.h"
#include "test_util.h"

#define TOKEN "test-token-0123456789abcdef"

static char db[600], tokfile[600];

/* One byte of run id's stored manifest (its first '"') XOR 1: no longer JSON. */
static void flip_a_byte(int64_t id)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE runs SET manifest = substr(manifest, 1, instr(manifest, '\"') - 1) || '#' || "
             "substr(manifest, instr(manifest, '\"') + 1) WHERE id = %lld",
             (long long)id);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_changes(h), 1);
    sqlite3_close(h);
}

/* Three runs of one group, the first the fastest; its manifest damaged. */
static int setup(void **state)
{
    fx_path(db, sizeof db, "rank_damaged.db");
    fx_path(tokfile, sizeof tokfile, "rank_damaged.token");
    char err[RG_ERRLEN];
    if (fx_token_file(tokfile, TOKEN)) return -1;
    tu_unlink_db(db);
    rg_registry *g;
    if (rg_registry_open(db, 1, &g, err, sizeof err)) return -1;
    for (int i = 0; i < 3; i++)
        if (fx_import(g, "NVIDIA H200", 1, 1.0 + 0.1 * i, i + 1) != i + 1) return -1;
    rg_registry_close(g);
    flip_a_byte(1);
    return 0;
}

static int teardown(void **state)
{
    tu_unlink_db(db);
    unlink(tokfile);
    return 0;
}

/* The rank tables and the model: an error each time (the table is not
 * kept, so each call builds again and fails again), no crash. */
static void test_rank_and_model(void **state)
{
    char err[RG_ERRLEN];
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    rg_run_row row;
    assert_int_equal(rg_registry_get(g, 2, &row, NULL, err, sizeof err), 0);
    int64_t gen;
    assert_int_equal(rg_registry_generation(g, &gen, err, sizeof err), 0);
    for (int i = 0; i < 3; i++) {
        int rank = -1, size = -1;
        int64_t first = -1;
        err[0] = '\0';
        assert_int_not_equal(rg_rank_tables_rank(g, gen, &row, &rank, &size, &first, err, sizeof err), 0);
        assert_true(err[0] != '\0');
        assert_int_equal(rank, 0);
        assert_int_equal(size, 0);
        assert_int_equal(first, 0);
        assert_int_not_equal(rg_rank_tables_warm(g, row.comparison_key, err, sizeof err), 0);
        rg_run_view v;
        assert_int_not_equal(rg_model_run(g, 3, &v, err, sizeof err), 0);
    }
    rg_registry_close(g);
}

static long route(rg_server *s, rg_request q)
{
    rg_response r;
    rg_serve_route(s, &q, &r);
    free(r.body);
    return r.status;
}

/* Through the server: pages of the group and a push into it (which warms
 * the group's table) answer, the server stays up. */
static void test_served(void **state)
{
    rg_server *s = fx_serve(db, tokfile);
    for (int i = 0; i < 2; i++) {
        assert_true(route(s, (rg_request){.method = "GET", .path = "/runs/2"}) >= 400);
        assert_true(route(s, (rg_request){.method = "GET", .path = "/runs/3"}) >= 400);
    }
    char *t = fx_manifest_text("NVIDIA H200", 1, 1.5, 4);
    assert_non_null(t);
    rg_request q = {.method = "POST", .path = "/api/runs", .authorization = "Bearer " TOKEN, .body = t,
                    .body_len = strlen(t)};
    assert_int_equal(route(s, q), 201);
    free(t);
    assert_true(route(s, (rg_request){.method = "GET", .path = "/runs/4"}) >= 400);
    rg_serve_destroy(s);
}

int main(void)
{
    rg_sol_set_suites(rg_suite_bundled);   /* the bundled suites, as the CLI registers them (main.c) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_and_model),
        cmocka_unit_test(test_served),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
