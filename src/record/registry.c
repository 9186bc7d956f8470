/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry.c -- the local run registry, one SQLite file.
 *
 * It must never lose or corrupt a run, with several `bench --record`
 * processes writing at once:
 *   - WAL journal: readers and the writer never block each other (a reader
 *     sees the last commit), a crash mid-write leaves the last committed
 *     state; opening reads the schema version without the write lock, which
 *     only a migration takes, so `runs list` works during a `bench --record`;
 *   - busy_timeout 10 s: a second writer waits for the first instead of
 *     failing with SQLITE_BUSY;
 *   - every write is one BEGIN IMMEDIATE transaction: the write lock is taken
 *     up front, so two writers cannot both read and then deadlock upgrading;
 *   - the schema is versioned (PRAGMA user_version) and marked as ours
 *     (PRAGMA application_id); migrations run in order, all in one
 *     transaction, so an old file is brought forward step by step and a file
 *     from a newer ropegrad, a foreign database or a corrupt file is refused.
 *
 * The manifest (the verified JSON text) is the source of truth; the columns
 * beside it are copies of its figures for listing and ranking.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
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
#include "stmt_cache.h"

/* "RGRD": marks a SQLite file as a ropegrad registry. */
#define RG_APPLICATION_ID 0x52475244
#define RG_SCHEMA_VERSION 4

struct rg_registry {
    sqlite3 *db;
    int read_only;
    int busy;                       /* the last failed step was SQLITE_BUSY/LOCKED (rg_registry_busy) */
    char path[4096];
    rg_stmt_cache stmts;            /* this connection's prepared statements */
};

static int prep(rg_registry *g, const char *sql, sqlite3_stmt **st) { return rg_stmt_prepare(&g->stmts, g->db, sql, st); }
static void release(rg_registry *g, sqlite3_stmt *st) { rg_stmt_release(&g->stmts, st); }

/* Migration i brings the schema from version i to version i + 1. */
static const char *const migrations[RG_SCHEMA_VERSION] = {
    /* 0 -> 1: the first schema. */
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  created_at TEXT NOT NULL,"
    "  observed_at TEXT NOT NULL,"
    "  evidence TEXT NOT NULL CHECK (evidence IN ('measured','imported','replicated')),"
    "  replicates_of INTEGER REFERENCES runs(id),"
    "  definition TEXT NOT NULL,"
    "  comparison_key TEXT NOT NULL,"
    "  implementation_digest TEXT NOT NULL,"
    "  run_digest TEXT NOT NULL UNIQUE,"
    "  device TEXT NOT NULL,"
    "  backend TEXT NOT NULL,"
    "  kernel INTEGER NOT NULL,"
    "  kernel_name TEXT NOT NULL,"
    "  status TEXT NOT NULL,"
    "  passed INTEGER NOT NULL,"
    "  total INTEGER NOT NULL,"
    "  mean_ns REAL NOT NULL,"
    "  geomean_ns REAL NOT NULL,"
    "  sol_score REAL,"
    "  manifest TEXT NOT NULL);"
    "CREATE INDEX runs_by_key ON runs(comparison_key, status, geomean_ns);"
    "CREATE TABLE run_workloads ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id),"
    "  idx INTEGER NOT NULL,"
    "  uuid TEXT NOT NULL,"
    "  median_ns REAL NOT NULL,"
    "  min_ns REAL, max_ns REAL, mean_ns REAL, stddev_ns REAL,"
    "  bytes REAL, t_sol_ns REAL, t_b_ns REAL, sol_score REAL,"
    "  pass INTEGER NOT NULL,"
    "  PRIMARY KEY (run_id, idx));"
    "CREATE TABLE notes ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),"
    "  created_at TEXT NOT NULL,"
    "  text TEXT NOT NULL);"
    "CREATE TABLE replications ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  original_id INTEGER NOT NULL REFERENCES runs(id),"
    "  replica_id INTEGER NOT NULL REFERENCES runs(id),"
    "  agreed INTEGER NOT NULL,"
    "  within INTEGER NOT NULL,"
    "  total INTEGER NOT NULL,"
    "  created_at TEXT NOT NULL);",
    /* 1 -> 2: the KernelIndex envelope (issue 10). The runs table is rebuilt:
     * an imported run has no kernel, correctness counts or geomean, so
     * those columns take NULL; it ranks by its own primary statistic. The
     * stored manifests are converted by convert_stored_manifests(). */
    "CREATE TABLE runs2 ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  created_at TEXT NOT NULL,"
    "  observed_at TEXT NOT NULL,"
    "  evidence TEXT NOT NULL CHECK (evidence IN ('measured','imported','replicated')),"
    "  replicates_of INTEGER REFERENCES runs(id),"
    "  definition TEXT NOT NULL,"
    "  comparison_key TEXT NOT NULL,"
    "  implementation_digest TEXT NOT NULL,"
    "  run_digest TEXT NOT NULL UNIQUE,"
    "  device TEXT NOT NULL,"
    "  backend TEXT NOT NULL,"
    "  kernel INTEGER,"
    "  kernel_name TEXT NOT NULL,"
    "  status TEXT NOT NULL,"
    "  passed INTEGER,"
    "  total INTEGER,"
    "  primary_statistic TEXT NOT NULL,"
    "  primary_ns REAL,"
    "  mean_ns REAL,"
    "  geomean_ns REAL,"
    "  sol_score REAL,"
    "  avg_speedup REAL, fast_count REAL, fast_total REAL,"
    "  source TEXT NOT NULL DEFAULT '', external_id TEXT NOT NULL DEFAULT '',"
    "  family TEXT NOT NULL DEFAULT '', architecture TEXT NOT NULL DEFAULT '',"
    "  manifest TEXT NOT NULL);"
    "INSERT INTO runs2 (id, created_at, observed_at, evidence, replicates_of, definition, comparison_key,"
    "  implementation_digest, run_digest, device, backend, kernel, kernel_name, status, passed, total,"
    "  primary_statistic, primary_ns, mean_ns, geomean_ns, sol_score, manifest)"
    "  SELECT id, created_at, observed_at, evidence, replicates_of, definition, comparison_key,"
    "  implementation_digest, run_digest, device, backend, kernel, kernel_name, status, passed, total,"
    "  'geomean', geomean_ns, mean_ns, geomean_ns, sol_score, manifest FROM runs;"
    "DROP INDEX runs_by_key;"
    "DROP TABLE runs;"
    "ALTER TABLE runs2 RENAME TO runs;"
    "CREATE INDEX runs_by_key ON runs(comparison_key, status, primary_ns);",
    /* 2 -> 3 (the index, src/index/): the bytes a manifest arrived as (served
     * byte for byte at /runs/ID.json; NULL for runs recorded here, whose
     * stored text is what they were verified as), and the kind of a note:
     * a note, a reproduction report, or a flag ("report an issue"). */
    "ALTER TABLE runs ADD COLUMN manifest_bytes BLOB;"
    "ALTER TABLE notes ADD COLUMN kind TEXT NOT NULL DEFAULT 'note' "
    "  CHECK (kind IN ('note','reproduction','flag'));"
    "CREATE INDEX runs_by_definition ON runs(definition, comparison_key);"
    "CREATE INDEX notes_by_run ON notes(run_id);"
    "CREATE INDEX replications_by_original ON replications(original_id);"
    "CREATE INDEX replications_by_replica ON replications(replica_id);",
    /* 3 -> 4 (issue 24): every copy of a run counts. A signature that a later
     * copy (push, import, `runs sign`) brings is added to the stored manifest
     * and listed here with when the index received it; metadata in which a
     * later copy differs is kept here as a conflict. index_stored_signatures()
     * lists the signatures the stored manifests already carry. */
    "CREATE TABLE run_signatures ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),"
    "  key_id TEXT NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  UNIQUE (run_id, key_id));"
    "CREATE TABLE run_conflicts ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),"
    "  created_at TEXT NOT NULL,"
    "  member TEXT NOT NULL,"
    "  stored TEXT NOT NULL,"
    "  offered TEXT NOT NULL);"
    "CREATE INDEX run_conflicts_by_run ON run_conflicts(run_id);",
};

static int convert_stored_manifests(rg_registry *g, char *err, size_t errlen);
static int index_stored_signatures(rg_registry *g, char *err, size_t errlen);
/* The C half of a migration, run after its SQL (NULL: none). */
static int (*const migration_steps[RG_SCHEMA_VERSION])(rg_registry *, char *, size_t) = {
    NULL, convert_stored_manifests, NULL, index_stored_signatures};

static const char *const our_tables[] = {"runs", "run_workloads", "notes", "replications"};
static int merge_copy(rg_registry *g, int64_t rid, const cJSON *offered, const rg_manifest *om, const char *now,
                      int *existed, char *err, size_t errlen);
static int record_signatures(rg_registry *g, int64_t rid, const cJSON *doc, const char *now);

/* The XDG Base Directory rule: $XDG_DATA_HOME when set to an absolute path,
 * else ~/.local/share. Without HOME either, the current folder. */
const char *rg_registry_path(const char *opt)
{
    if (opt && *opt) return opt;
    const char *env = getenv("ROPEGRAD_DB");
    if (env && *env) return env;
    static char path[4096];
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(path, sizeof path, "%s/ropegrad/runs.db", xdg);
    else if (home && home[0] == '/')
        snprintf(path, sizeof path, "%s/.local/share/ropegrad/runs.db", home);
    else
        snprintf(path, sizeof path, "ropegrad-runs.db");
    return path;
}

