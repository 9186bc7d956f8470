/* SPDX-License-Identifier: Apache-2.0 */
/* test_index_site.c -- `ropegrad site` and `report --html` (the index's
 * renderer as files): every link of every page resolves to a file that was
 * written, the JSON is the stored bytes, and the index's commands turn bad
 * input into one line and exit 2. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_record_fixture.h"

static tu_scratch sc;
static char out[1 << 14], err[1 << 12];
static char *m_text[2];

static int setup(void **state)
{
    if (tu_scratch_open(&sc, "rg_site")) return -1;
    char e[RG_ERRLEN], path[300];
    for (int i = 0; i < 2; i++) {
        cJSON *m = fx_manifest_whole("NVIDIA H200", i + 1, 1.0 - 0.2 * i, i + 1);
        m_text[i] = rg_json_print(m, 1, e, sizeof e);
        cJSON_Delete(m);
        snprintf(path, sizeof path, "%s/m%d.json", sc.dir, i + 1);
        if (!m_text[i] || rg_write_file_atomic(path, m_text[i], strlen(m_text[i]), e, sizeof e)) return -1;
        char args[400];
        snprintf(args, sizeof args, "runs import m%d.json --db runs.db", i + 1);
        if (tu_run_ropegrad(sc.dir, args, sc.out, sc.err)) return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    tu_rm_rf(sc.dir);
    free(m_text[0]);
    free(m_text[1]);
    return 0;
}

/* Every href="..." of the page at dir/rel names a file under the site. */
static int check_links(const char *site, const char *rel)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", site, rel);
    char *html = tu_slurp(path, NULL);
    assert_non_null(html);
    char base[1200];
    snprintf(base, sizeof base, "%s", path);
    *strrchr(base, '/') = 0;
    int links = 0;
    for (const char *p = html; (p = strstr(p, "href=\"")); p++) {
        p += 6;
        const char *q = strchr(p, '"');
        assert_non_null(q);
        char target[1400], file[2600];
        snprintf(target, sizeof target, "%.*s", (int)(q - p), p);
        assert_null(strstr(target, "://"));   /* nothing outside the site */
        char *hash = strchr(target, '#');
        if (hash == target) {   /* an anchor on this page: its id is there */
            char id[1500];
            snprintf(id, sizeof id, "id=\"%s\"", hash + 1);
            if (!strstr(html, id)) fail_msg("%s: anchor '%s' names no element", rel, target);
            links++;
            continue;
        }
        if (hash) *hash = 0;
        snprintf(file, sizeof file, "%s/%s", base, target);
        struct stat sb;
        if (stat(file, &sb) || !S_ISREG(sb.st_mode)) fail_msg("%s: link '%s' names no file (%s)", rel, target, file);
        links++;
    }
    free(html);
    return links;
}

static void test_site(void **state)
{
    assert_int_equal(tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "site --out site --db runs.db"), 0);
    assert_non_null(strstr(out, "files written"));
    char site[200];
    snprintf(site, sizeof site, "%s/site", sc.dir);
    const char *pages[] = {"index.html", "runs/1.html", "runs/2.html", "compare/2/1.html",
                           "problems/014_rotary_embedding_with_attention_scaling_backward.html",
                           "records/014_rotary_embedding_with_attention_scaling_backward.html"};
    int links = 0;
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) links += check_links(site, pages[i]);
    assert_true(links >= 10);
    /* The JSON: the bytes each run was imported as. */
    for (int i = 0; i < 2; i++) {
        char path[300];
        size_t n;
        snprintf(path, sizeof path, "%s/runs/%d.json", site, i + 1);
        char *j = tu_slurp(path, &n);
        assert_non_null(j);
        assert_int_equal(n, strlen(m_text[i]));
        assert_memory_equal(j, m_text[i], n);
        free(j);
    }
    /* Run 2 is faster, but five samples a workload cannot bound a median at
     * 95%: the two tie (rank.h); run 1's page still links to the comparison
     * with the faster one. */
    char path[300];
    snprintf(path, sizeof path, "%s/runs/1.html", site);
    char *html = tu_slurp(path, NULL);
    assert_non_null(strstr(html, "Rank =1 of 2 in its comparison group (tied"));
    assert_non_null(strstr(html, "id=\"rank-method\""));
    assert_non_null(strstr(html, "href=\"../compare/2/1.html\""));
    assert_null(strstr(html, "<form"));   /* static pages take no writes */
    free(html);
    /* The line's history page is written too, and linked. */
    snprintf(path, sizeof path, "%s/runs/1.html", site);
    html = tu_slurp(path, NULL);
    assert_non_null(strstr(html, "href=\"../history/1.html\""));
    free(html);
    snprintf(path, sizeof path, "%s/history/1.html", site);
    html = tu_slurp(path, NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "<svg class=\"trend\""));
    free(html);
    /* Again into the same folder: the files are replaced, not appended to. */
    assert_int_equal(tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "site --out site --db runs.db"), 0);
}

static void test_report(void **state)
{
    assert_int_equal(tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "report 2 --html r2.html --db runs.db"),
                     0);
    char path[300];
    snprintf(path, sizeof path, "%s/r2.html", sc.dir);
    char *html = tu_slurp(path, NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "Rank =1 of 2"));
    assert_non_null(strstr(html, "id=\"chart-latency\""));
    assert_non_null(strstr(html, "id=\"cite\""));
    free(html);
}

static void test_bad_input(void **state)
{
    const char *cmds[] = {
        "serve --db runs.db --listen nonsense",
        "serve --db runs.db --listen 127.0.0.1:99999",
        "serve --db runs.db --listen 999.1.1.1:80",
        "serve --db missing.db",
        "serve --db runs.db --threads 0",
        "serve --db runs.db --write-token-file missing-token",
        "serve --db runs.db extra",
        "site --db runs.db",
        "site --out site --db missing.db",
        "runs push",
        "runs push http://127.0.0.1:1 missing.json",
        "runs push ftp://x m1.json",
        "runs push http://127.0.0.1:1 m1.json",   /* nothing listens on port 1: one line */
        "report 99 --html x.html --db runs.db",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "%s", cmds[i]);
        if (rc != 2 || tu_count_lines(err) != 1)
            fail_msg("ropegrad %s: exit %d, stderr '%s' (wanted 2 and one line)", cmds[i], rc, err);
    }
    /* A short token is refused. */
    char path[300], e[128];
    snprintf(path, sizeof path, "%s/short", sc.dir);
    rg_write_file_atomic(path, "short\n", 6, e, sizeof e);
    chmod(path, 0600);
    assert_int_equal(tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "serve --db runs.db --write-token-file short"), 2);
    assert_non_null(strstr(err, "16 characters"));
}

int main(void)
{
    (void)fx_path;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_site), cmocka_unit_test(test_report),
                                       cmocka_unit_test(test_bad_input)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
