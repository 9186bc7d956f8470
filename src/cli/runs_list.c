/* SPDX-License-Identifier: Apache-2.0 */
/* runs_list.c -- `ropegrad runs list [--json]`: a line per run in 100 columns (and an indented line of
 * what else it carries), or one JSON array for scripts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "rank.h"
#include "runs.h"
#include "runs_format.h"

int rg_runs_list(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs list: %s\n", x->err);
        return 2;
    }
    if (n == 0) {
        tprintf("no runs in %s\n", rg_registry_path(x->db));
        free(rows);
        return 0;
    }
    /* 100 columns: what and where in cells cut with "…", never wrapped; what
     * else a run carries (replicates, not timed, SUSPECT, UNVERIFIABLE) on
     * an indented line below, cut the same way. */
    tprintf("%4s %-7s %-12s  %-28s  %16s  %6s %6s  %s\n", "id", "problem", "device", "implementation", "primary",
            "SOL", "x ref", "evidence");
    for (size_t i = 0; i < n; i++) {
        rg_manifest m;
        char why[200] = "", untimed[320] = "", reason[RG_RANK_REASON_LEN] = "";
        int suspect = 0;
        rg_rank_class cls = RG_CLASS_DAMAGED;
        rg_sol_check sol = {.state = RG_SOL_VERIFIED};
        rg_run_row *r = &rows[i];
        if (!rg_registry_get(x->g, r->id, NULL, &m, x->err, sizeof x->err)) {
            suspect = rg_manifest_suspect(&m, why, sizeof why);
            cls = rg_manifest_rank_class(&m, r->evidence, reason, sizeof reason);
            rg_manifest_sol_check(&m, &sol, NULL, x->err, sizeof x->err);
            rg_untimed_label(r->status, r->primary_ns, rg_manifest_first_failure(&m), untimed, sizeof untimed);
            rg_manifest_free(&m);
        }
        char a[32], k[128], p[64], prob[256], c[7][400];
        if (rg_problem_short(r->definition, prob, sizeof prob, NULL, 0)) snprintf(prob, sizeof prob, "-");
        const char *dev = strncmp(r->device, "NVIDIA ", 7) ? r->device : r->device + 7;
        if (isnan(r->primary_ns)) snprintf(p, sizeof p, "not timed");
        else snprintf(p, sizeof p, "%s %.7s", rg_cli_time(a, sizeof a, r->primary_ns), r->primary_statistic);
        char sp[32] = "-";
        if (isfinite(r->avg_speedup)) snprintf(sp, sizeof sp, r->avg_speedup < 99.995 ? "%.2fx" : "%.0fx", r->avg_speedup);
        tprintf("%4lld ", (long long)r->id);
        rg_cli_print_cols(rg_cli_fit(c[0], sizeof c[0], prob, 6), 6);
        tprintf("  ");
        rg_cli_print_cols(rg_cli_fit(c[2], sizeof c[2], dev, 12), 12);
        tprintf("  ");
        rg_cli_print_cols(rg_cli_fit(c[3], sizeof c[3], rg_cli_impl_label(k, sizeof k, r), 28), 28);
        rg_cli_fit(c[4], sizeof c[4], p, 16);
        rg_cli_fit(c[5], sizeof c[5], sp, 6);
        tprintf("  %*s  %6s %*s  ", rg_cli_w(c[4], 16), c[4], rg_cli_fmt4(a, sizeof a, r->sol_score),
                rg_cli_w(c[5], 6), c[5]);
        rg_cli_print_cols(rg_cli_fit(c[1], sizeof c[1], r->evidence, 10), 0);
        tprintf("\n");
        char note[600];
        size_t w = 0;
        note[0] = 0;
        if (strcmp(r->status, "passed") && !untimed[0]) w += (size_t)snprintf(note + w, sizeof note - w, "  %s", r->status);
        if (r->replicates_of && w < sizeof note)
            w += (size_t)snprintf(note + w, sizeof note - w, "  (replicates #%lld)", (long long)r->replicates_of);
        if (untimed[0] && w < sizeof note) w += (size_t)snprintf(note + w, sizeof note - w, "  %s", untimed);
        if (suspect && w < sizeof note) w += (size_t)snprintf(note + w, sizeof note - w, "  SUSPECT: %s", why);
        if ((cls == RG_CLASS_PARTIAL || cls == RG_CLASS_BUSY) && w < sizeof note)   /* rank.h: listed, not ranked */
            w += (size_t)snprintf(note + w, sizeof note - w, "  %s", reason);
        if (sol.state == RG_SOL_UNVERIFIABLE && w < sizeof note)
            snprintf(note + w, sizeof note - w, "  UNVERIFIABLE: %s", sol.basis);
        if (note[0]) tprintf("   %s\n", rg_cli_fit(c[6], sizeof c[6], note, 97));
    }
    free(rows);
    return 0;
}

/* One run as a JSON object (the fields of `runs list --json`; times in
 * nanoseconds, null when unknown), added to o: 0, or 1 when out of memory.
 * Strings pass through rg_term first: cJSON escapes C0 controls but not C1
 * or invalid UTF-8. */