/* mkdir -p of path's folder (0700: a user's data folder, as XDG asks), for a
 * registry about to be created. Returns 0, or 2 with a message. */
static int make_parent_dirs(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create folder %s: %s", path, dir, strerror(errno));
            return 2;
        }
        *p = c;
        if (!c) return 0;
    }
}

static void now_utc(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int busy_code(int rc);

static int fail(rg_registry *g, char *err, size_t errlen, const char *what)
{
    g->busy = busy_code(sqlite3_errcode(g->db));
    snprintf(err, errlen, "%s: %s: %s", g->path, what, sqlite3_errmsg(g->db));
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

static int busy_code(int rc) { return rc == SQLITE_BUSY || rc == SQLITE_LOCKED; }

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
static int first_step(rg_registry *g, const char *sql, sqlite3_stmt **st)
{
    const double t0 = mono_ms();
    for (;;) {
        int rc = prep(g, sql, st);
        if (rc == SQLITE_OK) rc = sqlite3_step(*st);
        if (!busy_code(rc) || !busy_again(t0)) return rc;
        release(g, *st);
        *st = NULL;
    }
}

/* An opening step failed: say "busy" when it was, not "not a registry". */
static int fail_open(rg_registry *g, int rc, char *err, size_t errlen, const char *what)
{
    if (busy_code(rc)) {
        g->busy = 1;
        snprintf(err, errlen, "%s: busy: another process kept it locked for %d s (%s)", g->path,
                 RG_BUSY_RETRY_MS / 1000, sqlite3_errmsg(g->db));
        return 2;
    }
    return fail(g, err, errlen, what);
}

static int exec(rg_registry *g, const char *sql, char *err, size_t errlen, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(g->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s: %s", g->path, what, msg ? msg : sqlite3_errmsg(g->db));
        sqlite3_free(msg);
        return 2;
    }
    return 0;
}

/* BEGIN IMMEDIATE (the write lock, up front), retried like the opening steps. */
static int begin_write(rg_registry *g, char *err, size_t errlen, const char *what)
{
    sqlite3_stmt *st = NULL;
    g->busy = 0;
    int rc = first_step(g, "BEGIN IMMEDIATE", &st);
    rc = rc == SQLITE_DONE ? 0 : fail_open(g, rc, err, errlen, what);
    release(g, st);
    return rc;
}

static int pragma_int(rg_registry *g, const char *sql, int *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = first_step(g, sql, &st);
    if (rc != SQLITE_ROW) {
        rc = fail_open(g, rc, err, errlen, "cannot read it");
        release(g, st);
        return rc;
    }
    *out = sqlite3_column_int(st, 0);
    release(g, st);
    return 0;
}

/* Counts the tables in the file, and how many of ours are there. */
static int count_tables(rg_registry *g, int *all, int *ours, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc;
    *all = *ours = 0;
    for (rc = first_step(g, "SELECT name FROM sqlite_schema WHERE type='table' AND name NOT LIKE 'sqlite_%'", &st);
         rc == SQLITE_ROW; rc = sqlite3_step(st)) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        (*all)++;
        for (size_t i = 0; i < sizeof our_tables / sizeof our_tables[0]; i++)
            if (name && !strcmp(name, our_tables[i])) (*ours)++;
    }
    rc = rc == SQLITE_DONE ? 0 : fail_open(g, rc, err, errlen, "not a ropegrad registry (cannot read its schema)");
    release(g, st);
    return rc;
}

/* What a file's schema, as read, asks of an opener. */
enum { SCHEMA_CURRENT, SCHEMA_MIGRATE, SCHEMA_REFUSED };

typedef struct schema {
    int app, ver;   /* PRAGMA application_id, user_version */
    int all, ours;  /* tables in the file; how many of them are ours */
} schema;

static int read_schema(rg_registry *g, schema *s, char *err, size_t errlen)
{
    if (pragma_int(g, "PRAGMA application_id", &s->app, err, errlen) ||
        pragma_int(g, "PRAGMA user_version", &s->ver, err, errlen) || count_tables(g, &s->all, &s->ours, err, errlen))
        return 2;
    return 0;
}

/* Current, to be migrated (a new empty file, or an older schema of ours), or
 * refused with a reason in err: empty when create is off, a foreign
 * database, a newer schema, our current schema with tables missing. */
static int judge_schema(rg_registry *g, const schema *s, int create, char *err, size_t errlen)
{
    if (s->app == 0 && s->ver == 0 && s->all == 0) {
        if (create) return SCHEMA_MIGRATE;
        snprintf(err, errlen, "%s: an empty registry (no runs recorded yet)", g->path);
        return SCHEMA_REFUSED;
    }
    if (s->app != RG_APPLICATION_ID) {
        snprintf(err, errlen, "%s: not a ropegrad registry (a foreign SQLite database, application_id %d)", g->path,
                 s->app);
        return SCHEMA_REFUSED;
    }
    if (s->ver > RG_SCHEMA_VERSION) {
        snprintf(err, errlen, "%s: registry schema version %d is newer than this ropegrad's (%d): upgrade ropegrad",
                 g->path, s->ver, RG_SCHEMA_VERSION);
        return SCHEMA_REFUSED;
    }
    if (s->ver < RG_SCHEMA_VERSION) return SCHEMA_MIGRATE;
    if (s->ours != (int)(sizeof our_tables / sizeof our_tables[0])) {
        snprintf(err, errlen, "%s: a damaged ropegrad registry (tables missing)", g->path);
        return SCHEMA_REFUSED;
    }
    return SCHEMA_CURRENT;
}

/* Brings the schema to RG_SCHEMA_VERSION. Runs inside BEGIN IMMEDIATE so two
 * processes creating one new file at once cannot both migrate it: the
 * schema is read again under the lock, and the second opener finds the
 * first one's result (current: nothing left to do). */
static int migrate_locked(rg_registry *g, int create, char *err, size_t errlen);

/* Foreign keys are off while the runs table is rebuilt (DROP TABLE would
 * otherwise delete through them); the pragma only acts outside a transaction. */
static int migrate(rg_registry *g, int create, char *err, size_t errlen)
{
    if (exec(g, "PRAGMA foreign_keys=OFF", err, errlen, "cannot configure it")) return 2;
    int rc = migrate_locked(g, create, err, errlen);
    if (exec(g, "PRAGMA foreign_keys=ON", err, rc ? 0 : errlen, "cannot configure it")) rc = 2;
    return rc;
}

static int migrate_locked(rg_registry *g, int create, char *err, size_t errlen)
{
    schema s;
    if (begin_write(g, err, errlen, "cannot lock it")) return 2;
    if (read_schema(g, &s, err, errlen)) goto rollback;
    switch (judge_schema(g, &s, create, err, errlen)) {
    case SCHEMA_CURRENT: return exec(g, "COMMIT", err, errlen, "cannot commit the schema");
    case SCHEMA_REFUSED: goto rollback;
    default: break;
    }
    for (int v = s.ver; v < RG_SCHEMA_VERSION; v++) {
        char sql[96];
        if (exec(g, migrations[v], err, errlen, "schema migration failed")) goto rollback;
        if (migration_steps[v] && migration_steps[v](g, err, errlen)) goto rollback;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
        if (exec(g, sql, err, errlen, "schema migration failed")) goto rollback;
    }
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d", RG_APPLICATION_ID);
    if (exec(g, sql, err, errlen, "schema migration failed")) goto rollback;
    return exec(g, "COMMIT", err, errlen, "cannot commit the schema");
rollback:
    sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
    return 2;
}

/* PRAGMA quick_check on an existing file, before anything reads or writes
 * it: a damaged file is refused, named as corrupt, by every command (a page
 * SQLite cannot read would otherwise surface later as "no run #N", or be
 * written into). Random bytes are not a database at all: that is said by the
 * schema check that follows, as before. */
static int check_not_corrupt(rg_registry *g, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = first_step(g, "PRAGMA quick_check(1)", &st);
    if (rc == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (t && !strcmp(t, "ok")) {
            rc = 0;
        } else {
            char why[201];   /* SQLite's report spans lines: one line here */
            snprintf(why, sizeof why, "%s", t ? t : "no answer");
            for (char *c = why; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = ' ';
            snprintf(err, errlen, "%s: corrupt registry (SQLite quick_check: %s); refused, left as it is", g->path, why);
        }
    } else if (rc == SQLITE_CORRUPT) {
        snprintf(err, errlen, "%s: corrupt registry (%s); refused, left as it is", g->path, sqlite3_errmsg(g->db));
    } else if (rc == SQLITE_NOTADB || rc == SQLITE_DONE) {
        rc = 0;   /* not SQLite: judged (and named) by the schema check */
    } else {
        fail_open(g, rc, err, errlen, "cannot read it");
    }
    release(g, st);
    return rc ? 2 : 0;
}

/* Whether this process must leave the registry as it is: the file has no
 * write permission bit (even for root, who could write it anyway: its owner
 * meant it to stay), or its folder has none or is not writable for us (the
 * WAL and shared-memory files live beside it), or the file system is
 * mounted read-only. *dir_ro says it was the folder or the mount. */
static int must_read_only(const char *path, const struct stat *sb, int *dir_ro)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    struct stat ds;
    struct statvfs vfs;
    *dir_ro = stat(dir, &ds) != 0 || !(ds.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) || access(dir, W_OK) != 0 ||
              (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY));
    return *dir_ro || !(sb->st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) || access(path, W_OK) != 0;
}

