/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_cli.c -- the record's commands end to end through the binary:
 * bench --record --manifest, verify (and its failure on an edited figure),
 * runs list/rank/compare/note/show/export/import/cite/replicate, report,
 * and one-line errors with exit 2 for bad registries and usage. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "test_record_fixture.h"
#include "test_util.h"

static char dir[512];
static char out_text[1 << 16], err_text[1 << 14];

/* Runs `ropegrad ARGS` (printf-style) in dir; stdout and stderr into
 * out_text and err_text. */
#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static void write_manifest(const char *name, cJSON *m) { assert_int_equal(fx_write_doc(dir, name, m), 0); }

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "cli");
    return tu_fresh_dir(dir);
}

static int teardown(void **state) { return tu_rm_rf(dir); }

/* The "done when": bench --record --manifest, verify passes, an
 * edited figure fails it; then the run can be replicated. */
static void test_bench_record_verify(void **state)
{
    int rc = rg("bench --backend cpu --workloads 2,4 --iterations 3 --warmup 1 --record --db t.db --manifest m.json");
    if (rc) fail_msg("bench exited %d: %s", rc, err_text);
    assert_int_equal(rg("verify m.json"), 0);
    assert_non_null(strstr(out_text, "ok"));
    /* Edit one figure in the text: the first median. */
    char path[600];
    snprintf(path, sizeof path, "%s/m.json", dir);
    FILE *f = fopen(path, "r");
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    char *p = strstr(text, "\"median\": ");
    assert_non_null(p);
    p += strlen("\"median\": ");
    *p = *p == '9' ? '1' : (char)(*p + 1);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    assert_int_equal(rg("verify bad.json"), 1);
    assert_non_null(strstr(err_text, "verify: bad.json: run workloads[0].median does not follow"));
    assert_int_equal(tu_count_lines(err_text), 1);
    /* Not JSON / missing: exit 2. */
    assert_int_equal(rg("verify nonexistent.json"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
    assert_int_equal(rg("runs import bad.json --db t.db"), 1);
    assert_non_null(strstr(err_text, "refused"));

    assert_int_equal(rg("runs list --db t.db"), 0);
    assert_non_null(strstr(out_text, "measured"));
    rc = rg("runs replicate 1 --db t.db");
    if (rc != 0 && rc != 1) fail_msg("replicate exited %d: %s", rc, err_text);   /* 1: timing disagreed */
    assert_non_null(strstr(out_text, "replication of run #1 as run #2"));
    assert_int_equal(rg("runs list --db t.db"), 0);
    assert_non_null(strstr(out_text, "(replicates #1)"));
    assert_int_equal(rg("runs show 1 --db t.db"), 0);
    assert_non_null(strstr(out_text, "run #2 replicated it"));
    assert_int_equal(rg("report 1 --html r.html --db t.db"), 0);
    snprintf(path, sizeof path, "%s/r.html", dir);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > 2000);
}

/* Two variants imported from manifests: rank orders them, compare and the
 * rest of the commands work on them. */
static void test_rank_compare_note(void **state)
{
    write_manifest("slow.json", fx_manifest_whole("NVIDIA H200", 1, 2.0, 11));
    write_manifest("fast.json", fx_manifest_whole("NVIDIA H200", 2, 1.0, 12));
    assert_int_equal(rg("runs import slow.json --db v.db"), 0);
    assert_non_null(strstr(out_text, "imported as run #1"));
    assert_int_equal(rg("runs import fast.json --db v.db"), 0);
    assert_non_null(strstr(out_text, "imported as run #2"));
    assert_int_equal(rg("runs import fast.json --db v.db"), 0);
    assert_non_null(strstr(out_text, "already"));

    assert_int_equal(rg("runs rank --db v.db"), 0);
    /* Run 2 (variant-2, half the time) comes first, but five samples per
     * workload cannot bound a median at 95%: the two tie (rank.h). */
    const char *r2 = strstr(out_text, "    =1      2  "), *r1 = strstr(out_text, "    =1      1  ");
    assert_non_null(strstr(out_text, "too few samples"));
    assert_non_null(strstr(out_text, "share a rank"));
    if (!r1 || !r2) fail_msg("rank output:\n%s", out_text);
    assert_true(r2 < r1);
    assert_non_null(strstr(out_text, "2.000x"));

    assert_int_equal(rg("runs compare 1 --db v.db"), 0);   /* against #1 of its group: run 2 */
    assert_non_null(strstr(out_text, "A = run #2"));
    assert_non_null(strstr(out_text, "B = run #1"));
    assert_non_null(strstr(out_text, "2.000x"));
    assert_int_equal(rg("runs compare 2 1 --db v.db"), 0);
    assert_int_equal(rg("runs compare 2 --db v.db"), 0);
    assert_non_null(strstr(out_text, "is #1"));

    assert_int_equal(rg("runs note 1 'needs a retry' --db v.db"), 0);
    assert_int_equal(rg("runs show 1 --db v.db"), 0);
    assert_non_null(strstr(out_text, "needs a retry"));
    assert_non_null(strstr(out_text, "evidence: imported"));
    assert_non_null(strstr(out_text, "Rank                 =1 of 2 in its comparison group (tied"));
    assert_non_null(strstr(out_text, "SOL score"));

    assert_int_equal(rg("runs export 2 --out e.json --db v.db"), 0);
    assert_int_equal(rg("verify e.json"), 0);
    assert_int_equal(rg("runs cite 2 --db v.db"), 0);
    assert_int_equal(tu_count_lines(out_text), 1);
    assert_non_null(strstr(out_text, "run #2"));
    assert_non_null(strstr(out_text, "sha256:"));
    assert_non_null(strstr(out_text, "accessed"));
    assert_int_equal(rg("report 2 --html r2.html --db v.db"), 0);
}

/* A run of 3 of its suite's 16 workloads: listed as partial, not ranked (rank.h), in list, list --json and rank. */
static void test_partial_listed(void **state)
{
    write_manifest("part.json", fx_manifest("NVIDIA H200", 1, 1.0, 21));
    static const struct {
        const char *cmd, *want;
    } says[] = {{"runs import part.json --db p.db", "imported as run #1"},
                {"runs list --db p.db", "partial: 3 of the 16 workloads of its suite"},
                {"runs list --json --db p.db", "\"rank_class\":\t\"partial\""},
                {"runs rank --db p.db", "     -      1  "}};
    for (size_t i = 0; i < sizeof says / sizeof says[0]; i++) {
        int rc = rg("%s", says[i].cmd);
        if (rc || !strstr(out_text, says[i].want))
            fail_msg("%s (exit %d) does not say '%s':\n%s", says[i].cmd, rc, says[i].want, out_text);
    }
}

static void test_errors(void **state)
{
    /* Foreign and corrupt files: one line, exit 2. */
    char path[600];
    snprintf(path, sizeof path, "%s/junk.db", dir);
    FILE *f = fopen(path, "w");
    fputs("this is not a database, just some text that is long enough to look like a header ........", f);
    fclose(f);
    assert_int_equal(rg("runs list --db junk.db"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
    assert_int_equal(rg("runs import slow.json --db junk.db"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
    assert_int_equal(rg("runs list --db missing.db"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
    /* $ROPEGRAD_DB is the default registry. */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "cd %s && ROPEGRAD_DB=v.db %s runs cite 1 > /dev/null", dir, TU_BIN);
    assert_int_equal(system(cmd), 0);
    /* Usage errors. */
    assert_int_equal(rg("runs"), 2);
    /* An option that wants a value, given none at the end: one line, no crash. */
    assert_int_equal(rg("runs --db"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
    assert_int_equal(rg("runs list --evidence"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
    assert_int_equal(rg("runs frobnicate --db v.db"), 2);
    assert_int_equal(rg("runs show --db v.db"), 2);
    assert_int_equal(rg("runs show abc --db v.db"), 2);
    assert_int_equal(rg("runs show 99 --db v.db"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
    assert_int_equal(rg("report 1 --db v.db"), 2);
    assert_int_equal(rg("verify"), 2);
    /* A report that cannot be written leaves nothing behind. */
    assert_int_equal(rg("report 1 --html /nonexistent-dir/r.html --db v.db"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
}

int main(void)
{
    if (access(TU_BIN, X_OK) != 0) {
        printf("SKIP: %s not built\n", TU_BIN);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bench_record_verify),
        cmocka_unit_test(test_rank_compare_note),
        cmocka_unit_test(test_partial_listed),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
