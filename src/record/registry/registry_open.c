/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_open.c -- the local run registry, one SQLite file: opening it,
 * its schema and migrations, closing it (registry_store.c stores runs,
 * registry_query.c reads them, registry_notes.c holds notes and
 * replications, registry_copies.c signatures and conflicts, registry_sql.c
 * the SQLite calls they share; registry_internal.h).
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

#include "registry_internal.h"

#include "stmt_cache.h"

/* "RGRD": marks a SQLite file as a ropegrad registry. */
#define RG_APPLICATION_ID 0x52475244
#define RG_SCHEMA_VERSION 6

/* The runs table's columns from id to backend: the same in the first schema
 * (0 -> 1) and in the table that migration 1 -> 2 rebuilds it as. Part of
 * both migrations' SQL, which never changes once released: a later schema
 * change is a new migration, not an edit here. */
#define RUNS_LEADING_COLUMNS \
    "  id INTEGER PRIMARY KEY AUTOINCREMENT," \
    "  created_at TEXT NOT NULL," \
    "  observed_at TEXT NOT NULL," \
    "  evidence TEXT NOT NULL CHECK (evidence IN ('measured','imported','replicated'))," \
    "  replicates_of INTEGER REFERENCES runs(id)," \
    "  definition TEXT NOT NULL," \
    "  comparison_key TEXT NOT NULL," \
    "  implementation_digest TEXT NOT NULL," \
    "  run_digest TEXT NOT NULL UNIQUE," \
    "  device TEXT NOT NULL," \
    "  backend TEXT NOT NULL,"

/* Migration i brings the schema from version i to version i + 1. */
static const char *const migrations[RG_SCHEMA_VERSION] = {
    /* 0 -> 1: the first schema. */
    "CREATE TABLE runs (" RUNS_LEADING_COLUMNS
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
     * stored manifests are converted by reg_convert_stored_manifests(). */
    "CREATE TABLE runs2 (" RUNS_LEADING_COLUMNS
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
     * later copy differs is kept here as a conflict. reg_index_stored_signatures()
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
    /* 4 -> 5 (issue 41): names and what a run's source says of it. Copies of
     * the manifest's implementation name and version and the run's metadata
     * title (filled here for the runs already stored); who made it, its
     * revision, when the source published it and the source's own rank
     * (nullable: only a source's catalog gives them, runs import-catalog);
     * the rest of the source's columns in run_sources. */
    "ALTER TABLE runs ADD COLUMN impl_name TEXT;"
    "ALTER TABLE runs ADD COLUMN impl_version TEXT;"
    "ALTER TABLE runs ADD COLUMN run_title TEXT;"
    "ALTER TABLE runs ADD COLUMN project TEXT;"
    "ALTER TABLE runs ADD COLUMN author TEXT;"
    "ALTER TABLE runs ADD COLUMN source_revision TEXT;"
    "ALTER TABLE runs ADD COLUMN published_at TEXT;"
    "ALTER TABLE runs ADD COLUMN source_rank INTEGER;"
    "ALTER TABLE runs ADD COLUMN source_group_size INTEGER;"
    "ALTER TABLE runs ADD COLUMN retracted_at TEXT;"
    "UPDATE runs SET impl_name = json_extract(manifest, '$.implementation.spec.name'),"
    "  impl_version = json_extract(manifest, '$.implementation.spec.version'),"
    "  run_title = json_extract(manifest, '$.run.metadata.title') WHERE json_valid(manifest);"
    "CREATE TABLE run_sources ("
    "  run_id INTEGER PRIMARY KEY REFERENCES runs(id),"
    "  catalog_id TEXT NOT NULL,"
    "  impl_title TEXT, source_name TEXT,"
    "  reported INTEGER, reproduced INTEGER, replications INTEGER,"
    "  retraction_reason TEXT, supersedes TEXT, superseded_by TEXT, catalog_key TEXT);"
    "CREATE INDEX run_sources_by_catalog_id ON run_sources(catalog_id);",
    /* 5 -> 6 (issue 41): the run-to-run noise `runs calibrate` measured on
     * a machine (gate.h), the latest calibration of each machine. */
    "CREATE TABLE machine_noise ("
    "  machine TEXT PRIMARY KEY,"
    "  created_at TEXT NOT NULL,"
    "  sigma REAL NOT NULL CHECK (sigma >= 0),"
    "  df INTEGER NOT NULL CHECK (df >= 1),"
    "  sigma_w REAL NOT NULL CHECK (sigma_w >= 0),"
    "  df_w INTEGER NOT NULL CHECK (df_w >= 1),"
    "  runs INTEGER NOT NULL,"
    "  detail TEXT NOT NULL);",
};