/* A registry in a folder nobody may write: SQLite could not create the
 * shared-memory file a WAL reader needs, so such a file is opened as
 * immutable (a URI parameter) when no WAL file holds newer pages. The path
 * goes into the URI percent-encoded. */
static int open_immutable(const char *path, sqlite3 **db)
{
    char uri[3 * 4096 + 64];
    size_t k = (size_t)snprintf(uri, sizeof uri, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c && k + 4 < sizeof uri; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("/._-~", *c))
            uri[k++] = (char)*c;
        else
            k += (size_t)snprintf(uri + k, sizeof uri - k, "%%%02X", *c);
    }
    snprintf(uri + k, sizeof uri - k, "?immutable=1");
    return sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
}

int rg_registry_open(const char *path, int create, rg_registry **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!path || !*path) {
        snprintf(err, errlen, "no registry file given");
        return 2;
    }
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    if (!exists && !create) {
        snprintf(err, errlen, "%s: no registry here (record a run with `ropegrad bench --record`)", path);
        return 2;
    }
    if (exists && !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        return 2;
    }
    if (!exists && make_parent_dirs(path, err, errlen)) return 2;
    rg_registry *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    snprintf(g->path, sizeof g->path, "%s", path);
    /* Read-only when the file, its folder or its mount may not be written
     * (must_read_only): list, show, rank, compare and report still work;
     * every write is refused by SQLite with one line. */
    int dir_ro = 0;
    int readonly = exists && must_read_only(path, &sb, &dir_ro);
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    int orc = readonly && dir_ro && access(wal, F_OK) != 0 ? open_immutable(path, &g->db)
                                                            : sqlite3_open_v2(path, &g->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (orc != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot open: %s", path, g->db ? sqlite3_errmsg(g->db) : "out of memory");
        rg_registry_close(g);
        return 2;
    }
    sqlite3_busy_timeout(g->db, 10000);
    sqlite3_extended_result_codes(g->db, 0);
    /* The schema check is a plain read, without the write lock: under WAL it
     * never waits for a writer, so `runs list` works while a `bench --record`
     * is storing. Only a migration locks (see migrate()). A new file has no
     * schema to read yet. */
    int verdict = SCHEMA_MIGRATE;
    if (exists) {
        /* One read transaction, so the three reads see one snapshot: read
         * one by one, a file that another opener was creating could show
         * application_id 0 from before its commit and tables from after
         * ("a foreign SQLite database": the same flaky test found it). */
        schema s;
        int bad = exec(g, "BEGIN", err, errlen, "cannot read it") || check_not_corrupt(g, err, errlen) ||
                  read_schema(g, &s, err, errlen);
        sqlite3_exec(g->db, bad ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
        if (bad) {
            rg_registry_close(g);
            return 2;
        }
        verdict = judge_schema(g, &s, create, err, errlen);
        if (readonly && verdict != SCHEMA_CURRENT) {
            /* No migration possible: the file must already be a current registry. */
            snprintf(err, errlen, "%s: not a ropegrad registry of schema version %d (read-only, cannot migrate)",
                     path, RG_SCHEMA_VERSION);
            verdict = SCHEMA_REFUSED;
        }
        /* Refused before anything below changes the file: switching a
         * foreign database to WAL would rewrite its header (found by
         * test_registry_hostile). */
        if (verdict == SCHEMA_REFUSED) {
            rg_registry_close(g);
            return 2;
        }
        if (readonly) {
            g->read_only = 1;
            *out = g;
            return 0;
        }
    }
    /* WAL is a property of the file; switching needs a moment alone with it,
     * so a racing opener may see SQLITE_BUSY, with or without the busy
     * handler: first_step covers both. On a file already in WAL it changes
     * nothing and takes no lock. */
    sqlite3_stmt *st = NULL;
    int rc = first_step(g, "PRAGMA journal_mode=WAL", &st);
    if (rc != SQLITE_ROW) {
        rc = fail_open(g, rc, err, errlen, "not a ropegrad registry (cannot open it as SQLite)");
        release(g, st);
        rg_registry_close(g);
        return rc;
    }
    release(g, st);
    if (exec(g, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", err, errlen, "cannot configure it") ||
        (verdict == SCHEMA_MIGRATE && migrate(g, create, err, errlen))) {
        rg_registry_close(g);
        return 2;
    }
    *out = g;
    return 0;
}

int rg_registry_read_only(const rg_registry *g) { return g ? g->read_only : 0; }

int rg_registry_busy(const rg_registry *g) { return g ? g->busy : 0; }

int rg_registry_checkpoint(rg_registry *g, char *err, size_t errlen)
{
    if (!g) {
        snprintf(err, errlen, "no registry");
        return 2;
    }
    if (g->read_only) return 0;
    if (sqlite3_wal_checkpoint_v2(g->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        return fail(g, err, errlen, "cannot copy the WAL into the file");
    return 0;
}

void rg_registry_close(rg_registry *g)
{
    if (!g) return;
    rg_stmt_cache_clear(&g->stmts);
    if (g->db) sqlite3_close(g->db);
    free(g);
}

/* ---- storing ------------------------------------------------------------------------- */

static void bind_num(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v)) sqlite3_bind_double(st, i, v);
    else sqlite3_bind_null(st, i);
}

static void bind_count(sqlite3_stmt *st, int i, int v)
{
    if (v >= 0) sqlite3_bind_int(st, i, v);
    else sqlite3_bind_null(st, i);
}

/* The columns copied from a manifest, in this order, from parameter `at`. */
#define MF_COLUMNS                                                                                                \
    "definition, comparison_key, implementation_digest, run_digest, device, backend, kernel, kernel_name, "      \
    "status, passed, total, primary_statistic, primary_ns, mean_ns, geomean_ns, sol_score, avg_speedup, "       \
    "fast_count, fast_total, source, external_id, family, architecture, manifest"
#define MF_N_COLUMNS 24

static int bind_manifest(sqlite3_stmt *st, int at, const rg_manifest *m, const char *key, const char *text)
{
    sqlite3_bind_text(st, at + 0, m->benchmark, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 2, m->implementation_digest, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 3, m->obj[RG_ROLE_RUN].digest, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 4, m->product, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 5, m->backend, -1, SQLITE_STATIC);
    bind_count(st, at + 6, m->kernel);
    sqlite3_bind_text(st, at + 7, m->kernel_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 8, m->status, -1, SQLITE_STATIC);
    bind_count(st, at + 9, m->passed);
    bind_count(st, at + 10, m->total);
    sqlite3_bind_text(st, at + 11, m->primary_statistic, -1, SQLITE_STATIC);
    bind_num(st, at + 12, m->primary_ns);
    bind_num(st, at + 13, m->suite_mean_ns);
    bind_num(st, at + 14, m->suite_geomean_ns);
    bind_num(st, at + 15, m->sol_score);
    bind_num(st, at + 16, m->avg_speedup);
    bind_num(st, at + 17, m->fast_1_count);
    bind_num(st, at + 18, m->fast_1_total);
    sqlite3_bind_text(st, at + 19, m->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 20, m->external_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 21, m->family, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 22, m->architecture, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 23, text, -1, SQLITE_STATIC);
    return at + MF_N_COLUMNS;
}

/* The run's comparison key, always by the written rule: a recorded key that
 * differs is refused, so a run enters only the group its own fields derive. */
static int manifest_key(const rg_manifest *m, char key[RG_DIGEST_LEN], char *err, size_t errlen)
{
    if (rg_comparison_key(m, key, err, errlen)) return 2;
    if (m->comparison_key_recorded && strcmp(key, m->comparison_key)) {
        snprintf(err, errlen, "comparisonKey %.80s is not the one the run's own fields derive (%s): refused",
                 m->comparison_key, key);
        return 2;
    }
    return 0;
}

static int store_workloads(rg_registry *g, int64_t rid, const rg_manifest *m)
{
    sqlite3_stmt *st = NULL;
    if (prep(g, "DELETE FROM run_workloads WHERE run_id = ?", &st) != SQLITE_OK) return 2;
    sqlite3_bind_int64(st, 1, rid);
    int rc = sqlite3_step(st);
    release(g, st);
    if (rc != SQLITE_DONE) return 2;
    if (prep(g,
                           "INSERT INTO run_workloads (run_id, idx, uuid, median_ns, min_ns, max_ns, mean_ns, "
                           "stddev_ns, bytes, t_sol_ns, t_b_ns, sol_score, pass) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", &st) != SQLITE_OK)
        return 2;
    for (size_t i = 0; i < m->n_workloads; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        /* run_workloads holds measurements: a workload the record names but did
         * not time (no run detail, e.g. a workload object alone) has no row. */
        if (!isfinite(w->median)) continue;
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        sqlite3_bind_int64(st, 1, rid);
        sqlite3_bind_int(st, 2, w->index);
        sqlite3_bind_text(st, 3, w->uuid, -1, SQLITE_STATIC);
        bind_num(st, 4, w->median);
        bind_num(st, 5, w->min);
        bind_num(st, 6, w->max);
        bind_num(st, 7, w->mean);
        bind_num(st, 8, w->stddev);
        bind_num(st, 9, w->bytes);
        bind_num(st, 10, w->t_sol_ns);
        bind_num(st, 11, w->t_b_ns);
        bind_num(st, 12, w->sol_score);
        sqlite3_bind_int(st, 13, w->pass);
        if (sqlite3_step(st) != SQLITE_DONE) {
            release(g, st);
            return 2;
        }
    }
    release(g, st);
    return 0;
}

/* Stores a manifest; bytes[nbytes] (NULL: none) is the text it arrived as,
 * kept to be served byte for byte (the index's /runs/ID.json). */
static int store_impl(rg_registry *g, const cJSON *manifest, const char *bytes, size_t nbytes,
                      const char *evidence, int64_t replicates_of, int64_t *id, int *existed, char *err,
                      size_t errlen)
{
    if (id) *id = 0;
    if (existed) *existed = 0;
    if (!g || !manifest || !evidence) {
        snprintf(err, errlen, "registry: nothing to store");
        return 2;
    }
    rg_manifest m;
    char key[RG_DIGEST_LEN];
    if (rg_manifest_read(manifest, &m, err, errlen)) return 2;
    if (manifest_key(&m, key, err, errlen)) {
        rg_manifest_free(&m);
        return 2;
    }
    char *text = rg_json_print(manifest, 0, err, errlen);
    if (!text) {
        rg_manifest_free(&m);
        return 2;
    }
    /* What is stored must read back strictly (a tree built with a repeated
     * member name prints as text the strict reader refuses; found by fuzzing). */
    if (!bytes) {
        char e2[RG_ERRLEN];
        cJSON *back = rg_json_parse_strict(text, strlen(text), "the manifest", e2, sizeof e2);
        if (!back) {
            snprintf(err, errlen, "registry: the manifest cannot be stored: %.400s", e2);
            free(text);
            rg_manifest_free(&m);
            return 2;
        }
        cJSON_Delete(back);
    }
    char now[32];
    now_utc(now);
    sqlite3_stmt *st = NULL;
    int rc = 2;
    if (begin_write(g, err, errlen, "cannot start a write")) {
        free(text);
        rg_manifest_free(&m);
        return 2;
    }
    /* Already here (e.g. imported twice)? Then it is the same run. */
    if (prep(g, "SELECT id FROM runs WHERE run_digest = ?", &st) != SQLITE_OK) goto dberr;
    sqlite3_bind_text(st, 1, m.obj[RG_ROLE_RUN].digest, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        int64_t old = sqlite3_column_int64(st, 0);
        int merged = 1;
        if (id) *id = old;
        release(g, st);
        st = NULL;
        free(text);
        text = NULL;
        rc = merge_copy(g, old, manifest, &m, now, &merged, err, errlen);
        if (existed) *existed = merged;
        if (rc) goto rollback;
        rg_manifest_free(&m);
        return exec(g, "COMMIT", err, errlen, "cannot commit");
    }
    release(g, st);
    st = NULL;
    if (prep(g,
                           "INSERT INTO runs (created_at, observed_at, evidence, replicates_of, " MF_COLUMNS
                           ", manifest_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &st) != SQLITE_OK)
        goto dberr;
    sqlite3_bind_text(st, 1, now, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, m.observed_at, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, evidence, -1, SQLITE_STATIC);
    if (replicates_of > 0) sqlite3_bind_int64(st, 4, replicates_of);
    else sqlite3_bind_null(st, 4);
    int at = bind_manifest(st, 5, &m, key, text);
    if (bytes) sqlite3_bind_blob64(st, at, bytes, nbytes, SQLITE_STATIC);
    else sqlite3_bind_null(st, at);
    if (sqlite3_step(st) != SQLITE_DONE) goto dberr;
    release(g, st);
    st = NULL;
    int64_t rid = sqlite3_last_insert_rowid(g->db);
    if (store_workloads(g, rid, &m) || record_signatures(g, rid, manifest, now)) goto dberr;
    free(text);
    text = NULL;
    rg_manifest_free(&m);
    if (exec(g, "COMMIT", err, errlen, "cannot commit the run")) goto rollback;
    if (id) *id = rid;
    return 0;
dberr:
    fail(g, err, errlen, "cannot store the run");
rollback:
    if (st) release(g, st);
    free(text);
    rg_manifest_free(&m);
    sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int rg_registry_store(rg_registry *g, const cJSON *manifest, const char *evidence, int64_t replicates_of,
                      int64_t *id, int *existed, char *err, size_t errlen)
{
    return store_impl(g, manifest, NULL, 0, evidence, replicates_of, id, existed, err, errlen);
}

/* Migration 1 -> 2, its C half: every stored manifest of the old format
 * (ManifestBundle) is converted to the current envelope in place, and its
 * row's copied columns follow. Runs inside migrate()'s transaction: any
 * failure rolls the whole migration back, nothing is lost. */
static int convert_stored_manifests(rg_registry *g, char *err, size_t errlen)
{
    sqlite3_stmt *sel = NULL, *upd = NULL;
    int rc = 2;
    if (prep(g, "SELECT id, manifest FROM runs ORDER BY id", &sel) != SQLITE_OK ||
        prep(g, "UPDATE runs SET (" MF_COLUMNS ") = (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                                  "WHERE id = ?", &upd) != SQLITE_OK) {
        fail(g, err, errlen, "schema migration failed");
        goto out;
    }
    int step;
    while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t rid = sqlite3_column_int64(sel, 0);
        const char *text = (const char *)sqlite3_column_text(sel, 1);
        char what[96], e2[RG_ERRLEN];
        snprintf(what, sizeof what, "run #%lld", (long long)rid);
        cJSON *old = text ? rg_json_parse_strict(text, strlen(text), what, e2, sizeof e2) : NULL;
        if (!old || !rg_manifest_is_legacy(old)) {
            cJSON_Delete(old);
            continue;   /* already current (or unreadable: left as it is, refused when read) */
        }
        cJSON *doc = rg_manifest_convert_legacy(old, e2, sizeof e2);
        cJSON_Delete(old);
        char *ntext = doc ? rg_json_print(doc, 0, e2, sizeof e2) : NULL;
        rg_manifest m;
        char key[RG_DIGEST_LEN];
        int bad = !ntext || rg_manifest_read(doc, &m, e2, sizeof e2);
        cJSON_Delete(doc);
        if (!bad && manifest_key(&m, key, e2, sizeof e2)) {
            rg_manifest_free(&m);
            bad = 1;
        }
        if (bad) {
            snprintf(err, errlen, "%s: run #%lld: cannot convert its old manifest: %s", g->path, (long long)rid, e2);
            free(ntext);
            goto out;
        }
        sqlite3_reset(upd);
        sqlite3_clear_bindings(upd);
        int at = bind_manifest(upd, 1, &m, key, ntext);
        sqlite3_bind_int64(upd, at, rid);
        int ok = sqlite3_step(upd) == SQLITE_DONE && !store_workloads(g, rid, &m);
        rg_manifest_free(&m);
        free(ntext);
        if (!ok) {
            fail(g, err, errlen, "schema migration failed");
            goto out;
        }
    }
    if (step != SQLITE_DONE) {
        fail(g, err, errlen, "schema migration failed");
        goto out;
    }
    rc = 0;
out:
    release(g, sel);
    release(g, upd);
    return rc;
}

/* ---- reading ---------------------------------------------------------------------------- */

#define ROW_COLUMNS                                                                                                \
    "id, created_at, observed_at, evidence, COALESCE(replicates_of, 0), definition, comparison_key, "             \
    "implementation_digest, run_digest, device, backend, kernel_name, status, COALESCE(kernel, -1), "             \
    "COALESCE(passed, -1), COALESCE(total, -1), "                                                               \
    "(SELECT COUNT(*) FROM run_workloads w WHERE w.run_id = runs.id), mean_ns, geomean_ns, sol_score, "          \
    "primary_statistic, primary_ns, avg_speedup, fast_count, fast_total, source, external_id, family, architecture"

static void copy_col(sqlite3_stmt *st, int i, char *dst, size_t n)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    snprintf(dst, n, "%s", s ? (const char *)s : "");
}

static double col_num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* After a step loop that ended with rc: 0 when it ran to the end; else arr
 * is freed and err says why (out of memory when it stopped on a row). */
static int end_steps(rg_registry *g, int rc, void *arr, char *err, size_t errlen, const char *what)
{
    if (rc == SQLITE_DONE) return 0;
    free(arr);
    if (rc == SQLITE_ROW) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return fail(g, err, errlen, what);
}

/* arr (n used of *cap elements of size bytes) with room for one more: arr
 * itself or its reallocation, NULL when out of memory (arr is left as it was). */
static void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return arr;
    size_t c = *cap ? *cap * 2 : 16;
    void *q = realloc(arr, c * size);
    if (q) *cap = c;
    return q;
}

static void read_row(sqlite3_stmt *st, rg_run_row *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    copy_col(st, 1, r->created_at, sizeof r->created_at);
    copy_col(st, 2, r->observed_at, sizeof r->observed_at);
    copy_col(st, 3, r->evidence, sizeof r->evidence);
    r->replicates_of = sqlite3_column_int64(st, 4);
    copy_col(st, 5, r->definition, sizeof r->definition);
    copy_col(st, 6, r->comparison_key, sizeof r->comparison_key);
    copy_col(st, 7, r->implementation_digest, sizeof r->implementation_digest);
    copy_col(st, 8, r->run_digest, sizeof r->run_digest);
    copy_col(st, 9, r->device, sizeof r->device);
    copy_col(st, 10, r->backend, sizeof r->backend);
    copy_col(st, 11, r->kernel_name, sizeof r->kernel_name);
    copy_col(st, 12, r->status, sizeof r->status);
    r->kernel = sqlite3_column_int(st, 13);
    r->passed = sqlite3_column_int(st, 14);
    r->total = sqlite3_column_int(st, 15);
    r->n_workloads = sqlite3_column_int(st, 16);
    r->mean_ns = col_num(st, 17);
    r->geomean_ns = col_num(st, 18);
    r->sol_score = col_num(st, 19);
    copy_col(st, 20, r->primary_statistic, sizeof r->primary_statistic);
    r->primary_ns = col_num(st, 21);
    r->avg_speedup = col_num(st, 22);
    r->fast_count = col_num(st, 23);
    r->fast_total = col_num(st, 24);
    copy_col(st, 25, r->source, sizeof r->source);
    copy_col(st, 26, r->external_id, sizeof r->external_id);
    copy_col(st, 27, r->family, sizeof r->family);
    copy_col(st, 28, r->architecture, sizeof r->architecture);
}

int rg_registry_list(rg_registry *g, rg_run_row **rows, size_t *n, char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT " ROW_COLUMNS " FROM runs ORDER BY id", &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot list runs");
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_run_row *more = grow(*rows, *n, &cap, sizeof **rows);
        if (more) *rows = more;
        else {
            release(g, st);
            free(*rows);
            *rows = NULL;
            *n = 0;
            snprintf(err, errlen, "out of memory");
            return 2;
        }
        read_row(st, &(*rows)[(*n)++]);
    }
    release(g, st);
    if (rc != SQLITE_DONE) {
        free(*rows);
        *rows = NULL;
        *n = 0;
        return fail(g, err, errlen, "cannot list runs");
    }
    return 0;
}

/* A malloc'd copy of column col of st (n bytes, NUL-terminated), NULL when out of memory. */
static char *column_copy(sqlite3_stmt *st, int col, size_t *n)
{
    const void *p = sqlite3_column_blob(st, col);
    size_t len = (size_t)sqlite3_column_bytes(st, col);
    char *out = malloc(len + 1);
    if (!out) return NULL;
    if (len) memcpy(out, p, len);
    out[len] = 0;
    if (n) *n = len;
    return out;
}

/* Run id's row and, when asked for, its stored text (manifest) and its
 * served bytes (those it arrived as, else the text), in one query. */
static int get_row_bytes(rg_registry *g, int64_t id, rg_run_row *row, char **text, char **bytes, size_t *nbytes,
                         char *err, size_t errlen)
{
    if (text) *text = NULL;
    if (bytes) *bytes = NULL;
    sqlite3_stmt *st;
    if (prep(g, bytes ? "SELECT " ROW_COLUMNS ", manifest, COALESCE(manifest_bytes, CAST(manifest AS BLOB)) "
                        "FROM runs WHERE id = ?"
                      : "SELECT " ROW_COLUMNS ", manifest FROM runs WHERE id = ?",
             &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot read runs");
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        release(g, st);
        if (rc == SQLITE_DONE) {
            snprintf(err, errlen, "%s: no run #%lld", g->path, (long long)id);
            return 1;
        }
        return fail(g, err, errlen, "cannot read runs");
    }
    rg_run_row tmp;
    read_row(st, row ? row : &tmp);
    int oom = (text && !(*text = column_copy(st, 29, NULL))) || (bytes && !(*bytes = column_copy(st, 30, nbytes)));
    release(g, st);
    if (oom) {
        if (text) free(*text), *text = NULL;
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return 0;
}

static int get_row(rg_registry *g, int64_t id, rg_run_row *row, char **text, char *err, size_t errlen)
{
    return get_row_bytes(g, id, row, text, NULL, NULL, err, errlen);
}

int rg_registry_get_text(rg_registry *g, int64_t id, char **text, char *err, size_t errlen)
{
    return get_row(g, id, NULL, text, err, errlen);
}

/* manifest read from text, the stored text of run id. */
static int read_stored(rg_registry *g, int64_t id, const char *text, rg_manifest *manifest, int flags, char *err,
                       size_t errlen)
{
    char what[128], e2[RG_ERRLEN];
    snprintf(what, sizeof what, "run #%lld's stored manifest", (long long)id);
    cJSON *doc = rg_json_parse_strict(text, strlen(text), what, e2, sizeof e2);
    if (!doc || rg_manifest_read_opts(doc, manifest, flags, e2, sizeof e2)) {
        cJSON_Delete(doc);
        snprintf(err, errlen, "%s: run #%lld: its stored manifest is not readable: %s", g->path, (long long)id, e2);
        return 2;
    }
    cJSON_Delete(doc);
    return 0;
}

static int get_manifest(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, int flags, char *err,
                        size_t errlen)
{
    if (manifest) memset(manifest, 0, sizeof *manifest);
    char *text = NULL;
    int rc = get_row(g, id, row, manifest ? &text : NULL, err, errlen);
    if (rc || !manifest) return rc;
    rc = read_stored(g, id, text, manifest, flags, err, errlen);
    free(text);
    return rc;
}

int rg_registry_get(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char *err, size_t errlen)
{
    return get_manifest(g, id, row, manifest, 0, err, errlen);
}

int rg_registry_get_display(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char *err,
                            size_t errlen)
{
    int rc = get_manifest(g, id, row, manifest, RG_MF_NO_DIGESTS, err, errlen);
    if (!rc && manifest && row) snprintf(manifest->obj[RG_ROLE_RUN].digest, RG_DIGEST_LEN, "%s", row->run_digest);
    return rc;
}

int rg_registry_get_page(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char **text,
                         char **bytes, size_t *nbytes, char *err, size_t errlen)
{
    if (text) *text = NULL;
    if (bytes) *bytes = NULL;
    if (!g || !row || !manifest || !text || !bytes || !nbytes) {
        snprintf(err, errlen, "rg_registry_get_page: missing argument");
        return 2;
    }
    memset(manifest, 0, sizeof *manifest);
    int rc = get_row_bytes(g, id, row, text, bytes, nbytes, err, errlen);
    if (!rc) rc = read_stored(g, id, *text, manifest, RG_MF_NO_DIGESTS, err, errlen);
    if (rc) {
        free(*text);
        free(*bytes);
        *text = *bytes = NULL;
        return rc;
    }
    snprintf(manifest->obj[RG_ROLE_RUN].digest, RG_DIGEST_LEN, "%s", row->run_digest);
    return 0;
}

/* One integer from sql with the comparison key (when not NULL; and maybe
 * two more parameters) bound; *out 0 when there is no row. */
static int query_i64(rg_registry *g, const char *sql, const char *key, double x, int64_t y, int64_t *out)
{
    sqlite3_stmt *st;
    *out = 0;
    if (prep(g, sql, &st) != SQLITE_OK) return 2;
    if (key) sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    if (sqlite3_bind_parameter_count(st) >= 3) {
        sqlite3_bind_double(st, 2, x);
        sqlite3_bind_int64(st, 3, y);
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
    release(g, st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : 2;
}

/* Counts on the (comparison_key, status, primary_ns) index, so a run page
 * costs O(log n) whatever the size of its group (the index's load benchmark
 * has 10,000 runs in one group). Same order as before: the primary statistic ascending,
 * ties by id. */
int rg_registry_rank_of(rg_registry *g, int64_t id, int *rank, int *group_size, int64_t *first, char *err,
                        size_t errlen)
{
    *rank = 0;
    *group_size = 0;
    *first = 0;
    rg_run_row row;
    int rc = rg_registry_get(g, id, &row, NULL, err, errlen);
    if (rc) return rc;
    int64_t size = 0, before = 0;
    /* Ranked: passed with a primary figure (a `check` run times nothing). */
    int ranked = !strcmp(row.status, "passed") && isfinite(row.primary_ns);
    if (query_i64(g,
                  "SELECT COUNT(*) FROM runs WHERE comparison_key = ? AND status = 'passed' "
                  "AND primary_ns IS NOT NULL",
                  row.comparison_key, 0, 0, &size) ||
        (ranked &&
         query_i64(g,
                   "SELECT COUNT(*) FROM runs WHERE comparison_key = ?1 AND status = 'passed' "
                   "AND (primary_ns < ?2 OR (primary_ns = ?2 AND id < ?3))",
                   row.comparison_key, row.primary_ns, id, &before)))
        return fail(g, err, errlen, "cannot rank runs");
    *group_size = (int)size;
    if (ranked) *rank = (int)before + 1;
    return rg_registry_first(g, row.comparison_key, first, err, errlen);   /* the one #1 (rank.h) */
}

int rg_registry_add_note(rg_registry *g, int64_t id, const char *text, char *err, size_t errlen)
{
    return rg_registry_add_note_kind(g, id, "note", text, err, errlen);
}

int rg_registry_add_note_kind(rg_registry *g, int64_t id, const char *kind, const char *text, char *err,
                              size_t errlen)
{
    if (!kind || (strcmp(kind, "note") && strcmp(kind, "reproduction") && strcmp(kind, "flag"))) {
        snprintf(err, errlen, "a note's kind is note, reproduction or flag");
        return 2;
    }
    if (!text || !*text) {
        snprintf(err, errlen, "an empty note");
        return 2;
    }
    rg_run_row row;
    int rc = rg_registry_get(g, id, &row, NULL, err, errlen);
    if (rc) return rc;
    char now[32];
    now_utc(now);
    if (begin_write(g, err, errlen, "cannot start a write")) return 2;
    sqlite3_stmt *st;
    if (prep(g, "INSERT INTO notes (run_id, created_at, text, kind) VALUES (?,?,?,?)", &st) !=
        SQLITE_OK) {
        fail(g, err, errlen, "cannot add the note");
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        fail(g, err, errlen, "cannot add the note");
        release(g, st);
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    release(g, st);
    if (exec(g, "COMMIT", err, errlen, "cannot commit the note")) {
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    return 0;
}

void rg_notes_free(rg_note *notes, size_t n)
{
    for (size_t i = 0; notes && i < n; i++) free(notes[i].text);
    free(notes);
}

int rg_registry_notes(rg_registry *g, int64_t id, rg_note **notes, size_t *n, char *err, size_t errlen)
{
    *notes = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT created_at, text, kind FROM notes WHERE run_id = ? ORDER BY id", &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot read notes");
    sqlite3_bind_int64(st, 1, id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_note *more = grow(*notes, *n, &cap, sizeof **notes);
        if (!more) break;
        *notes = more;
        rg_note *x = &(*notes)[*n];
        copy_col(st, 0, x->created_at, sizeof x->created_at);
        const unsigned char *t = sqlite3_column_text(st, 1);
        x->text = strdup(t ? (const char *)t : "");
        copy_col(st, 2, x->kind, sizeof x->kind);
        if (!x->text) break;
        (*n)++;
    }
    release(g, st);
    if (rc != SQLITE_DONE) {
        rg_notes_free(*notes, *n);
        *notes = NULL;
        *n = 0;
        if (rc == SQLITE_ROW) {
            snprintf(err, errlen, "out of memory");
            return 2;
        }
        return fail(g, err, errlen, "cannot read notes");
    }
    return 0;
}

int rg_registry_link_replication(rg_registry *g, int64_t original, int64_t replica, int agreed, int within,
                                 int total, int *upgraded, char *err, size_t errlen)
{
    *upgraded = 0;
    rg_run_row o, r;
    int rc = rg_registry_get(g, original, &o, NULL, err, errlen);
    if (!rc) rc = rg_registry_get(g, replica, &r, NULL, err, errlen);
    if (rc) return rc;
    char now[32];
    now_utc(now);
    if (begin_write(g, err, errlen, "cannot start a write")) return 2;
    sqlite3_stmt *st;
    if (prep(g,
                           "INSERT INTO replications (original_id, replica_id, agreed, within, total, created_at) "
                           "VALUES (?,?,?,?,?,?)", &st) != SQLITE_OK)
        goto dberr;
    sqlite3_bind_int64(st, 1, original);
    sqlite3_bind_int64(st, 2, replica);
    sqlite3_bind_int(st, 3, agreed);
    sqlite3_bind_int(st, 4, within);
    sqlite3_bind_int(st, 5, total);
    sqlite3_bind_text(st, 6, now, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    release(g, st);
    if (rc != SQLITE_DONE) goto dberr;
    /* Evidence rises only when the replica ran the same implementation on
     * the same comparison key, agreed, and the original passed. */
    if (agreed && !strcmp(o.implementation_digest, r.implementation_digest) &&
        !strcmp(o.comparison_key, r.comparison_key) && !strcmp(o.status, "passed")) {
        if (prep(g, "UPDATE runs SET evidence = 'replicated' WHERE id = ?", &st) !=
            SQLITE_OK)
            goto dberr;
        sqlite3_bind_int64(st, 1, original);
        rc = sqlite3_step(st);
        release(g, st);
        if (rc != SQLITE_DONE) goto dberr;
        *upgraded = strcmp(o.evidence, RG_EVIDENCE_REPLICATED) != 0;
    }
    if (exec(g, "COMMIT", err, errlen, "cannot commit")) {
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        *upgraded = 0;
        return 2;
    }
    return 0;
dberr:
    fail(g, err, errlen, "cannot record the replication");
    sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
    *upgraded = 0;
    return 2;
}

int rg_registry_replications(rg_registry *g, int64_t id, rg_replication **out, size_t *n, char *err,
                             size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g,
                           "SELECT original_id, replica_id, agreed, within, total, created_at FROM replications "
                           "WHERE original_id = ? OR replica_id = ? ORDER BY id", &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot read replications");
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_replication *more = grow(*out, *n, &cap, sizeof **out);
        if (!more) break;
        *out = more;
        rg_replication *x = &(*out)[(*n)++];
        x->original_id = sqlite3_column_int64(st, 0);
        x->replica_id = sqlite3_column_int64(st, 1);
        x->agreed = sqlite3_column_int(st, 2);
        x->within = sqlite3_column_int(st, 3);
        x->total = sqlite3_column_int(st, 4);
        copy_col(st, 5, x->created_at, sizeof x->created_at);
    }
    release(g, st);
    if (end_steps(g, rc, *out, err, errlen, "cannot read replications")) {
        *out = NULL;
        *n = 0;
        return 2;
    }
    return 0;
}

/* ---- for the index (src/index/): original bytes, imports, problems ------------------ */

int rg_manifest_parse_verified(const char *bytes, size_t n, const char *trusted, cJSON **out, int *converted,
                               char *err, size_t errlen)
{
    *out = NULL;
    if (converted) *converted = 0;
    if (!bytes) {
        snprintf(err, errlen, "no manifest given");
        return 3;
    }
    char e2[RG_ERRLEN];
    cJSON *doc = rg_json_parse_strict(bytes, n, "manifest", e2, sizeof e2);
    if (!doc) {
        snprintf(err, errlen, "%s", e2);
        return 3;
    }
    if (rg_manifest_is_legacy(doc)) {   /* an old ManifestBundle: its own digests are checked as it converts */
        cJSON *nd = rg_manifest_convert_legacy(doc, e2, sizeof e2);
        cJSON_Delete(doc);
        if (!nd) {
            snprintf(err, errlen, "an old ManifestBundle that cannot be converted: %s", e2);
            return 1;
        }
        doc = nd;
        if (converted) *converted = 1;
    }
    rg_manifest m;
    if (rg_manifest_read(doc, &m, e2, sizeof e2)) {
        snprintf(err, errlen, "refused, it does not verify: %s", e2);
        cJSON_Delete(doc);
        return 3;
    }
    int rc = rg_manifest_verify_typed(&m, NULL, e2, sizeof e2);
    if (!rc) rc = rg_observed_at_check(m.observed_at, (double)time(NULL), e2, sizeof e2);
    if (rc) {
        snprintf(err, errlen, "refused, it does not verify: %s", e2);
    } else if ((rc = rg_signatures_check(&m, trusted, e2, sizeof e2)) != 0) {
        snprintf(err, errlen, "refused: %s", e2);
    } else {
        snprintf(err, errlen, "%s", e2);   /* what the signature check found, for the caller to say */
    }
    rg_manifest_free(&m);
    if (rc) {
        cJSON_Delete(doc);
        return rc == 1 ? 1 : 3;
    }
    *out = doc;
    return 0;
}

int rg_registry_store_bytes(rg_registry *g, const cJSON *manifest, const char *bytes, size_t n,
                            const char *evidence, int64_t *id, int *existed, char *err, size_t errlen)
{
    return store_impl(g, manifest, bytes, n, evidence, 0, id, existed, err, errlen);
}

int rg_registry_import(rg_registry *g, const char *bytes, size_t n, const char *evidence, int64_t *id,
                       int *existed, char *err, size_t errlen)
{
    if (id) *id = 0;
    if (existed) *existed = 0;
    cJSON *m;
    int converted;
    int rc = rg_manifest_parse_verified(bytes, n, NULL, &m, &converted, err, errlen);
    if (rc) return rc;
    /* The bytes are kept as they came unless they were an old bundle (then the converted text is the record). */
    rc = rg_registry_store_bytes(g, m, converted ? NULL : bytes, n, evidence, id, existed, err, errlen);
    cJSON_Delete(m);
    return rc == 1 ? 1 : rc ? 2 : 0;
}

int rg_registry_manifest_bytes(rg_registry *g, int64_t id, char **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT COALESCE(manifest_bytes, CAST(manifest AS BLOB)) FROM runs WHERE id = ?", &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot read runs");
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        release(g, st);
        if (rc == SQLITE_DONE) {
            snprintf(err, errlen, "no run #%lld", (long long)id);
            return 1;
        }
        return fail(g, err, errlen, "cannot read runs");
    }
    *out = column_copy(st, 0, n);
    release(g, st);
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return 0;
}

int rg_registry_list_problem(rg_registry *g, const char *definition, int per_group, rg_run_row **rows, size_t *n,
                             char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    if (!definition) {
        snprintf(err, errlen, "no problem given");
        return 2;
    }
    rg_problem_row *groups;
    size_t ng;
    if (rg_registry_problems(g, definition, &groups, &ng, err, errlen)) return 2;
    /* Per group, on the (comparison_key, status, primary_ns) index: the
     * passed runs with a primary figure in rank order, then the others
     * (failed, or not timed); at most per_group. */
    static const char *const sql[2] = {
        "SELECT " ROW_COLUMNS " FROM runs WHERE comparison_key = ?1 AND status = 'passed' AND definition = ?2 "
        "AND primary_ns IS NOT NULL ORDER BY primary_ns ASC, id ASC LIMIT ?3",
        "SELECT " ROW_COLUMNS " FROM runs WHERE comparison_key = ?1 AND (status <> 'passed' OR primary_ns IS NULL) "
        "AND definition = ?2 ORDER BY id ASC LIMIT ?3"};
    size_t cap = 0;
    int rc = 0;
    for (size_t k = 0; k < ng && !rc; k++) {
        int64_t left = per_group > 0 ? per_group : INT64_MAX;
        for (int pass = 0; pass < 2 && left > 0 && !rc; pass++) {
            sqlite3_stmt *st;
            if (prep(g, sql[pass], &st) != SQLITE_OK) {
                rc = fail(g, err, errlen, "cannot list runs");
                break;
            }
            sqlite3_bind_text(st, 1, groups[k].comparison_key, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(st, 2, definition, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(st, 3, left);
            int step;
            while ((step = sqlite3_step(st)) == SQLITE_ROW) {
                rg_run_row *more = grow(*rows, *n, &cap, sizeof **rows);
                if (!more) break;
                *rows = more;
                read_row(st, &(*rows)[(*n)++]);
                left--;
            }
            release(g, st);
            if (step == SQLITE_ROW) {
                snprintf(err, errlen, "out of memory");
                rc = 2;
            } else if (step != SQLITE_DONE) {
                rc = fail(g, err, errlen, "cannot list runs");
            }
        }
    }
    free(groups);
    if (rc) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return rc;
}

int rg_registry_problems(rg_registry *g, const char *definition, rg_problem_row **out, size_t *n, char *err,
                         size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    /* On the (definition, comparison_key) index: counted, not sorted. */
#define PROBLEMS_SQL(where)                                                                                        \
    "SELECT definition, comparison_key, "                                                                          \
    "(SELECT r.device FROM runs r WHERE r.comparison_key = runs.comparison_key LIMIT 1), COUNT(*), "             \
    "0 FROM runs " where                                                                                          \
    " GROUP BY definition, comparison_key ORDER BY definition, comparison_key"
    if (prep(g, definition ? PROBLEMS_SQL("WHERE definition = ?1") : PROBLEMS_SQL(""), &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot list problems");
    if (definition) sqlite3_bind_text(st, 1, definition, -1, SQLITE_TRANSIENT);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_problem_row *more = grow(*out, *n, &cap, sizeof **out);
        if (!more) break;
        *out = more;
        rg_problem_row *x = &(*out)[(*n)++];
        memset(x, 0, sizeof *x);
        copy_col(st, 0, x->definition, sizeof x->definition);
        copy_col(st, 1, x->comparison_key, sizeof x->comparison_key);
        copy_col(st, 2, x->device, sizeof x->device);
        x->runs = sqlite3_column_int64(st, 3);
        x->best_id = sqlite3_column_int64(st, 4);
    }
    release(g, st);
    if (end_steps(g, rc, *out, err, errlen, "cannot list problems")) {
        *out = NULL;
        *n = 0;
        return 2;
    }
    for (size_t i = 0; i < *n; i++)   /* each group's #1: the one definition (rank.h) */
        if (rg_registry_first(g, (*out)[i].comparison_key, &(*out)[i].best_id, err, errlen)) {
            free(*out);
            *out = NULL;
            *n = 0;
            return 2;
        }
    return 0;
}

int rg_registry_generation(rg_registry *g, int64_t *gen, char *err, size_t errlen)
{
    /* Any stored run, note, replication, signature or conflict moves one of these. */
    if (query_i64(g, "SELECT (SELECT COALESCE(MAX(id),0) FROM runs) * 1000003 + (SELECT COALESCE(MAX(id),0) FROM "
                     "notes) * 1009 + (SELECT COALESCE(MAX(id),0) FROM replications) + (SELECT COALESCE(MAX(id),0) "
                     "FROM run_signatures) * 7919 + (SELECT COALESCE(MAX(id),0) FROM run_conflicts) * 104729",
                  NULL, 0, 0, gen))
        return fail(g, err, errlen, "cannot read the registry");
    return 0;
}

const char *rg_registry_file(const rg_registry *g) { return g ? g->path : ""; }

int rg_registry_group_order(rg_registry *g, const char *comparison_key, int64_t **ids, double **geomean, size_t *n,
                            char *err, size_t errlen)
{
    *ids = NULL;
    *geomean = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g,
                           "SELECT id, primary_ns FROM runs WHERE comparison_key = ? AND status = 'passed' "
                           "AND primary_ns IS NOT NULL ORDER BY primary_ns ASC, id ASC", &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot rank runs");
    sqlite3_bind_text(st, 1, comparison_key ? comparison_key : "", -1, SQLITE_TRANSIENT);
    size_t cap_i = 0, cap_g = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t *mi = grow(*ids, *n, &cap_i, sizeof **ids);
        if (mi) *ids = mi;
        double *mg = mi ? grow(*geomean, *n, &cap_g, sizeof **geomean) : NULL;
        if (!mg) break;
        *geomean = mg;
        (*ids)[*n] = sqlite3_column_int64(st, 0);
        (*geomean)[(*n)++] = sqlite3_column_double(st, 1);
    }
    release(g, st);
    if (rc != SQLITE_DONE) {
        free(*ids);
        free(*geomean);
        *ids = NULL;
        *geomean = NULL;
        *n = 0;
        return rc == SQLITE_ROW ? (snprintf(err, errlen, "out of memory"), 2) : fail(g, err, errlen, "cannot rank runs");
    }
    return 0;
}

int rg_registry_replace_manifest(rg_registry *g, int64_t id, const cJSON *doc, char *err, size_t errlen)
{
    rg_run_row row;
    rg_manifest m;
    int rc = rg_registry_get(g, id, &row, NULL, err, errlen);
    if (rc) return rc;
    if (rg_manifest_read(doc, &m, err, errlen)) return 2;
    int same = !strcmp(m.obj[RG_ROLE_RUN].digest, row.run_digest);
    rg_manifest_free(&m);
    if (!same) {
        snprintf(err, errlen, "run #%lld: the new manifest has another run digest", (long long)id);
        return 2;
    }
    char *text = rg_json_print(doc, 0, err, errlen);
    if (!text) return 2;
    if (begin_write(g, err, errlen, "cannot start a write")) {
        free(text);
        return 2;
    }
    sqlite3_stmt *st = NULL;
    /* The bytes it arrived as are superseded: what is served is the signed copy. */
    rc = prep(g, "UPDATE runs SET manifest = ?, manifest_bytes = NULL WHERE id = ?", &st) ==
         SQLITE_OK;
    if (rc) {
        sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, id);
        rc = sqlite3_step(st) == SQLITE_DONE;
    }
    release(g, st);
    free(text);
    char now[32];
    now_utc(now);
    if (rc) rc = !record_signatures(g, id, doc, now);
    if (!rc) {
        fail(g, err, errlen, "cannot store the manifest");
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    return exec(g, "COMMIT", err, errlen, "cannot commit");
}

/* ---- copies of one run (issue 24): signatures and metadata conflicts ------------------ */

/* Lists every signature doc carries (by key id) for run rid; one already
 * listed keeps the date it was first received. */
static int record_signatures(rg_registry *g, int64_t rid, const cJSON *doc, const char *now)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "signatures");
    if (!cJSON_IsArray(list) || !list->child) return 0;
    sqlite3_stmt *st;
    if (prep(g, "INSERT OR IGNORE INTO run_signatures (run_id, key_id, created_at) VALUES (?,?,?)", &st) != SQLITE_OK)
        return 2;
    int rc = 0;
    for (const cJSON *s = list->child; s && !rc; s = s->next) {
        const char *kid = rg_json_str(s, "keyId");
        if (!kid) continue;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, rid);
        sqlite3_bind_text(st, 2, kid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, now, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : 2;
    }
    release(g, st);
    return rc;
}

static int has_key_id(const cJSON *list, const char *kid)
{
    for (const cJSON *s = cJSON_IsArray(list) ? list->child : NULL; s; s = s->next) {
        const char *k = rg_json_str(s, "keyId");
        if (k && !strcmp(k, kid)) return 1;
    }
    return 0;
}

/* The most signatures a manifest keeps (rg_manifest's signatures[]). */
#define RG_MAX_SIGNATURES ((int)(sizeof ((rg_manifest *)0)->signatures / sizeof ((rg_manifest *)0)->signatures[0]))

/* Appends to stored's signatures list those of offered whose key is not
 * there yet; returns how many (-1 out of memory, -2 more than a manifest keeps). */
static int add_new_signatures(cJSON *stored, const cJSON *offered)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(offered, "signatures");
    cJSON *list = cJSON_GetObjectItemCaseSensitive(stored, "signatures");
    int added = 0;
    for (const cJSON *s = cJSON_IsArray(in) ? in->child : NULL; s; s = s->next) {
        const char *kid = rg_json_str(s, "keyId");
        if (!kid || has_key_id(list, kid)) continue;
        if (cJSON_GetArraySize(list) >= RG_MAX_SIGNATURES) return -2;
        if (!list && !(list = cJSON_AddArrayToObject(stored, "signatures"))) return -1;
        cJSON *copy = cJSON_Duplicate(s, 1);
        if (!copy || !cJSON_AddItemToArray(list, copy)) {
            cJSON_Delete(copy);
            return -1;
        }
        added++;
    }
    return added;
}

/* Keeps a metadata member in which the offered copy differs from the
 * stored one (once per distinct offered value). 1 recorded, 0 nothing new, -1 error. */
static int record_conflict(rg_registry *g, int64_t rid, const char *member, const cJSON *stored, const cJSON *offered,
                           const char *now)
{
    if (cJSON_Compare(stored, offered, 1) || (!stored && !offered)) return 0;
    char e2[RG_ERRLEN];
    char *a = stored ? rg_json_print(stored, 0, e2, sizeof e2) : strdup("null");
    char *b = offered ? rg_json_print(offered, 0, e2, sizeof e2) : strdup("null");
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (a && b &&
        prep(g,
                           "INSERT INTO run_conflicts (run_id, created_at, member, stored, offered) "
                           "SELECT ?1,?2,?3,?4,?5 WHERE NOT EXISTS (SELECT 1 FROM run_conflicts WHERE run_id = ?1 AND member = ?3 AND "
                           "offered = ?5)", &st) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, rid);
        sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, member, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, a, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, b, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_DONE) rc = sqlite3_changes(g->db) > 0;
    }
    release(g, st);
    free(a);
    free(b);
    return rc;
}

/* Each role's metadata (not digested) in which the copies differ. */
static int record_conflicts(rg_registry *g, int64_t rid, const cJSON *stored, const cJSON *offered, const char *now)
{
    int any = 0;
    for (int role = 0; role < RG_N_ROLES; role++) {
        const cJSON *so = cJSON_GetObjectItemCaseSensitive(stored, rg_role_name(role));
        const cJSON *oo = cJSON_GetObjectItemCaseSensitive(offered, rg_role_name(role));
        if (!so || !oo) continue;
        char member[48];
        snprintf(member, sizeof member, "%s.metadata", rg_role_name(role));
        int r = record_conflict(g, rid, member, cJSON_GetObjectItemCaseSensitive(so, "metadata"),
                                cJSON_GetObjectItemCaseSensitive(oo, "metadata"), now);
        if (r < 0) return -1;
        any |= r;
    }
    return any;
}

static int update_stored_text(rg_registry *g, int64_t rid, const cJSON *doc, char *err, size_t errlen)
{
    char *text = rg_json_print(doc, 0, err, errlen);
    if (!text) return 2;
    sqlite3_stmt *st;
    int ok = prep(g, "UPDATE runs SET manifest = ?, manifest_bytes = NULL WHERE id = ?", &st) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, rid);
        ok = sqlite3_step(st) == SQLITE_DONE;
        release(g, st);
    }
    free(text);
    return ok ? 0 : fail(g, err, errlen, "cannot store the run's signatures");
}

