/* SPDX-License-Identifier: Apache-2.0 */
/* test_stmt_cache.c -- the registry's prepared statements (stmt_cache.h):
 * the same SQL gets the same statement back, reset (from its first row,
 * bindings cleared) and without its read transaction, so another
 * connection's write is seen by the next use; a nested use gets a statement
 * of its own; more distinct queries than slots still work; clearing
 * finalizes everything (the connection then closes cleanly). */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "test_util.h"

#include "stmt_cache.h"

static char path[600];

static sqlite3 *open_db(void)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), SQLITE_OK);
    return db;
}

static int setup(void **state)
{
    snprintf(path, sizeof path, "%s/test-stmt-cache-%d.db", RG_BINARY_DIR, (int)getpid());
    unlink(path);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
    int rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);",
                          NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

static int teardown(void **state) { return tu_unlink_db(path); }

static int64_t count(rg_stmt_cache *c, sqlite3 *db)
{
    sqlite3_stmt *st;
    assert_int_equal(rg_stmt_prepare(c, db, "SELECT COUNT(*) FROM t", &st), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    rg_stmt_release(c, st);
    return n;
}

static void test_reuse_and_reset(void **state)
{
    rg_stmt_cache c = {0};
    sqlite3 *db = open_db();
    sqlite3_stmt *a, *b;
    const char *sql = "SELECT x FROM t WHERE x >= ? ORDER BY x";
    assert_int_equal(rg_stmt_prepare(&c, db, sql, &a), SQLITE_OK);
    sqlite3_bind_int(a, 1, 2);
    assert_int_equal(sqlite3_step(a), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(a, 0), 2);
    rg_stmt_release(&c, a);
    assert_int_equal(rg_stmt_prepare(&c, db, sql, &b), SQLITE_OK);
    assert_ptr_equal(a, b);   /* kept, not prepared again */
    assert_int_equal(sqlite3_step(b), SQLITE_DONE);   /* the binding cleared: x >= NULL matches nothing */
    rg_stmt_release(&c, b);
    assert_int_equal(rg_stmt_prepare(&c, db, sql, &b), SQLITE_OK);
    sqlite3_bind_int(b, 1, 1);
    assert_int_equal(sqlite3_step(b), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(b, 0), 1);
    rg_stmt_release(&c, b);
    rg_stmt_cache_clear(&c);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);   /* nothing left unfinalized */
}

/* A released statement holds no read transaction: a write by another
 * connection is seen at the next use (a kept, un-reset statement would pin
 * the old snapshot, and the registry's generation would never move). */
static void test_sees_other_writes(void **state)
{
    rg_stmt_cache c = {0};
    sqlite3 *reader = open_db(), *writer = open_db();
    int64_t before = count(&c, reader);
    sqlite3_stmt *st;   /* stepped once and released mid-result */
    assert_int_equal(rg_stmt_prepare(&c, reader, "SELECT x FROM t", &st), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    rg_stmt_release(&c, st);
    assert_int_equal(sqlite3_exec(writer, "INSERT INTO t VALUES (4)", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(count(&c, reader), before + 1);
    assert_int_equal(sqlite3_exec(writer, "DELETE FROM t WHERE x = 4", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(count(&c, reader), before);
    rg_stmt_cache_clear(&c);
    assert_int_equal(sqlite3_close(reader), SQLITE_OK);
    assert_int_equal(sqlite3_close(writer), SQLITE_OK);
}

static void test_nested_and_full(void **state)
{
    rg_stmt_cache c = {0};
    sqlite3 *db = open_db();
    sqlite3_stmt *outer, *inner;
    const char *sql = "SELECT x FROM t ORDER BY x";
    assert_int_equal(rg_stmt_prepare(&c, db, sql, &outer), SQLITE_OK);
    assert_int_equal(sqlite3_step(outer), SQLITE_ROW);
    assert_int_equal(rg_stmt_prepare(&c, db, sql, &inner), SQLITE_OK);   /* while outer is out */
    assert_ptr_not_equal(inner, outer);
    assert_int_equal(sqlite3_step(inner), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(inner, 0), 1);
    rg_stmt_release(&c, inner);   /* finalized */
    assert_int_equal(sqlite3_step(outer), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(outer, 0), 2);
    rg_stmt_release(&c, outer);
    /* More distinct queries than slots, all out at once: every one works. */
    sqlite3_stmt *st[RG_STMT_SLOTS + 8];
    char q[64];
    for (int i = 0; i < RG_STMT_SLOTS + 8; i++) {
        snprintf(q, sizeof q, "SELECT %d + COUNT(*) FROM t", i);
        assert_int_equal(rg_stmt_prepare(&c, db, q, &st[i]), SQLITE_OK);
        assert_int_equal(sqlite3_step(st[i]), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st[i], 0), i + 3);
    }
    for (int i = 0; i < RG_STMT_SLOTS + 8; i++) rg_stmt_release(&c, st[i]);
    for (int i = 0; i < 2 * RG_STMT_SLOTS; i++) {   /* and one after another: older ones make room */
        snprintf(q, sizeof q, "SELECT %d", i);
        sqlite3_stmt *one;
        assert_int_equal(rg_stmt_prepare(&c, db, q, &one), SQLITE_OK);
        assert_int_equal(sqlite3_step(one), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(one, 0), i);
        rg_stmt_release(&c, one);
    }
    assert_int_equal(count(&c, db), 3);
    rg_stmt_cache_clear(&c);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_bad_input(void **state)
{
    rg_stmt_cache c = {0};
    sqlite3 *db = open_db();
    sqlite3_stmt *st = (sqlite3_stmt *)&c;
    assert_int_equal(rg_stmt_prepare(NULL, db, "SELECT 1", &st), SQLITE_MISUSE);
    assert_null(st);
    assert_int_equal(rg_stmt_prepare(&c, NULL, "SELECT 1", &st), SQLITE_MISUSE);
    assert_int_equal(rg_stmt_prepare(&c, db, NULL, &st), SQLITE_MISUSE);
    assert_int_equal(rg_stmt_prepare(&c, db, "SELECT 1", NULL), SQLITE_MISUSE);
    assert_int_not_equal(rg_stmt_prepare(&c, db, "SELEKT nonsense", &st), SQLITE_OK);
    assert_null(st);
    rg_stmt_release(&c, NULL);
    rg_stmt_cache_clear(NULL);
    rg_stmt_cache_clear(&c);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_and_reset),
        cmocka_unit_test(test_sees_other_writes),
        cmocka_unit_test(test_nested_and_full),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
