/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_sql.c -- the SQLite calls every part of the registry makes:
 * errors with the file's name, steps retried while another connection
 * holds a lock, BEGIN IMMEDIATE (registry_internal.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <sys/resource.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rank.h"
#include "record.h"
#include "rg_util.h"

#include "registry_internal.h"

void reg_now_utc(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int reg_busy_code(int rc);

/* The last failure's kind into g: busy, or a full disk / the file size limit
 * (SQLite says SQLITE_FULL for ENOSPC and a short write, SQLITE_IOERR for a
 * write refused outright: EFBIG past RLIMIT_FSIZE, EDQUOT). The words to add. */
static const char *classify(rg_registry *g)
{
    const int code = sqlite3_extended_errcode(g->db), sys = sqlite3_system_errno(g->db);
    g->busy = reg_busy_code(code & 0xff);
    g->full = (code & 0xff) == SQLITE_FULL ||
              ((code & 0xff) == SQLITE_IOERR && (sys == ENOSPC || sys == EFBIG || sys == EDQUOT));
    /* sqlite3_system_errno is errno when SQLite asked, which a later call may have changed: a write
     * refused (IOERR_WRITE, _TRUNCATE, _SHMSIZE) while a file size limit is set or the file system has
     * less than a megabyte free is one of these too. */
    if (!g->full && (code == SQLITE_IOERR_WRITE || code == SQLITE_IOERR_TRUNCATE || code == SQLITE_IOERR_SHMSIZE)) {
        struct rlimit rl;
        struct statvfs fs;
        g->full = (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY) ||
                  (!statvfs(g->path, &fs) && (double)fs.f_bavail * (double)fs.f_frsize < 1048576.0);
    }
    return g->full ? " (the disk is full or the file size limit was reached)" : "";
}

int reg_fail(rg_registry *g, char *err, size_t errlen, const char *what)
{
    const char *more = classify(g);
    snprintf(err, errlen, "%s: %s: %s%s", g->path, what, sqlite3_errmsg(g->db), more);
    return 2;
}

/* The busy handler (busy_timeout) covers ordinary waits for a lock, but SQLite
 * returns SQLITE_BUSY without calling it where waiting could deadlock and while
 * another connection switches the file to WAL or recovers its WAL. Several
 * writers creating one new registry at once meet exactly that (seen on a
 * 16-core machine as a flaky test_concurrent_writers: "database is locked" from
 * the journal_mode switch). So the steps of opening and BEGIN IMMEDIATE are
 * retried, with a short sleep between tries, until RG_BUSY_RETRY_MS (the busy
 * timeout) have passed since the first. */
#define RG_BUSY_RETRY_MS 10000

int reg_busy_code(int rc) { return rc == SQLITE_BUSY || rc == SQLITE_LOCKED; }

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* After a busy result at time t0: 1 when there is time left to try again (and
 * a short sleep has been taken), 0 when RG_BUSY_RETRY_MS have passed. The
 * clock, not a count of sleeps: a try that went through the busy handler has
 * already waited up to the whole busy_timeout. */
static int busy_again(double t0)
{
    const double left = RG_BUSY_RETRY_MS - (mono_ms() - t0);
    if (left <= 0) return 0;
    struct timespec ts = {0, (left < 2 ? (long)(left * 1e6) : 2000000L)};
    nanosleep(&ts, NULL);
    return 1;
}

/* Prepares sql and takes its first step (where the read or write lock is
 * taken), both retried while busy. Returns the step's code (SQLITE_ROW or
 * SQLITE_DONE when it went through) or the error; the caller finalizes *st,
 * which may be NULL. */
int reg_first_step(rg_registry *g, const char *sql, sqlite3_stmt **st)
{
    const double t0 = mono_ms();
    for (;;) {
        int rc = prep(g, sql, st);
        if (rc == SQLITE_OK) rc = sqlite3_step(*st);
        if (!reg_busy_code(rc) || !busy_again(t0)) return rc;
        release(g, *st);
        *st = NULL;
    }
}

/* An opening step failed: say "busy" when it was, not "not a registry". */
int reg_fail_open(rg_registry *g, int rc, char *err, size_t errlen, const char *what)
{
    if (reg_busy_code(rc)) {
        g->busy = 1;
        snprintf(err, errlen, "%s: busy: another process kept it locked for %d s (%s)", g->path,
                 RG_BUSY_RETRY_MS / 1000, sqlite3_errmsg(g->db));
        return 2;
    }
    return reg_fail(g, err, errlen, what);
}

int reg_exec(rg_registry *g, const char *sql, char *err, size_t errlen, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(g->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        const char *more = classify(g);
        snprintf(err, errlen, "%s: %s: %s%s", g->path, what, msg ? msg : sqlite3_errmsg(g->db), more);
        sqlite3_free(msg);
        return 2;
    }
    return 0;
}

/* BEGIN IMMEDIATE (the write lock, up front), retried like the opening steps. */
int reg_begin_write(rg_registry *g, char *err, size_t errlen, const char *what)
{
    sqlite3_stmt *st = NULL;
    g->busy = 0;
    int rc = reg_first_step(g, "BEGIN IMMEDIATE", &st);
    rc = rc == SQLITE_DONE ? 0 : reg_fail_open(g, rc, err, errlen, what);
    release(g, st);
    return rc;
}

int reg_write_begin(rg_registry *g, int *nested, char *err, size_t errlen, const char *what)
{
    *nested = !sqlite3_get_autocommit(g->db);
    return *nested ? reg_exec(g, "SAVEPOINT rg_write", err, errlen, what) : reg_begin_write(g, err, errlen, what);
}

int reg_write_commit(rg_registry *g, int nested, char *err, size_t errlen, const char *what)
{
    return reg_exec(g, nested ? "RELEASE rg_write" : "COMMIT", err, errlen, what);
}

void reg_write_rollback(rg_registry *g, int nested)
{
    sqlite3_exec(g->db, nested ? "ROLLBACK TO rg_write; RELEASE rg_write" : "ROLLBACK", NULL, NULL, NULL);
}

int rg_registry_begin(rg_registry *g, char *err, size_t errlen)
{
    if (!g || !sqlite3_get_autocommit(g->db)) {
        snprintf(err, errlen, "registry: a transaction is already open");
        return 2;
    }
    return reg_begin_write(g, err, errlen, "cannot start a write");
}

int rg_registry_commit(rg_registry *g, char *err, size_t errlen)
{
    if (!reg_exec(g, "COMMIT", err, errlen, "cannot commit")) return 0;
    sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
    return 2;
}

void rg_registry_rollback(rg_registry *g)
{
    if (g && !sqlite3_get_autocommit(g->db)) sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
}