/* A later copy of stored run rid (same run digest), inside store_impl's
 * transaction: its valid signatures are added to the stored manifest (which
 * is then what is served), and metadata in which it differs is kept as a
 * conflict. *existed gets 1 | RG_STORED_SIGNED | RG_STORED_CONFLICT.
 * 0, 1 refused (a bad signature, too many), 2 a registry error. */
static int merge_copy(rg_registry *g, int64_t rid, const cJSON *offered, const rg_manifest *om, const char *now,
                      int *existed, char *err, size_t errlen)
{
    char e2[RG_ERRLEN];
    *existed = 1;
    if (om->n_signatures && rg_signatures_check(om, NULL, e2, sizeof e2)) {
        snprintf(err, errlen, "registry: refused, a signature of the new copy does not verify: %.400s", e2);
        return 1;
    }
    char *text = NULL;
    if (get_row(g, rid, NULL, &text, err, errlen)) return 2;
    cJSON *stored = rg_json_parse_strict(text, strlen(text), "the stored manifest", e2, sizeof e2);
    free(text);
    if (!stored) {
        snprintf(err, errlen, "registry: run #%lld: %.400s", (long long)rid, e2);
        return 2;
    }
    int conflicts = record_conflicts(g, rid, stored, offered, now);
    int added = conflicts < 0 ? -1 : add_new_signatures(stored, offered);
    int rc = 0;
    if (added == -2) {
        snprintf(err, errlen, "registry: refused, run #%lld would carry more than %d signatures", (long long)rid,
                 RG_MAX_SIGNATURES);
        rc = 1;
    } else if (conflicts < 0 || added < 0) {
        rc = fail(g, err, errlen, "cannot keep the new copy");
    } else if (added && (update_stored_text(g, rid, stored, err, errlen) || record_signatures(g, rid, stored, now))) {
        rc = fail(g, err, errlen, "cannot store the run's signatures");
    }
    cJSON_Delete(stored);
    if (!rc) *existed |= (added > 0 ? RG_STORED_SIGNED : 0) | (conflicts > 0 ? RG_STORED_CONFLICT : 0);
    return rc;
}

