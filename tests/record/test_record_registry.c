/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_registry.c -- the SQLite registry: schema, writes, ranking,
 * notes, imports, replication links, bad files and concurrent writers. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "test_record_fixture.h"

static void rm_db(const char *path)
{
    char p[600];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

static int64_t store(rg_registry *g, cJSON *m, const char *evidence)
{
    int64_t id;
    int existed;
    char err[512];
    int rc = rg_registry_store(g, m, evidence, 0, &id, &existed, err, sizeof err);
    if (rc) fail_msg("store: %s", err);
    cJSON_Delete(m);
    return id;
}

static void test_create_store_rank_note(void **state)
{
    char path[512], err[512];
    fx_path(path, sizeof path, "a.db");
    rm_db(path);
    rg_registry *g;
    /* Opening without create refuses a missing file. */
    assert_int_equal(rg_registry_open(path, 0, &g, err, sizeof err), 2);
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 0);
    /* Two variants under one comparison key: kernel 1 slow, kernel 2 twice as fast;
     * and one run on another GPU (another group). */
    int64_t slow = store(g, fx_manifest("NVIDIA H200", 1, 1.0, 1), RG_EVIDENCE_MEASURED);
    int64_t fast = store(g, fx_manifest("NVIDIA H200", 2, 0.5, 2), RG_EVIDENCE_MEASURED);
    int64_t other = store(g, fx_manifest("NVIDIA H100 80GB HBM3", 2, 0.1, 3), RG_EVIDENCE_MEASURED);
    assert_true(slow > 0 && fast > slow && other > fast);

    rg_run_row *rows;
    size_t n;
    assert_int_equal(rg_registry_list(g, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(rows[0].id, slow);
    assert_string_equal(rows[0].evidence, "measured");
    assert_string_equal(rows[0].device, "NVIDIA H200");
    assert_string_equal(rows[1].kernel_name, "variant-2");
    assert_int_equal(rows[1].n_workloads, FX_N);
    assert_true(rows[1].geomean_ns < rows[0].geomean_ns);
    assert_float_equal(rows[1].geomean_ns * 2, rows[0].geomean_ns, rows[0].geomean_ns * 1e-3);
    free(rows);

    int rank, size;
    int64_t first;
    assert_int_equal(rg_registry_rank_of(g, fast, &rank, &size, &first, err, sizeof err), 0);
    assert_int_equal(rank, 1);
    assert_int_equal(size, 2);
    assert_int_equal(first, fast);
    assert_int_equal(rg_registry_rank_of(g, slow, &rank, &size, &first, err, sizeof err), 0);
    assert_int_equal(rank, 2);
    assert_int_equal(first, fast);
    assert_int_equal(rg_registry_rank_of(g, other, &rank, &size, &first, err, sizeof err), 0);
    assert_int_equal(rank, 1);
    assert_int_equal(size, 1);

    /* The stored manifest still verifies and is the same run. */
    rg_run_row row;
    rg_manifest m;
    assert_int_equal(rg_registry_get(g, slow, &row, &m, err, sizeof err), 0);
    char msg[512];
    assert_int_equal(rg_manifest_verify_typed(&m, NULL, msg, sizeof msg), 0);
    assert_string_equal(m.obj[RG_ROLE_RUN].digest, row.run_digest);
    assert_float_equal(row.primary_ns, m.primary_ns, 0);
    assert_string_equal(row.primary_statistic, "geomean");
    rg_manifest_free(&m);
    assert_int_equal(rg_registry_get(g, 999, &row, NULL, err, sizeof err), 1);

    /* Notes never change the evidence level. */
    assert_int_equal(rg_registry_add_note(g, slow, "tried unroll 4", err, sizeof err), 0);
    assert_int_equal(rg_registry_add_note(g, slow, "second note", err, sizeof err), 0);
    assert_int_not_equal(rg_registry_add_note(g, 999, "x", err, sizeof err), 0);
    rg_note *notes;
    assert_int_equal(rg_registry_notes(g, slow, &notes, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(notes[0].text, "tried unroll 4");
    rg_notes_free(notes, n);
    assert_int_equal(rg_registry_get(g, slow, &row, NULL, err, sizeof err), 0);
    assert_string_equal(row.evidence, "measured");

    /* Storing the same manifest again gives the same run. */
    cJSON *again = fx_manifest("NVIDIA H200", 1, 1.0, 1);
    int64_t id;
    int existed;
    assert_int_equal(rg_registry_store(g, again, RG_EVIDENCE_IMPORTED, 0, &id, &existed, err, sizeof err), 0);
    assert_int_equal(existed, 1);
    assert_int_equal(id, slow);
    cJSON_Delete(again);
    rg_registry_close(g);
    rm_db(path);
}

static void test_replication_evidence(void **state)
{
    char path[512], err[512];
    fx_path(path, sizeof path, "rep.db");
    rm_db(path);
    rg_registry *g;
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 0);
    int64_t orig = store(g, fx_manifest("NVIDIA H200", 1, 1.0, 1), RG_EVIDENCE_IMPORTED);
    int64_t rep = 0, other = store(g, fx_manifest("NVIDIA H100 80GB HBM3", 1, 1.0, 3), RG_EVIDENCE_MEASURED);
    int existed, up;
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.01, 2);
    assert_int_equal(rg_registry_store(g, m, RG_EVIDENCE_MEASURED, orig, &rep, &existed, err, sizeof err), 0);
    cJSON_Delete(m);
    rg_run_row row;
    /* Disagreement: no upgrade. */
    assert_int_equal(rg_registry_link_replication(g, orig, rep, 0, 1, 3, &up, err, sizeof err), 0);
    assert_int_equal(up, 0);
    rg_registry_get(g, orig, &row, NULL, err, sizeof err);
    assert_string_equal(row.evidence, "imported");
    /* Agreement on another comparison key: no upgrade. */
    assert_int_equal(rg_registry_link_replication(g, orig, other, 1, 3, 3, &up, err, sizeof err), 0);
    assert_int_equal(up, 0);
    /* Agreement, same implementation and key: replicated. */
    assert_int_equal(rg_registry_link_replication(g, orig, rep, 1, 3, 3, &up, err, sizeof err), 0);
    assert_int_equal(up, 1);
    rg_registry_get(g, orig, &row, NULL, err, sizeof err);
    assert_string_equal(row.evidence, "replicated");
    rg_registry_get(g, rep, &row, NULL, err, sizeof err);
    assert_int_equal(row.replicates_of, orig);
    rg_replication *r;
    size_t n;
    assert_int_equal(rg_registry_replications(g, orig, &r, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    free(r);
    /* A note afterwards leaves it replicated. */
    assert_int_equal(rg_registry_add_note(g, orig, "checked", err, sizeof err), 0);
    rg_registry_get(g, orig, &row, NULL, err, sizeof err);
    assert_string_equal(row.evidence, "replicated");
    rg_registry_close(g);
    rm_db(path);
}

/* A tampered manifest is refused before it reaches the registry: the
 * import path is verify, then store. */
static void test_import_verified_only(void **state)
{
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.0, 9);
    char msg[512];
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 0);
    cJSON *t0 = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "run"), "spec"), "ropegrad"),
                            "workloads"),
        0);
    cJSON_SetNumberValue(cJSON_GetObjectItem(t0, "median"), 1234.5);
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    cJSON_Delete(m);
}

