/* SPDX-License-Identifier: Apache-2.0 */
/*
 * import_traces.c -- `ropegrad runs import traces.jsonl [--suite DIR |
 * --definition FILE]`: the official SOL-ExecBench evaluator's trace file
 * (src/record/import/traces.h) stored as one imported run (traces_import.h).
 *
 * The suite: --suite DIR; or --definition FILE, an official problem folder's
 * definition.json with its workload.jsonl beside it; else the bundled suite
 * of the traces' definition. The manifest made from the traces is stored
 * through the same verified import as any manifest (rg_registry_import: one
 * transaction), so a bad file leaves no row.
 */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "harness.h"
#include "import_traces.h"
#include "record.h"
#include "rg_term.h"
#include "traces.h"
#include "traces_import.h"

/* The suite named by --definition FILE: FILE's folder, whose definition.json
 * FILE must be. */
static int suite_of_definition(const char *def, char *dir, size_t n, char *err, size_t errlen)
{
    char real[PATH_MAX], inside[PATH_MAX + 32], real_inside[PATH_MAX];
    if (!realpath(def, real)) {
        snprintf(err, errlen, "--definition %.300s: no such file", def);
        return 2;
    }
    char *slash = strrchr(real, '/');
    snprintf(dir, n, "%.*s", slash && slash != real ? (int)(slash - real) : 1, real);
    snprintf(inside, sizeof inside, "%.4000s/definition.json", dir);
    if (!realpath(inside, real_inside) || strcmp(real_inside, real)) {
        snprintf(err, errlen, "--definition %.300s: not the definition.json of a problem folder (with workload.jsonl "
                              "beside it); give the folder with --suite DIR", def);
        return 2;
    }
    return 0;
}

/* The bundled suite of the definition the traces name. */
static int bundled_suite_dir(const char *definition, char *dir, size_t n, char *err, size_t errlen)
{
    const rg_op *op = rg_op_find(definition);
    if (!op) {
        snprintf(err, errlen, "definition \"%.100s\" is not a bundled suite: give --suite DIR or --definition FILE",
                 definition);
        return 2;
    }
    char def_suite[PATH_MAX];
    rg_cli_default_suite(def_suite, sizeof def_suite);
    char *slash = strrchr(def_suite, '/');
    if (slash) *slash = 0;
    rg_op_suite_dir(op, slash ? def_suite : ".", dir, n);
    return 0;
}

static int load_suite(const rg_traces *t, const rg_import_traces_opts *o, rg_suite *s, char *err, size_t errlen)
{
    char dir[PATH_MAX + 64], e2[RG_ERRLEN];
    int rc = 0;
    if (o->suite_dir) snprintf(dir, sizeof dir, "%s", o->suite_dir);
    else if (o->definition) rc = suite_of_definition(o->definition, dir, sizeof dir, err, errlen);
    else rc = bundled_suite_dir(t->definition, dir, sizeof dir, err, errlen);
    if (rc) return rc;
    if (rg_suite_load(dir, s, e2, sizeof e2)) {
        snprintf(err, errlen, "suite: %.400s", e2);
        return 2;
    }
    return 0;
}

int rg_cli_import_traces(const rg_import_traces_opts *o, const char *bytes, size_t n)
{
    char err[RG_ERRLEN];
    if (o->suite_dir && o->definition) {
        rg_term_printf(stderr, "ropegrad runs import: give --suite DIR or --definition FILE, not both\n");
        return 2;
    }
    if (o->trusted) {
        rg_term_printf(stderr, "ropegrad runs import: %s: --trusted-keys: a traces file carries no signature (sign "
                               "the imported run with `ropegrad runs sign ID --key KEY`)\n", o->path);
        return 2;
    }
    rg_traces t;
    if (rg_traces_parse(bytes, n, o->path, &t, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs import: %s\n", err);
        return 2;
    }
    rg_suite s;
    if (load_suite(&t, o, &s, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs import: %s: %s\n", o->path, err);
        rg_traces_free(&t);
        return 2;
    }
    cJSON *m = rg_traces_manifest(&t, &s, err, sizeof err);
    char *text = m ? rg_json_print(m, 1, err, sizeof err) : NULL;
    cJSON_Delete(m);
    rg_suite_free(&s);
    if (!text) {
        rg_term_printf(stderr, "ropegrad runs import: %s: %s\n", o->path, err);
        rg_traces_free(&t);
        return 2;
    }
    int passed = 0;
    for (size_t i = 0; i < t.n; i++) passed += !rg_trace_failed(&t.t[i]);
    rg_registry *g = NULL;
    int64_t id = 0;
    int existed = 0, rc = rg_registry_open(rg_registry_path(o->db), 1, &g, err, sizeof err);
    if (!rc) rc = rg_registry_import(g, text, strlen(text), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err);
    rg_registry_close(g);
    free(text);
    if (rc) rg_term_printf(stderr, "ropegrad runs import: %s: %s\n", o->path, err);
    else if (existed) rg_term_printf(stdout, "%s: already in the registry as run #%lld\n", o->path, (long long)id);
    else rg_term_printf(stdout, "%s: %zu traces of %s on %s (%d/%zu PASSED) imported as run #%lld (evidence: imported; source: "
                "sol-execbench)\n", o->path, t.n, t.solution, t.hardware, passed, t.n, (long long)id);
    rg_traces_free(&t);
    return rc ? 2 : 0;
}