/* Migration 3 -> 4, its C half: the signatures stored manifests carry, each
 * listed with its run's receipt time. */
static int index_stored_signatures(rg_registry *g, char *err, size_t errlen)
{
    sqlite3_stmt *sel = NULL;
    if (prep(g, "SELECT id, created_at, manifest FROM runs ORDER BY id", &sel) != SQLITE_OK)
        return fail(g, err, errlen, "schema migration failed");
    int step, rc = 0;
    while (!rc && (step = sqlite3_step(sel)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(sel, 2);
        char e2[RG_ERRLEN], when[32];
        copy_col(sel, 1, when, sizeof when);
        cJSON *doc = text ? rg_json_parse_strict(text, strlen(text), "a stored manifest", e2, sizeof e2) : NULL;
        /* an unreadable manifest is left as it is: refused when read */
        if (doc) rc = record_signatures(g, sqlite3_column_int64(sel, 0), doc, when);
        cJSON_Delete(doc);
    }
    release(g, sel);
    if (rc || step != SQLITE_DONE) return fail(g, err, errlen, "schema migration failed");
    return 0;
}

int rg_registry_signatures(rg_registry *g, int64_t id, rg_run_signature **out, size_t *n, char *err, size_t errlen)
{
    if (!g || !out || !n) {
        snprintf(err, errlen, "signatures: no registry or output");
        return 2;
    }
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT key_id, created_at FROM run_signatures WHERE run_id = ? ORDER BY id", &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot read signatures");
    sqlite3_bind_int64(st, 1, id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_run_signature *more = grow(*out, *n, &cap, sizeof **out);
        if (!more) break;
        *out = more;
        copy_col(st, 0, (*out)[*n].key_id, sizeof (*out)[*n].key_id);
        copy_col(st, 1, (*out)[*n].received_at, sizeof (*out)[*n].received_at);
        (*n)++;
    }
    release(g, st);
    if (end_steps(g, rc, *out, err, errlen, "cannot read signatures")) {
        *out = NULL;
        *n = 0;
        return 2;
    }
    return 0;
}