/* The C half of a migration, run after its SQL (NULL: none). */
static int (*const migration_steps[RG_SCHEMA_VERSION])(rg_registry *, char *, size_t) = {
    NULL, reg_convert_stored_manifests, NULL, reg_index_stored_signatures, NULL, NULL};

static const char *const our_tables[] = {"runs", "run_workloads", "notes", "replications", "run_sources", "machine_noise"};

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

static int pragma_int(rg_registry *g, const char *sql, int *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = reg_first_step(g, sql, &st);
    if (rc != SQLITE_ROW) {
        rc = reg_fail_open(g, rc, err, errlen, "cannot read it");
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
    for (rc = reg_first_step(g, "SELECT name FROM sqlite_schema WHERE type='table' AND name NOT LIKE 'sqlite_%'", &st);
         rc == SQLITE_ROW; rc = sqlite3_step(st)) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        (*all)++;
        for (size_t i = 0; i < sizeof our_tables / sizeof our_tables[0]; i++)
            if (name && !strcmp(name, our_tables[i])) (*ours)++;
    }
    rc = rc == SQLITE_DONE ? 0 : reg_fail_open(g, rc, err, errlen, "not a ropegrad registry (cannot read its schema)");
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
    if (reg_exec(g, "PRAGMA foreign_keys=OFF", err, errlen, "cannot configure it")) return 2;
    int rc = migrate_locked(g, create, err, errlen);
    if (reg_exec(g, "PRAGMA foreign_keys=ON", err, rc ? 0 : errlen, "cannot configure it")) rc = 2;
    return rc;
}

static int migrate_locked(rg_registry *g, int create, char *err, size_t errlen)
{
    schema s;
    if (reg_begin_write(g, err, errlen, "cannot lock it")) return 2;
    if (read_schema(g, &s, err, errlen)) goto rollback;
    switch (judge_schema(g, &s, create, err, errlen)) {
    case SCHEMA_CURRENT: return reg_exec(g, "COMMIT", err, errlen, "cannot commit the schema");
    case SCHEMA_REFUSED: goto rollback;
    default: break;
    }
    for (int v = s.ver; v < RG_SCHEMA_VERSION; v++) {
        char sql[96];
        if (reg_exec(g, migrations[v], err, errlen, "schema migration failed")) goto rollback;
        if (migration_steps[v] && migration_steps[v](g, err, errlen)) goto rollback;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
        if (reg_exec(g, sql, err, errlen, "schema migration failed")) goto rollback;
    }
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d", RG_APPLICATION_ID);
    if (reg_exec(g, sql, err, errlen, "schema migration failed")) goto rollback;
    return reg_exec(g, "COMMIT", err, errlen, "cannot commit the schema");
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
    int rc = reg_first_step(g, "PRAGMA quick_check(1)", &st);
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
        reg_fail_open(g, rc, err, errlen, "cannot read it");
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
        int bad = reg_exec(g, "BEGIN", err, errlen, "cannot read it") || check_not_corrupt(g, err, errlen) ||
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
    int rc = reg_first_step(g, "PRAGMA journal_mode=WAL", &st);
    if (rc != SQLITE_ROW) {
        rc = reg_fail_open(g, rc, err, errlen, "not a ropegrad registry (cannot open it as SQLite)");
        release(g, st);
        rg_registry_close(g);
        return rc;
    }
    release(g, st);
    if (reg_exec(g, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", err, errlen, "cannot configure it") ||
        (verdict == SCHEMA_MIGRATE && migrate(g, create, err, errlen))) {
        rg_registry_close(g);
        return 2;
    }
    *out = g;
    return 0;
}

int rg_registry_read_only(const rg_registry *g) { return g ? g->read_only : 0; }

int rg_registry_busy(const rg_registry *g) { return g ? g->busy : 0; }

int rg_registry_full(const rg_registry *g) { return g ? g->full : 0; }

int rg_registry_checkpoint(rg_registry *g, char *err, size_t errlen)
{
    if (!g) {
        snprintf(err, errlen, "no registry");
        return 2;
    }
    if (g->read_only) return 0;
    if (sqlite3_wal_checkpoint_v2(g->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot copy the WAL into the file");
    return 0;
}

void rg_registry_close(rg_registry *g)
{
    if (!g) return;
    rg_stmt_cache_clear(&g->stmts);
    if (g->db) sqlite3_close(g->db);
    free(g);
}
