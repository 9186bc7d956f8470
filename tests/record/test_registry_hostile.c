/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_registry_hostile.c -- the registry file when it is not what we hope
 * (issue 6), through the CLI as a user meets it: read-only, locked by
 * another process, a foreign SQLite database, random bytes, a truncated
 * copy, a directory. Each must end in exit status 2 and ONE line on stderr
 * (or, for read-only and a released lock, in success), and a file that is
 * refused must be left byte for byte as it was.
 *
 * Read-only: the tests run as root in CI, where chmod 0444 does not stop a
 * write(2). The registry treats a file with no write permission bit as
 * read-only anyway (src/record/registry/registry_open.c opens it SQLITE_OPEN_READONLY), so
 * chmod 0444 is a real test even for root: reads work, every write fails
 * cleanly, the bytes do not change.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "test_record_fixture.h"
#include "test_util.h"

static char dir[512];
static char out_text[1 << 16], err_text[1 << 16];

/* Runs `ropegrad ARGS` (printf-style) in dir; stdout and stderr into
 * out_text and err_text. */
#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

/* Exit 2 and exactly one line on stderr that contains needle. */
#define EXPECT_ONE_LINE_ERROR(rc, needle) TU_EXPECT_ONE_LINE_ERROR(rc, err_text, needle)

static const char *path_in(const char *name) { return tu_path_in(dir, name); }

static void write_manifest(const char *name, int stamp) { assert_int_equal(fx_write_manifest(path_in(name), "", 0, 1.0, stamp), 0); }

static void assert_unchanged(const char *path, const char *before, size_t n_before)
{
    tu_assert_unchanged(path, before, n_before);
}

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "hostile");
    if (tu_fresh_dir(dir)) return -1;
    write_manifest("m1.json", 1);
    write_manifest("m2.json", 2);
    /* A real registry with one run. */
    return rg("runs import m1.json --db runs.db") == 0 ? 0 : -1;
}

static int teardown(void **state) { return tu_rm_rf(dir); }

/* ---- read-only ------------------------------------------------------------------- */

static void test_read_only(void **state)
{
    const char *db = path_in("runs.db");
    /* Checkpoint the WAL into the main file first, so read-only readers see
     * every run from the main file alone. */
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(chmod(db, 0444), 0);
    size_t n = 0;
    char *before = tu_slurp(db, &n);
    assert_non_null(before);

    assert_int_equal(rg("runs list --db runs.db"), 0);
    assert_non_null(strstr(out_text, "imported"));
    assert_int_equal(rg("runs show 1 --db runs.db"), 0);
    /* Writes: refused with one line, the file untouched. */
    EXPECT_ONE_LINE_ERROR(rg("runs note 1 hello --db runs.db"), "runs.db");
    EXPECT_ONE_LINE_ERROR(rg("runs import m2.json --db runs.db"), "runs.db");
    assert_unchanged(db, before, n);
    free(before);
    assert_int_equal(chmod(db, 0644), 0);
}

/* ---- locked ---------------------------------------------------------------------- */

static double now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* Another process holds the write lock (BEGIN EXCLUSIVE, never committed):
 * a writer waits the busy timeout (10 s), then fails with one line and
 * stores nothing. When the lock is released while it waits, the write
 * succeeds. `runs import` stores through the same rg_registry_store as
 * `bench --record`. (Readers do not wait: test_reader_not_blocked.) */
static void test_locked(void **state)
{
    const char *db = path_in("runs.db");
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);

    double t0 = now_s();
    EXPECT_ONE_LINE_ERROR(rg("runs import m2.json --db runs.db"), "locked");
    double waited = now_s() - t0;
    if (waited < 5) fail_msg("the writer gave up after %.1f s, before its busy timeout", waited);

    /* Released while the writer waits: it succeeds. */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "cd %s && %s runs import m2.json --db runs.db > late.out 2> late.err", dir, TU_BIN);
        int st = system(cmd);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 99);
    }
    usleep(1500 * 1000);
    assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 0) {
        size_t n = 0;
        char *e = tu_slurp(path_in("late.err"), &n);
        fail_msg("the late writer exited %d: %.*s", WEXITSTATUS(st), e ? (int)n : 0, e ? e : "");
    }
    /* The late writer stored m2 itself: the one that timed out stored nothing. */
    size_t n = 0;
    char *late = tu_slurp(path_in("late.out"), &n);
    assert_non_null(late);
    late[n ? n - 1 : 0] = 0;
    assert_non_null(strstr(late, "verified and imported as run #2"));
    free(late);
    assert_int_equal(rg("runs list --db runs.db"), 0);
    assert_int_equal(tu_count_lines(out_text), 5);   /* header + 2 runs, each with its note: partial (rank.h) */
}