void rg_run_conflicts_free(rg_run_conflict *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].stored);
        free(c[i].offered);
    }
    free(c);
}

int rg_registry_conflicts(rg_registry *g, int64_t id, rg_run_conflict **out, size_t *n, char *err, size_t errlen)
{
    if (!g || !out || !n) {
        snprintf(err, errlen, "conflicts: no registry or output");
        return 2;
    }
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g,
                           "SELECT member, created_at, stored, offered FROM run_conflicts WHERE run_id = ? ORDER BY id", &st) != SQLITE_OK)
        return fail(g, err, errlen, "cannot read conflicts");
    sqlite3_bind_int64(st, 1, id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_run_conflict *more = grow(*out, *n, &cap, sizeof **out);
        if (!more) break;
        *out = more;
        rg_run_conflict *x = &(*out)[*n];
        copy_col(st, 0, x->member, sizeof x->member);
        copy_col(st, 1, x->received_at, sizeof x->received_at);
        const char *a = (const char *)sqlite3_column_text(st, 2), *b = (const char *)sqlite3_column_text(st, 3);
        x->stored = strdup(a ? a : "null");
        x->offered = strdup(b ? b : "null");
        if (!x->stored || !x->offered) {
            free(x->stored);
            free(x->offered);
            break;
        }
        (*n)++;
    }
    release(g, st);
    if (rc != SQLITE_DONE) {
        rg_run_conflicts_free(*out, *n);
        *out = NULL;
        *n = 0;
        if (rc == SQLITE_ROW) {
            snprintf(err, errlen, "out of memory");
            return 2;
        }
        return fail(g, err, errlen, "cannot read conflicts");
    }
    return 0;
}
