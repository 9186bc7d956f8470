/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_kernelindex.c -- the public KernelIndex record
 * (../shared/kernelindex, a copy in tests/data/kernelindex): its digests by
 * the rule, `verify` on it and on edited copies, `runs import` + show / list
 * / rank / report of it, strict reading (repeated names, U+0000, invalid
 * UTF-8, size), old ManifestBundle files and old registries converted in
 * place, and Ed25519 signatures over the run digest. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "test_record_fixture.h"
#include "test_util.h"

#define PUBLIC RG_SOURCE_DIR "/tests/data/kernelindex/run-01a03529.manifest.json"
#define OLD_BUNDLE RG_SOURCE_DIR "/tests/data/old-format/cli-manifest-cpu.bundle.json"

/* The values ../shared/kernelindex/README.md publishes for this record. */
#define D_PROTOCOL "sha256:2964c5c4ed9cb0dcdc0f74674035bc71bf5e66620939e38441060f76434ed3e5"
#define D_ENVIRONMENT "sha256:5296c820e166474e590abb1beaf7728cdfe0a4bde9bf55f8966a40f4f5401621"
#define D_RUN "sha256:d846a8c39272f37588b6a339369ae9492b3be6c6770456ff354295c00ce2ce5d"

static char dir[512];
static char out_text[1 << 16], err_text[1 << 14];
#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "kernelindex");
    return tu_fresh_dir(dir);
}
static int teardown(void **state) { return tu_rm_rf(dir); }

static char *slurp(const char *path)
{
    size_t n;
    char *t = tu_slurp(path, &n);
    assert_non_null(t);
    return t;
}

static void put(const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A copy of text with the first `from` after `anchor` replaced by `to`. */
static char *replace_after(const char *text, const char *anchor, const char *from, const char *to)
{
    const char *a = strstr(text, anchor);
    assert_non_null(a);
    const char *p = strstr(a, from);
    assert_non_null(p);
    size_t n = strlen(text), pre = (size_t)(p - text);
    char *out = malloc(n + strlen(to) + 1);
    memcpy(out, text, pre);
    strcpy(out + pre, to);
    strcat(out, p + strlen(from));
    return out;
}

static void test_public_digests(void **state)
{
    char err[RG_ERRLEN];
    cJSON *doc = rg_json_read_file(PUBLIC, err, sizeof err);
    if (!doc) fail_msg("%s", err);
    rg_manifest m;
    assert_int_equal(rg_manifest_read(doc, &m, err, sizeof err), 0);
    assert_string_equal(m.obj[RG_ROLE_PROTOCOL].digest, D_PROTOCOL);
    assert_string_equal(m.obj[RG_ROLE_ENVIRONMENT].digest, D_ENVIRONMENT);
    assert_string_equal(m.obj[RG_ROLE_RUN].digest, D_RUN);
    assert_false(m.obj[RG_ROLE_WORKLOAD].present);
    assert_false(m.obj[RG_ROLE_IMPLEMENTATION].present);
    /* The typed reader has the figures the page shows. */
    assert_string_equal(m.primary_statistic, "mean");
    assert_float_equal(m.primary_ns, 5406, 0);
    assert_float_equal(m.sol_score, 0.9295, 0);
    assert_float_equal(m.avg_speedup, 12.8634, 0);
    assert_float_equal(m.fast_1_count, 16, 0);
    assert_float_equal(m.fast_1_total, 16, 0);
    assert_string_equal(m.product, "NVIDIA B200");
    assert_string_equal(m.architecture, "sm_100");
    assert_string_equal(m.source, "sol-execbench");
    assert_string_equal(m.external_id, "6579");
    assert_string_equal(m.family, "sol_execbench_leaderboard");
    assert_string_equal(m.obj[RG_ROLE_RUN].title,
                        "Recursive · 014_rotary_embedding_with_attention_scaling_backward · B200");
    rg_verify_report rep;
    assert_int_equal(rg_manifest_verify_typed(&m, &rep, err, sizeof err), 0);
    assert_int_equal(rep.state[RG_ROLE_PROTOCOL], RG_DIGEST_MATCH);
    assert_int_equal(rep.state[RG_ROLE_ENVIRONMENT], RG_DIGEST_MATCH);
    assert_int_equal(rep.state[RG_ROLE_WORKLOAD], RG_DIGEST_NOT_RECOMPUTABLE);
    assert_int_equal(rep.state[RG_ROLE_IMPLEMENTATION], RG_DIGEST_NOT_RECOMPUTABLE);
    /* metadata is not hashed: dropping it changes no digest. */
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "run"), "metadata");
    char d[RG_DIGEST_LEN];
    assert_int_equal(rg_object_digest(cJSON_GetObjectItem(doc, "run"), d, err, sizeof err), 0);
    assert_string_equal(d, D_RUN);
    rg_manifest_free(&m);
    cJSON_Delete(doc);
}