/* A writer is in the middle of a transaction (BEGIN IMMEDIATE, a run's
 * row inserted, not committed): readers must not wait for it. Opening the
 * registry checks its schema; that check used to take the write lock too,
 * so `runs list` waited the whole 10 s busy timeout and then failed with
 * "database is locked". Under WAL a reader sees the last committed state:
 * the one stored run, not the writer's uncommitted one. */
static void test_reader_not_blocked(void **state)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path_in("runs.db"), &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "INSERT INTO notes (run_id, created_at, text) VALUES (1, 'now', 'pending')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);

    double t0 = now_s();
    int rc = rg("runs list --db runs.db");
    double waited = now_s() - t0;
    if (rc != 0) fail_msg("runs list exited %d while a writer held the lock: %s", rc, err_text);
    if (waited > 3) fail_msg("runs list took %.1f s while a writer held the lock (busy timeout 10 s)", waited);
    assert_int_equal(tu_count_lines(out_text), 3);   /* header + the committed run + its note: partial (rank.h) */
    assert_non_null(strstr(out_text, "imported"));
    t0 = now_s();
    rc = rg("runs show 1 --db runs.db");
    waited = now_s() - t0;
    if (rc != 0) fail_msg("runs show exited %d while a writer held the lock: %s", rc, err_text);
    if (waited > 3) fail_msg("runs show took %.1f s while a writer held the lock", waited);
    assert_null(strstr(out_text, "pending"));   /* the uncommitted note is not visible */

    assert_int_equal(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

/* ---- not a ropegrad registry --------------------------------------------------------- */

/* list and import on the file: exit 2, one line; import must not alter it. */
static void expect_refused(const char *name, const char *needle)
{
    const char *p = path_in(name);
    size_t n = 0;
    char *before = tu_slurp(p, &n);
    EXPECT_ONE_LINE_ERROR(rg("runs list --db %s", name), needle);
    EXPECT_ONE_LINE_ERROR(rg("runs show 1 --db %s", name), needle);
    EXPECT_ONE_LINE_ERROR(rg("runs import m2.json --db %s", name), needle);
    if (before) {
        assert_unchanged(p, before, n);
        free(before);
    }
}

static void test_foreign_sqlite(void **state)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path_in("foreign.db"), &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT);"
                                     "INSERT INTO photos (name) VALUES ('holiday.jpg');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    expect_refused("foreign.db", "not a ropegrad registry");
    /* It even has a table named like ours: still foreign (application_id). */
    assert_int_equal(sqlite3_open(path_in("lookalike.db"), &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "CREATE TABLE runs (id INTEGER PRIMARY KEY);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    expect_refused("lookalike.db", "not a ropegrad registry");
}

static void test_newer_schema(void **state)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path_in("runs.db"), &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    expect_refused("runs.db", "newer");
}

static void write_bytes(const char *name, const unsigned char *data, size_t n)
{
    FILE *f = fopen(path_in(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_not_sqlite(void **state)
{
    /* Random bytes (a fixed generator: the same bytes every run). */
    unsigned char buf[8192];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    write_bytes("random.db", buf, sizeof buf);
    expect_refused("random.db", "random.db");
    /* SQLite's magic header followed by garbage. */
    memcpy(buf, "SQLite format 3", 16);
    write_bytes("header.db", buf, sizeof buf);
    expect_refused("header.db", "header.db");
    /* A text file. */
    write_bytes("notes.db", (const unsigned char *)"hello\n", 6);
    expect_refused("notes.db", "notes.db");
    /* A registry cut short (e.g. a partial download). */
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path_in("runs.db"), &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    size_t n = 0;
    char *whole = tu_slurp(path_in("runs.db"), &n);
    assert_non_null(whole);
    assert_true(n > 1024);
    write_bytes("cut.db", (const unsigned char *)whole, 1024);
    free(whole);
    expect_refused("cut.db", "cut.db");
    /* A directory, and a missing file (for reading). */
    assert_int_equal(mkdir(path_in("adir.db"), 0755), 0);
    expect_refused("adir.db", "not a regular file");
    EXPECT_ONE_LINE_ERROR(rg("runs list --db missing.db"), "no registry here");
    assert_int_equal(access(path_in("missing.db"), F_OK), -1);   /* listing creates nothing */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_not_blocked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_sqlite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_sqlite, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
