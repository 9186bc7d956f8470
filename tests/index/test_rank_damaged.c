/* SPDX-License-Identifier: Apache-2.0 */
/* test_rank_damaged.c -- a group whose best run's stored manifest has one
 * flipped byte: the group ranks its readable runs and marks the damaged one
 * (rank.h: class "damaged", never ranked, never #1); the rank tables, the
 * model, the served pages, a push into the group and the writer's warm
 * build all answer, every time, and never free the group's order twice
 * (rank_tables.c once did: "double free detected" under `serve`). Only the
 * damaged run's own page is an error (500). */
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

/* The rank tables and the model: the readable runs ranked, the damaged one
 * marked, each time (the table is kept), no crash. */
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
        assert_int_equal(rg_rank_tables_rank(g, gen, &row, &rank, &size, &first, err, sizeof err), 0);
        assert_int_equal(first, 2);   /* the damaged run 1 is never #1 */
        assert_int_equal(rg_rank_tables_warm(g, row.comparison_key, err, sizeof err), 0);
        rg_run_view v;
        assert_int_equal(rg_model_run(g, 3, &v, err, sizeof err), 0);
        assert_true(v.rank >= 1);            /* ranked (it may tie with run 2: five samples bound no median) */
        assert_int_equal(v.group_size, 2);   /* the readable runs */
        assert_int_equal(v.first_id, 2);
        assert_int_equal(v.rank_class, RG_CLASS_MEASURED);
        rg_model_run_free(&v);
        assert_int_not_equal(rg_model_run(g, 1, &v, err, sizeof err), 0);   /* its own page: an error */
    }
    rg_ranked *e;
    size_t n;
    assert_int_equal(rg_registry_rank_group(g, row.comparison_key, NULL, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(e[0].row.id, 2);
    assert_int_equal(e[0].rank, 1);
    assert_int_equal(e[2].row.id, 1);
    assert_int_equal(e[2].rank, 0);
    assert_int_equal(e[2].rank_class, RG_CLASS_DAMAGED);
    assert_non_null(strstr(e[2].rank_reason, "damaged: the stored manifest cannot be read"));
    free(e);
    rg_problem_view pv;
    assert_int_equal(rg_model_problem(g, "014_rotary_embedding_with_attention_scaling_backward", &pv, err, sizeof err),
                     0);
    assert_int_equal(pv.n_groups, 1);
    assert_int_equal(pv.groups[0].n, 3);
    assert_int_equal(pv.groups[0].e[2].rank_class, RG_CLASS_DAMAGED);
    rg_model_problem_free(&pv);
    rg_registry_close(g);
}

static rg_response routed(rg_server *s, rg_request q)
{
    rg_response r;
    rg_serve_route(s, &q, &r);
    return r;
}

static long route(rg_server *s, rg_request q)
{
    rg_response r = routed(s, q);
    free(r.body);
    return r.status;
}

/* Through the server: the damaged run's page is 500; the front page, the
 * problem page, the API and the other runs' pages answer 200, before and
 * after a push into the group (which warms the group's table); the server
 * stays up. */
static void test_served(void **state)
{
    rg_server *s = fx_serve(db, tokfile);
    const char *ok[] = {"/", "/api/problems", "/problems/014_rotary_embedding_with_attention_scaling_backward",
                        "/api/problems/014_rotary_embedding_with_attention_scaling_backward", "/runs/2", "/runs/3",
                        "/api/runs/2", "/history/2", "/compare/2/3"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(route(s, (rg_request){.method = "GET", .path = "/runs/1"}), 500);
        assert_int_equal(route(s, (rg_request){.method = "GET", .path = "/api/runs/1"}), 500);
        for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
            long st = route(s, (rg_request){.method = "GET", .path = ok[k]});
            if (st != 200) fail_msg("%s answered %ld", ok[k], st);
        }
    }
    rg_response r = routed(s, (rg_request){.method = "GET",
                                           .path = "/api/problems/014_rotary_embedding_with_attention_scaling_backward"});
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"rank_class\":\"damaged\""));
    assert_non_null(strstr(r.body, "\"rank_reason\":\"damaged: the stored manifest cannot be read"));
    free(r.body);
    char *t = fx_manifest_text("NVIDIA H200", 1, 1.5, 4);
    assert_non_null(t);
    rg_request q = {.method = "POST", .path = "/api/runs", .authorization = "Bearer " TOKEN, .body = t,
                    .body_len = strlen(t)};
    assert_int_equal(route(s, q), 201);
    free(t);
    assert_int_equal(route(s, (rg_request){.method = "GET", .path = "/runs/4"}), 200);
    r = routed(s, (rg_request){.method = "GET", .path = "/api/runs/4"});
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"rank_class\":\"measured\""));
    assert_null(strstr(r.body, "\"rank\":null"));
    assert_non_null(strstr(r.body, "\"first\":2"));
    free(r.body);
    assert_int_equal(route(s, (rg_request){.method = "GET", .path = "/"}), 200);
    assert_int_equal(route(s, (rg_request){.method = "GET", .path = "/runs/1"}), 500);
    rg_serve_destroy(s);
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_and_model),
        cmocka_unit_test(test_served),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