static void test_verify_cli(void **state)
{
    assert_int_equal(rg("verify %s", PUBLIC), 0);
    assert_non_null(strstr(out_text, "run             matches"));
    assert_non_null(strstr(out_text, "protocol        matches"));
    assert_non_null(strstr(out_text, "environment     matches"));
    assert_non_null(strstr(out_text, "workload        not recomputable from this file"));
    assert_non_null(strstr(out_text, "implementation  not recomputable from this file"));
    assert_non_null(strstr(out_text, D_RUN));
    assert_int_equal(rg("verify --run-digest %s %s", D_RUN, PUBLIC), 0);
    assert_int_equal(rg("verify --run-digest %s %s", D_PROTOCOL, PUBLIC), 1);
    char *text = slurp(PUBLIC);
    /* Each edit of the public file: the exit code verify must give, and a
     * word its one-line message must hold (NULL: exit 0, nothing to say). */
    const struct {
        const char *anchor, *from, *to, *rc_needle;
        int rc;
    } edits[] = {
        /* One spec value changed: exit 1, named. */
        {"\"protocol\"", "\"harness_reported\"", "\"cupti\"", "protocol digest mismatch", 1},
        {"\"environment\"", "\"sm_100\"", "\"sm_90\"", "environment digest mismatch", 1},
        /* A run figure stated twice (latencyNs and latency_ms) must agree. */
        {"\"latencyNs\"", "5406", "5306", "latency_ms", 1},
        /* Only a metadata title changed: still 0 (and the same run digest, below). */
        {"\"metadata\"", "\"Recursive", "\"Renamed", NULL, 0},
        /* A repeated member name, in the envelope: refused (2), named. */
        {"\"environment\": {", "\"kind\": \"ExecutionEnvironment\"",
         "\"kind\": \"ExecutionEnvironment\", \"kind\": \"ExecutionEnvironment\"", "$.environment", 2},
        /* Text after U+0000 that other readers would see: refused. */
        {"\"metadata\"", "\"Recursive", "\"Recursive\\u0000hidden", "U+0000", 2},
        /* Invalid UTF-8 and a lone surrogate. */
        {"\"metadata\"", "\"Recursive", "\"Recursive\xc3\x28", "UTF-8", 2},
        {"\"metadata\"", "\"Recursive", "\"Recursive\\ud800x", "surrogate", 2},
        /* A member the envelope does not know. */
        {"{", "\"run\"", "\"extra\": {}, \"run\"", "unknown member", 2},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *bad = replace_after(text, edits[i].anchor, edits[i].from, edits[i].to);
        put("edited.json", bad);
        free(bad);
        int rc = rg("verify --run-digest %s edited.json", D_RUN);
        if (rc != edits[i].rc) fail_msg("edit %zu: exit %d, not %d: %s", i, rc, edits[i].rc, err_text);
        if (edits[i].rc_needle && !strstr(err_text, edits[i].rc_needle)) fail_msg("edit %zu: %s", i, err_text);
        if (rc) assert_int_equal(tu_count_lines(err_text), 1);
    }
    free(text);
    /* A FIFO is refused, without waiting for a writer. */
    char fifo[700];
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(rg("verify fifo.json"), 2);
    assert_non_null(strstr(err_text, "not a regular file"));
}