static void one_line(const char *err)
{
    assert_true(strlen(err) > 0);
    assert_null(strchr(err, '\n'));
}

static void test_bad_files(void **state)
{
    char path[512], err[512];
    rg_registry *g;
    /* Corrupt: not SQLite at all. */
    fx_path(path, sizeof path, "corrupt.db");
    rm_db(path);
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 8192; i++) fputc((i * 7919) & 0xff, f);
    fclose(f);
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 2);
    one_line(err);
    assert_null(g);
    rm_db(path);

    /* Foreign: a valid SQLite database of someone else's. */
    fx_path(path, sizeof path, "foreign.db");
    rm_db(path);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE runs(x); INSERT INTO runs VALUES (1);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 2);
    one_line(err);
    assert_non_null(strstr(err, "not a ropegrad registry"));
    rm_db(path);

    /* A registry from a newer ropegrad. */
    fx_path(path, sizeof path, "newer.db");
    rm_db(path);
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 0);
    rg_registry_close(g);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 2);
    one_line(err);
    assert_non_null(strstr(err, "newer"));
    rm_db(path);

    /* Read-only: reads work, writes fail with one line and leave it as it was. */
    fx_path(path, sizeof path, "ro.db");
    rm_db(path);
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 0);
    store(g, fx_manifest("", 1, 1.0, 1), RG_EVIDENCE_MEASURED);
    rg_registry_close(g);
    chmod(path, 0444);
    assert_int_equal(rg_registry_open(path, 1, &g, err, sizeof err), 0);
    rg_run_row *rows;
    size_t n;
    assert_int_equal(rg_registry_list(g, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    free(rows);
    assert_int_not_equal(rg_registry_add_note(g, 1, "x", err, sizeof err), 0);
    one_line(err);
    cJSON *m = fx_manifest("", 1, 1.0, 2);
    int64_t id;
    int existed;
    assert_int_not_equal(rg_registry_store(g, m, RG_EVIDENCE_MEASURED, 0, &id, &existed, err, sizeof err), 0);
    one_line(err);
    cJSON_Delete(m);
    rg_registry_close(g);
    chmod(path, 0644);
    rm_db(path);
}

/* Processes writing at once all land: fork the writers, release them together
 * through a pipe, each opening and storing several runs into one new file.
 * Eight writers, four rounds each on a fresh file: with two, on a 2-core
 * machine, the race below never showed; on a 16-core one a writer racing the
 * first opener's switch to WAL got "database is locked" (registry_open.c,
 * first_step). */
static void concurrent_round(int round)
{
    char path[512], err[512], name[32];
    snprintf(name, sizeof name, "conc%d.db", round);
    fx_path(path, sizeof path, name);
    rm_db(path);
    enum { WRITERS = 8, EACH = 5 };
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pid[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pid[w] = fork();
        assert_true(pid[w] >= 0);
        if (pid[w] == 0) {
            close(go[1]);
            char c;
            if (read(go[0], &c, 1) != 0) _exit(3);   /* wait for the parent to close: both start now */
            int bad = 0;
            for (int k = 0; k < EACH; k++) {
                rg_registry *g;
                if (rg_registry_open(path, 1, &g, err, sizeof err)) {
                    fprintf(stderr, "writer %d: %s\n", w, err);
                    _exit(1);
                }
                cJSON *m = fx_manifest("NVIDIA H200", w + 1, 1.0 + 0.01 * k, 100 * w + k);
                int64_t id;
                int existed;
                if (!m || rg_registry_store(g, m, RG_EVIDENCE_MEASURED, 0, &id, &existed, err, sizeof err) || existed) {
                    fprintf(stderr, "writer %d: %s\n", w, err);
                    bad = 1;
                }
                cJSON_Delete(m);
                rg_registry_close(g);
            }
            _exit(bad);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int w = 0; w < WRITERS; w++) {
        int st;
        assert_int_equal(waitpid(pid[w], &st, 0), pid[w]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    rg_registry *g;
    assert_int_equal(rg_registry_open(path, 0, &g, err, sizeof err), 0);
    rg_run_row *rows;
    size_t n;
    assert_int_equal(rg_registry_list(g, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, WRITERS * EACH);
    for (size_t i = 0; i < n; i++) assert_int_equal(rows[i].n_workloads, FX_N);
    free(rows);
    rg_registry_close(g);
    rm_db(path);
}

static void test_concurrent_writers(void **state)
{
    for (int round = 0; round < 4; round++) concurrent_round(round);
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_store_rank_note), cmocka_unit_test(test_replication_evidence),
        cmocka_unit_test(test_import_verified_only),   cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_concurrent_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