int rg_runs_row_json(runs_ctx *x, const rg_run_row *r, cJSON *o)
{
    int oom = 0;
    const struct { const char *k, *v; } strs[] = {
        {"observed_at", r->observed_at}, {"created_at", r->created_at}, {"definition", r->definition},
        {"device", r->device}, {"architecture", r->architecture}, {"backend", r->backend},
        {"kernel_name", r->kernel_name}, {"status", r->status}, {"evidence", r->evidence},
        {"source", r->source}, {"external_id", r->external_id}, {"family", r->family},
        {"primary_statistic", r->primary_statistic}, {"comparison_key", r->comparison_key},
        {"implementation_digest", r->implementation_digest}, {"run_digest", r->run_digest},
    };
    const struct { const char *k; double v; } nums[] = {
        {"id", (double)r->id}, {"kernel", r->kernel >= 0 ? r->kernel : NAN},
        {"passed", r->passed >= 0 ? r->passed : NAN}, {"total", r->total >= 0 ? r->total : NAN},
        {"workloads", r->n_workloads}, {"primary_ns", r->primary_ns}, {"geomean_ns", r->geomean_ns},
        {"mean_ns", r->mean_ns}, {"sol_score", r->sol_score}, {"avg_speedup", r->avg_speedup},
        {"fast_count", r->fast_count}, {"fast_total", r->fast_total},
    };
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
        oom |= !(isfinite(nums[k].v) ? cJSON_AddNumberToObject(o, nums[k].k, nums[k].v)
                                     : cJSON_AddNullToObject(o, nums[k].k));
    for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
        oom |= !cJSON_AddStringToObject(o, strs[k].k, rg_term(strs[k].v));
    oom |= !(r->replicates_of ? cJSON_AddNumberToObject(o, "replicates_of", (double)r->replicates_of)
                              : cJSON_AddNullToObject(o, "replicates_of"));
    rg_manifest m;   /* the suspect flag (rank.h) and the T_SOL check (sol_check.h): derived from the record */
    char why[200] = "", untimed[320] = "", reason[RG_RANK_REASON_LEN] = "damaged: the record cannot be read";
    int suspect = 0;
    rg_rank_class cls = RG_CLASS_DAMAGED;
    rg_sol_check sol = {.state = RG_SOL_UNVERIFIABLE, .basis = "the record cannot be read"};
    if (!rg_registry_get(x->g, r->id, NULL, &m, x->err, sizeof x->err)) {
        suspect = rg_manifest_suspect(&m, why, sizeof why);
        cls = rg_manifest_rank_class(&m, r->evidence, reason, sizeof reason);
        rg_manifest_sol_check(&m, &sol, NULL, x->err, sizeof x->err);
        rg_untimed_label(r->status, r->primary_ns, rg_manifest_first_failure(&m), untimed, sizeof untimed);
        rg_manifest_free(&m);
    }
    /* A run with nothing timed says so ("failed: REASON", "correctness only"); null when timed. */
    oom |= !(untimed[0] ? cJSON_AddStringToObject(o, "not_timed", rg_term(untimed))
                        : cJSON_AddNullToObject(o, "not_timed"));
    oom |= !cJSON_AddStringToObject(o, "verification", rg_sol_state_name(sol.state));
    oom |= !cJSON_AddStringToObject(o, "verification_basis", rg_term(sol.basis));
    oom |= !cJSON_AddBoolToObject(o, "suspect", suspect);
    oom |= !(suspect ? cJSON_AddStringToObject(o, "suspect_reason", why) : cJSON_AddNullToObject(o, "suspect_reason"));
    oom |= !cJSON_AddStringToObject(o, "rank_class", rg_rank_class_name(cls));   /* rank.h's trust class */
    oom |= !cJSON_AddStringToObject(o, "rank_reason", rg_term(reason));
    return oom;
}

/* The document on stdout (then a newline) and deleted: 0, or 2 with one line on stderr. */
int rg_runs_emit_json(const char *cmd, cJSON *doc, int oom)
{
    char *text = oom || !doc ? NULL : cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) {
        rg_term_printf(stderr, "ropegrad runs %s: out of memory\n", cmd);
        return 2;
    }
    int rc = fputs(text, stdout) < 0 || putchar('\n') == EOF || fflush(stdout) ? 2 : 0;
    if (rc) rg_term_printf(stderr, "ropegrad runs %s: cannot write to standard output\n", cmd);
    free(text);
    return rc;
}

/* `runs list --json`: the same rows as one JSON array on stdout, for scripts. */
int rg_runs_list_json(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs list: %s\n", x->err);
        return 2;
    }
    cJSON *arr = cJSON_CreateArray();
    int oom = !arr;
    for (size_t i = 0; i < n && !oom; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            oom = 1;
            break;
        }
        oom |= rg_runs_row_json(x, &rows[i], o);
    }
    free(rows);
    return rg_runs_emit_json("list", arr, oom);
}