static void test_import_show(void **state)
{
    assert_int_equal(rg("runs import %s --db k.db", PUBLIC), 0);
    assert_int_equal(rg("runs show 1 --db k.db"), 0);
    const char *want[] = {"5.406 µs mean", "SOL 0.9295", "12.86× reference", "16/16 faster", "NVIDIA B200",
                          "sm_100", "source          sol-execbench", "external id     6579", "evidence: imported",
                          "family      sol_execbench_leaderboard", "comparison key  sha256:", D_RUN};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out_text, want[i])) fail_msg("runs show lacks \"%s\":\n%s", want[i], out_text);
    /* metadata is display only: the title is not what show prints as data. */
    assert_null(strstr(out_text, "B200-ext-prod-2527"));
    assert_int_equal(rg("runs list --db k.db"), 0);
    assert_non_null(strstr(out_text, "imported"));
    assert_non_null(strstr(out_text, "sol-execbench #6579"));
    assert_non_null(strstr(out_text, "5.406 µs mean"));
    /* Its own comparison group: a ropegrad run on a B200 does not join it. */
    cJSON *m = fx_manifest("NVIDIA B200", 1, 1.0, 3);
    char path[700], err[256];
    snprintf(path, sizeof path, "%s/ours.json", dir);
    char *t = rg_json_print(m, 1, err, sizeof err);
    put("ours.json", t);
    free(t);
    cJSON_Delete(m);
    assert_int_equal(rg("runs import ours.json --db k.db"), 0);
    assert_int_equal(rg("runs rank --db k.db"), 0);
    assert_int_equal(tu_count_lines(out_text) >= 6, 1);
    const char *g1 = strstr(out_text, "group "), *g2 = g1 ? strstr(g1 + 1, "group ") : NULL;
    assert_non_null(g2);   /* two groups */
    assert_int_equal(rg("runs rank --evidence imported --db k.db"), 0);
    assert_non_null(strstr(out_text, "sol-execbench #6579"));
    assert_int_equal(rg("runs rank --evidence measured --db k.db"), 0);
    assert_non_null(strstr(out_text, "no measured runs"));
    assert_int_equal(rg("runs rank --evidence guessed --db k.db"), 2);
    assert_int_equal(rg("runs compare 1 2 --db k.db"), 0);
    assert_non_null(strstr(out_text, "imported"));
    assert_non_null(strstr(out_text, "different comparison keys"));
    /* The page renders an imported run, marked imported. */
    assert_int_equal(rg("report 1 --html r.html --db k.db"), 0);
    snprintf(path, sizeof path, "%s/r.html", dir);
    char *html = slurp(path);
    assert_non_null(strstr(html, "badge imported"));
    assert_non_null(strstr(html, "0.9295"));
    assert_non_null(strstr(html, "imported: measured elsewhere"));
    free(html);
    /* Importing it again finds the same run. */
    assert_int_equal(rg("runs import %s --db k.db", PUBLIC), 0);
    assert_non_null(strstr(out_text, "already in the registry as run #1"));
}

/* An old ManifestBundle: verify says so, import converts it, migrate rewrites
 * the file in place; a tampered old file is not converted. */
