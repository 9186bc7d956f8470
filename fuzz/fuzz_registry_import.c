/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_registry_import.c -- `runs import` into a fresh registry, then what
 * the other `runs` commands do with the stored run: list, show (get), rank,
 * note, export (print + verify again) and report (HTML).
 *
 * The input is resealed first (fuzz_manifest.h) so most inputs verify and
 * reach the registry. A manifest that does not verify is still handed to
 * rg_registry_store once: it is a public function and must refuse or store
 * hostile JSON without crashing. */
#include "fuzz_manifest.h"
#include "rank.h"
#include "rg_util.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void open_fresh(rg_registry **g)
{
    char err[RG_ERRLEN] = "";
    char path[512];
    snprintf(path, sizeof path, "%s/registry.db", fz_workdir());
    fz_remove("registry.db");
    fz_remove("registry.db-wal");
    fz_remove("registry.db-shm");
    fz_remove("registry.db-journal");
    if (rg_registry_open(path, 1, g, err, sizeof err)) {
        fprintf(stderr, "fuzz: cannot create a registry: %s\n", err);
        abort();
    }
}

static void use_stored(rg_registry *g, int64_t id, const cJSON *m)
{
    char err[RG_ERRLEN] = "", msg[RG_ERRLEN] = "";
    rg_run_row *rows = NULL;
    size_t n = 0;
    FZ_CHECK(rg_registry_list(g, &rows, &n, err, sizeof err) == 0);
    FZ_CHECK(n == 1 && rows[0].id == id);
    rg_manifest tm;
    FZ_CHECK(rg_manifest_read(m, &tm, err, sizeof err) == 0);
    FZ_CHECK(!strcmp(rows[0].run_digest, tm.obj[RG_ROLE_RUN].digest));
    rg_manifest_free(&tm);
    free(rows);

    rg_run_row row;
    rg_manifest back;
    int got = rg_registry_get(g, id, &row, &back, err, sizeof err);
    if (got) fprintf(stderr, "stored manifest not readable: %s\n", err);
    FZ_CHECK(got == 0);
    /* What the registry hands back is what was verified: it verifies again. */
    int rc = rg_manifest_verify_typed(&back, NULL, msg, sizeof msg);
    if (rc) fprintf(stderr, "stored manifest no longer verifies: %s\n", msg);
    FZ_CHECK(rc == 0);
    char *text = NULL;
    FZ_CHECK(rg_registry_get_text(g, id, &text, err, sizeof err) == 0);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    FZ_CHECK(doc);
    fz_check_roundtrip(doc);    /* runs export */
    cJSON_Delete(doc);
    fz_protocol(&back);         /* runs replicate reads it */

    int rank, group;
    int64_t first;
    FZ_CHECK(rg_registry_rank_of(g, id, &rank, &group, &first, err, sizeof err) == 0);
    FZ_CHECK(rank >= 0 && rank <= group && group <= 1);
    /* The interval, the suspect rule, the line, its chart and the alerts (rank.h). */
    rg_interval iv;
    if (rg_run_interval(&back, RG_STATS_CONF, &iv, err, sizeof err) == 0)
        FZ_CHECK(iv.lo <= iv.est && iv.est <= iv.hi);
    else fz_check_msg(err, sizeof err);
    char why[200];
    if (rg_manifest_suspect(&back, why, sizeof why))
        for (const char *p = why; *p; p++) FZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
    rg_ranked *line = NULL;
    size_t nl = 0;
    FZ_CHECK(rg_registry_line(g, id, &line, &nl, err, sizeof err) == 0 && nl == 1 && line[0].row.id == id);
    rg_buf b = {0};
    rg_chart_trend(&b, line, nl);
    char *svg = rg_buf_finish(&b, err, sizeof err);
    FZ_CHECK(svg && !strstr(svg, "<script"));
    free(svg);
    free(line);
    rg_regression *alerts = NULL;
    size_t na = 0;
    FZ_CHECK(rg_registry_regressions(g, RG_STATS_ALPHA, RG_STATS_THRESHOLD, 0, &alerts, &na, err, sizeof err) == 0 &&
             na == 0);
    rg_regressions_free(alerts, na);

    /* A note quoting the run's own (hostile) kernel name. */
    char note[128];
    snprintf(note, sizeof note, "kernel: %s", row.kernel_name);
    FZ_CHECK(rg_registry_add_note(g, id, note, err, sizeof err) == 0);
    rg_note *notes = NULL;
    size_t nn = 0;
    FZ_CHECK(rg_registry_notes(g, id, &notes, &nn, err, sizeof err) == 0 && nn == 1);

    rg_notes_free(notes, nn);
    /* The index's run page over the (hostile) stored run: the model, the
     * renderer and its charts. */
    rg_run_view v;
    FZ_CHECK(rg_model_run(g, id, &v, err, sizeof err) == 0);
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    ctx.forms = 1;
    char *html = rg_render_run(&ctx, &v, err, sizeof err);
    if (html) free(html);
    else fz_check_msg(err, sizeof err);
    rg_model_run_free(&v);
    rg_manifest_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *m = cJSON_ParseWithLength((const char *)data, size);
    if (!m) return 0;
    fz_reseal(m);
    char msg[RG_ERRLEN] = "", err[RG_ERRLEN] = "";
    int verified = rg_manifest_verify(m, msg, sizeof msg) == 0;
    rg_registry *g;
    open_fresh(&g);
    int64_t id = 0, id2 = 0;
    int existed = -1;
    int rc = rg_registry_store(g, m, RG_EVIDENCE_IMPORTED, 0, &id, &existed, err, sizeof err);
    FZ_CHECK(rc == 0 || rc == 2);
    if (rc) {
        fz_check_msg(err, sizeof err);
        /* A verified manifest is storable unless its unhashed parts cannot
         * be printed, or print as text the strict reader refuses (a tree with
         * a repeated member name); the message says so. Nothing else may fail. */
        if (verified) {
            char *text = rg_json_print(m, 0, msg, sizeof msg);
            cJSON *back = text ? rg_json_parse_strict(text, strlen(text), "printed", msg, sizeof msg) : NULL;
            if (back) fprintf(stderr, "verified manifest refused: %s\n", err);
            FZ_CHECK(!back);
            free(text);
        }
    } else {
        FZ_CHECK(id > 0 && existed == 0);
        /* Importing it again finds the same run. */
        FZ_CHECK(rg_registry_store(g, m, RG_EVIDENCE_IMPORTED, 0, &id2, &existed, err, sizeof err) == 0);
        FZ_CHECK(existed == 1 && id2 == id);
        if (verified) use_stored(g, id, m);
    }
    rg_registry_close(g);
    cJSON_Delete(m);
    return 0;
}
