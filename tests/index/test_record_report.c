/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_report.c -- the run page (src/index/render.c, as `report
 * --html` writes it): self-contained, with its charts, and (when Debian's
 * chromium is installed) rendered by a real browser. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "render.h"
#include "test_record_fixture.h"

#define CHROMIUM "/usr/bin/chromium"

static char *render(const char *gpu, char *path, size_t n)
{
    cJSON *m = fx_manifest(gpu, 1, 1.0, 1);
    assert_non_null(m);
    rg_run_row row;
    memset(&row, 0, sizeof row);
    row.id = 42;
    snprintf(row.evidence, sizeof row.evidence, "measured");
    snprintf(row.device, sizeof row.device, "%s", *gpu ? gpu : "Test CPU Model");
    char err[256];
    rg_manifest tm;
    assert_int_equal(rg_manifest_read(m, &tm, err, sizeof err), 0);
    rg_run_view v;
    if (rg_model_run_from_manifest(&tm, &row, &v, err, sizeof err)) fail_msg("%s", err);
    rg_manifest_free(&tm);
    cJSON_Delete(m);
    v.notes = calloc(1, sizeof *v.notes);
    v.notes[0].text = strdup("a note with <markup> & \"quotes\"");
    snprintf(v.notes[0].created_at, sizeof v.notes[0].created_at, "2026-01-02T00:00:00Z");
    snprintf(v.notes[0].kind, sizeof v.notes[0].kind, "note");
    v.n_notes = 1;
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 1);
    char *html = rg_render_run(&ctx, &v, err, sizeof err);
    if (!html) fail_msg("%s", err);
    rg_model_run_free(&v);
    fx_path(path, n, *gpu ? "report-gpu.html" : "report-cpu.html");
    assert_int_equal(rg_write_file_atomic(path, html, strlen(html), err, sizeof err), 0);
    return html;
}

static void test_html_self_contained(void **state)
{
    const char *gpus[2] = {"NVIDIA H200", ""};
    for (int g = 0; g < 2; g++) {
        char path[512];
        char *html = render(gpus[g], path, sizeof path);
        assert_non_null(strstr(html, "<svg id=\"chart-latency\""));
        assert_non_null(strstr(html, "<svg id=\"chart-bandwidth\""));
        /* Bars: a legend swatch per series drawn (kernel, and T_SOL on the
         * H200 run; achieved bandwidth), a kernel bar per workload (plus a
         * T_SOL bar on the H200 run), a bandwidth bar per workload. */
        int rects = 0;
        for (const char *p = html; (p = strstr(p, "<rect ")); p++) rects++;
        assert_int_equal(rects, (g == 0 ? 3 : 2) + FX_N * (g == 0 ? 2 : 1) + FX_N);   /* no reference figure */
        if (g == 0) assert_non_null(strstr(html, "id=\"bandwidth-peak\""));   /* H200 datasheet line */
        if (g == 0) assert_non_null(strstr(html, "H200 datasheet peak"));
        /* The public page's sections, in its order. */
        const char *sections[] = {"id=\"primary\"", "id=\"identity\"", "id=\"correctness\"", "id=\"workload\"",
                                  "id=\"measurements\"", "id=\"protocol\"", "id=\"environment\"",
                                  "id=\"artifacts\"", "id=\"notes\"", "id=\"manifest\"", "id=\"cite\"",
                                  "id=\"report-issue\"", "id=\"source\""};
        const char *at = html;
        for (size_t k = 0; k < sizeof sections / sizeof sections[0]; k++) {
            const char *p = strstr(at, sections[k]);
            if (!p) fail_msg("section %s missing or out of order", sections[k]);
            at = p;
        }
        /* Absent figures are left out, never "n/a" or "0 / 0". */
        assert_null(strstr(html, "n/a"));
        assert_null(strstr(html, "0 / 0"));
        assert_null(strstr(html, "nan"));
        assert_null(strstr(html, "inf "));
        /* Nothing fetched, nothing run. */
        assert_null(strstr(html, "<script"));
        assert_null(strstr(html, "http://"));
        assert_null(strstr(html, "https://"));
        assert_null(strstr(html, "src="));
        /* Text is escaped. */
        assert_non_null(strstr(html, "a note with &lt;markup&gt; &amp; &quot;quotes&quot;"));
        assert_null(strstr(html, "<markup>"));
        free(html);
        unlink(path);
    }
}

/* Renders the page in headless Chromium and looks for the charts in the DOM
 * the browser built. Skips (77) when Chromium is not installed. */
static int chromium_renders(void)
{
    if (access(CHROMIUM, X_OK) != 0) return 77;
    char path[512], out[600], cmd[2048];
    char *html = render("NVIDIA H200", path, sizeof path);
    free(html);
    snprintf(out, sizeof out, "%s.dom", path);
    snprintf(cmd, sizeof cmd,
             "timeout 120 " CHROMIUM " --headless --no-sandbox --disable-gpu --disable-background-networking "
             "--no-first-run --user-data-dir=%s.profile --dump-dom file://%s > %s 2>/dev/null",
             path, path, out);
    int rc = system(cmd);
    FILE *f = fopen(out, "r");
    char *dom = NULL;
    size_t n = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        dom = calloc((size_t)len + 1, 1);
        n = fread(dom, 1, (size_t)len, f);
        fclose(f);
    }
    int ok = rc == 0 && dom && n > 0 && strstr(dom, "<svg id=\"chart-latency\"") &&
             strstr(dom, "<svg id=\"chart-bandwidth\"") && strstr(dom, "<rect") && strstr(dom, "</html>");
    if (!ok) fprintf(stderr, "chromium: rc %d, %zu bytes of DOM, charts %sfound\n", rc, n, ok ? "" : "not ");
    free(dom);
    snprintf(cmd, sizeof cmd, "rm -rf %s.profile", path);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s.profile\n", path);
    unlink(out);
    unlink(path);
    return ok ? 0 : 1;
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_html_self_contained)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (rc) return rc;
    int c = chromium_renders();
    if (c == 77) {
        printf("SKIP: %s not installed (apt-get install chromium, or ROPEGRAD_WITH_CHROMIUM=1 scripts/deps.sh): "
               "the page was checked as text but not rendered\n", CHROMIUM);
        return 77;
    }
    printf("chromium rendered the report: %s\n", c == 0 ? "charts present in the DOM" : "FAILED");
    return c;
}