static void test_old_bundle(void **state)
{
    char *old = slurp(OLD_BUNDLE);
    put("old.json", old);
    assert_int_equal(rg("verify old.json"), 0);
    assert_non_null(strstr(out_text, "ropegrad migrate"));
    assert_int_equal(rg("runs import old.json --db o.db"), 0);
    assert_non_null(strstr(out_text, "converted"));
    assert_int_equal(rg("migrate old.json"), 0);
    assert_int_equal(rg("verify old.json"), 0);
    assert_non_null(strstr(out_text, "workload        matches"));
    assert_int_equal(rg("migrate old.json"), 0);
    assert_non_null(strstr(out_text, "already current"));
    /* Converting twice gives the same run: import finds it. */
    assert_int_equal(rg("runs import old.json --db o.db"), 0);
    assert_non_null(strstr(out_text, "already in the registry"));
    char *bad = replace_after(old, "\"timing\"", "\"median\": ", "\"median\": 1");
    put("bad-old.json", bad);
    free(bad);
    assert_int_equal(rg("migrate bad-old.json"), 1);
    free(old);
}

/* A registry of schema 1 (the old format's), made here as the old code made
 * it, is migrated in place when opened: runs, notes and workloads kept, the
 * manifest converted, the run's digest and columns following it. */
static void test_registry_migrates(void **state)
{
    char path[700], err[RG_ERRLEN];
    snprintf(path, sizeof path, "%s/v1.db", dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    const char *schema1 =
        "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, observed_at TEXT NOT NULL,"
        " evidence TEXT NOT NULL CHECK (evidence IN ('measured','imported','replicated')),"
        " replicates_of INTEGER REFERENCES runs(id), definition TEXT NOT NULL, comparison_key TEXT NOT NULL,"
        " implementation_digest TEXT NOT NULL, run_digest TEXT NOT NULL UNIQUE, device TEXT NOT NULL,"
        " backend TEXT NOT NULL, kernel INTEGER NOT NULL, kernel_name TEXT NOT NULL, status TEXT NOT NULL,"
        " passed INTEGER NOT NULL, total INTEGER NOT NULL, mean_ns REAL NOT NULL, geomean_ns REAL NOT NULL,"
        " sol_score REAL, manifest TEXT NOT NULL);"
        "CREATE INDEX runs_by_key ON runs(comparison_key, status, geomean_ns);"
        "CREATE TABLE run_workloads (run_id INTEGER NOT NULL REFERENCES runs(id), idx INTEGER NOT NULL,"
        " uuid TEXT NOT NULL, median_ns REAL NOT NULL, min_ns REAL, max_ns REAL, mean_ns REAL, stddev_ns REAL,"
        " bytes REAL, t_sol_ns REAL, t_b_ns REAL, sol_score REAL, pass INTEGER NOT NULL, PRIMARY KEY (run_id, idx));"
        "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL REFERENCES runs(id),"
        " created_at TEXT NOT NULL, text TEXT NOT NULL);"
        "CREATE TABLE replications (id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " original_id INTEGER NOT NULL REFERENCES runs(id), replica_id INTEGER NOT NULL REFERENCES runs(id),"
        " agreed INTEGER NOT NULL, within INTEGER NOT NULL, total INTEGER NOT NULL, created_at TEXT NOT NULL);"
        "PRAGMA user_version = 1; PRAGMA application_id = 1380405828;";
    assert_int_equal(sqlite3_exec(db, schema1, NULL, NULL, NULL), SQLITE_OK);
    char *old = slurp(OLD_BUNDLE);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "INSERT INTO runs VALUES (1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z',"
                                        " 'measured', NULL, 'def', 'sha256:old-key', 'sha256:old-impl',"
                                        " 'sha256:old-run', 'cpu', 'cpu', 0, 'k', 'passed', 2, 2, 5, 5, NULL, ?)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, old, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO notes VALUES (1, 1, '2026-01-02T00:00:00Z', 'kept');"
                                  "INSERT INTO run_workloads VALUES (1, 2, 'u', 5, 5, 5, 5, 0, 1, NULL, NULL, NULL, 1);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    free(old);

    rg_registry *g;
    /* Any opener migrates it (as `runs list` would): create only matters for a new file. */
    if (rg_registry_open(path, 0, &g, err, sizeof err)) fail_msg("%s", err);
    rg_run_row row;
    rg_manifest m;
    assert_int_equal(rg_registry_get(g, 1, &row, &m, err, sizeof err), 0);
    assert_string_equal(row.run_digest, m.obj[RG_ROLE_RUN].digest);
    assert_string_not_equal(row.run_digest, "sha256:old-run");
    assert_string_equal(row.primary_statistic, "geomean");
    assert_true(m.obj[RG_ROLE_WORKLOAD].present && m.obj[RG_ROLE_IMPLEMENTATION].present);
    assert_int_equal(rg_manifest_verify_typed(&m, NULL, err, sizeof err), 0);
    assert_int_equal(row.n_workloads, (int)m.n_workloads);
    rg_manifest_free(&m);
    rg_note *notes;
    size_t nn;
    assert_int_equal(rg_registry_notes(g, 1, &notes, &nn, err, sizeof err), 0);
    assert_int_equal(nn, 1);
    assert_string_equal(notes[0].text, "kept");
    rg_notes_free(notes, nn);
    rg_registry_close(g);
    /* Opened again: current, nothing to do. */
    assert_int_equal(rg_registry_open(path, 0, &g, err, sizeof err), 0);
    rg_registry_close(g);
}

static void test_signatures(void **state)
{
    assert_int_equal(rg("keygen me.key"), 0);
    assert_non_null(strstr(out_text, "key id sha256:"));
    struct stat sb;
    char path[700];
    snprintf(path, sizeof path, "%s/me.key", dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(rg("keygen me.key"), 2);   /* never overwritten */
    assert_int_equal(rg("keygen other.key"), 0);
    char *text = slurp(PUBLIC);
    put("pub.json", text);
    free(text);
    /* Sign a stored run; export; the digests are unchanged. */
    assert_int_equal(rg("runs import pub.json --db s.db"), 0);
    assert_int_equal(rg("runs sign 1 --key me.key --db s.db"), 0);
    assert_int_equal(rg("runs export 1 --out signed.json --db s.db"), 0);
    assert_int_equal(rg("verify --run-digest %s signed.json", D_RUN), 0);
    assert_non_null(strstr(out_text, "1 valid"));
    assert_int_equal(rg("verify --trusted-keys me.key.pub signed.json"), 0);
    assert_int_equal(rg("verify --trusted-keys other.key.pub signed.json"), 1);
    assert_non_null(strstr(out_text, "none by a trusted key"));
    assert_int_equal(rg("verify --trusted-keys %s pub.json", "me.key.pub"), 1);   /* unsigned */
    assert_int_equal(rg("runs import signed.json --db s2.db --trusted-keys me.key.pub"), 0);
    assert_int_equal(rg("runs import pub.json --db s3.db --trusted-keys me.key.pub"), 1);
    /* A signature over another digest: the file verifies no longer. */
    snprintf(path, sizeof path, "%s/signed.json", dir);
    char *s = slurp(path);
    char *bad = replace_after(s, "\"signatures\"", "\"value\": \"", "\"value\": \"AAAA");
    put("badsig.json", bad);
    assert_int_equal(rg("verify badsig.json"), 1);
    free(bad);
    free(s);
    /* bench --sign: a fresh ropegrad run signed as it is written. */
    int rc = rg("bench --backend cpu --workloads 2 --iterations 2 --warmup 0 --manifest b.json --sign me.key");
    if (rc) fail_msg("bench --sign exited %d: %s", rc, err_text);
    assert_int_equal(rg("verify --trusted-keys me.key.pub b.json"), 0);
    /* A key that cannot sign, or --sign with nothing to sign: exit 2 before the run, nothing written. */
    assert_int_equal(rg("bench --backend cpu --workloads 2 --iterations 2 --manifest c.json --sign me.key.pub"), 2);
    assert_non_null(strstr(err_text, "are too open"));   /* a public key file (0644) read as a private key */
    assert_int_equal(rg("bench --backend cpu --workloads 2 --iterations 2 --sign me.key"), 2);
    snprintf(path, sizeof path, "%s/c.json", dir);
    assert_int_not_equal(access(path, F_OK), 0);
}

/* Strict reading of suite files (the shared reader): repeated member name,
 * U+0000, invalid UTF-8 in definition.json and in a workload line; the
 * size limit on a manifest. */
static void test_strict_suite_and_limits(void **state)
{
    char err[RG_ERRLEN];
    const struct {
        const char *text, *needle;
    } bad[] = {{"{\"a\": 1, \"b\": {\"x\": 1, \"x\": 2}}", "$.b"},
               {"{\"a\": \"x\\u0000y\"}", "U+0000"},
               {"{\"a\": \"\xff\"}", "UTF-8"},
               {"{\"a\": \"tab\there\"}", "control"},
               {"{\"a\": 1} trailing", "after the document"},
               {"{\"a\": \"\\udc00\"}", "surrogate"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *j = rg_json_parse_strict(bad[i].text, strlen(bad[i].text), "doc.json", err, sizeof err);
        if (j) fail_msg("accepted: %s", bad[i].text);
        if (!strstr(err, bad[i].needle) || !strstr(err, "doc.json")) fail_msg("%s: %s", bad[i].text, err);
    }
    const char *good = "{\"a\": \"\\ud83d\\ude00 \xc3\xa9\", \"b\": [{\"x\": 1}, {\"x\": 2}]}";
    cJSON *j = rg_json_parse_strict(good, strlen(good), "doc.json", err, sizeof err);
    if (!j) fail_msg("%s", err);
    cJSON_Delete(j);
    /* A suite whose definition.json repeats a member. */
    char sdir[700], cmd[2000];
    snprintf(sdir, sizeof sdir, "%s/suite", dir);
    snprintf(cmd, sizeof cmd, "cp -r %s/suites/014-rope_backward %s", RG_SOURCE_DIR, sdir);
    assert_int_equal(tu_system(cmd), 0);
    char path[800];
    snprintf(path, sizeof path, "%s/definition.json", sdir);
    char *def = slurp(path);
    char *d2 = replace_after(def, "{", "\"name\"", "\"name\": \"shadow\", \"name\"");
    FILE *f = fopen(path, "w");
    fputs(d2, f);
    fclose(f);
    rg_suite s;
    assert_int_not_equal(rg_suite_load(sdir, &s, err, sizeof err), 0);
    assert_non_null(strstr(err, "repeated"));
    f = fopen(path, "w");
    fputs(def, f);
    fclose(f);
    free(d2);
    free(def);
    /* ... and a workload line holding U+0000. */
    snprintf(path, sizeof path, "%s/workload.jsonl", sdir);
    char *wl = slurp(path);
    char *w2 = replace_after(wl, "\"uuid\"", "\"", "\"\\u0000");
    f = fopen(path, "w");
    fputs(w2, f);
    fclose(f);
    assert_int_not_equal(rg_suite_load(sdir, &s, err, sizeof err), 0);
    assert_non_null(strstr(err, "U+0000"));
    assert_non_null(strstr(err, "workload.jsonl:1"));
    free(w2);
    free(wl);
    /* The size limit: a file one byte over is refused before parsing. */
    snprintf(path, sizeof path, "%s/big.json", dir);
    f = fopen(path, "w");
    fputs("{\"a\": \"", f);
    for (int i = 0; i < 100; i++) fputc('x', f);
    fputs("\"}", f);
    fclose(f);
    assert_null(rg_json_read_strict(path, 100, err, sizeof err));
    assert_non_null(strstr(err, "larger than the limit"));
    j = rg_json_read_strict(path, 200, err, sizeof err);
    assert_non_null(j);
    cJSON_Delete(j);
    assert_null(rg_json_read_strict(dir, 200, err, sizeof err));   /* a folder */
    assert_null(rg_json_read_strict("/dev/null", 200, err, sizeof err));
    assert_non_null(strstr(err, "not a regular file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_public_digests),
        cmocka_unit_test_setup_teardown(test_verify_cli, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_show, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_bundle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_migrates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signatures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strict_suite_and_limits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
