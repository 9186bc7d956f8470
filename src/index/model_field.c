/* SPDX-License-Identifier: Apache-2.0 */
/* model_field.c -- a problem page's field (model.h): in each comparison
 * group, one row per implementation (its best run, how many runs it has),
 * named by who and what, its trust class and the reason for it, the one
 * "× reference" figure, SOL and cases faster (or why each is absent), which
 * runs are of an older protocol (superseded), what makes the group
 * comparable in words, and the per-workload figures of the implementations
 * its chart draws (the top five and the reference).
 *
 * The reference is a run the registry holds (`python3 -m ropegrad bench
 * --impl reference` records one), so the figure can be followed to its
 * record. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "names.h"

/* ---- names, shapes, peaks ------------------------------------------------------------------ */

void rg_model_display_name(const rg_manifest *m, const rg_run_row *r, char *out, size_t n)
{
    if (!out || !n) return;
    out[0] = 0;
    if (!m) return;
    rg_impl_name_parts parts = {m->impl_name, m->impl_version, m->backend, m->kernel, m->kernel_name,
                                r ? r->project : "", m->obj[RG_ROLE_RUN].title, m->source, m->external_id};
    rg_impl_display_name(&parts, out, n);
}

static double axis_value(const rg_mf_workload *w, const char *name)
{
    for (size_t i = 0; i < w->n_axes && i < 8; i++)
        if (!strcmp(w->axes[i].name, name)) return w->axes[i].value;
    return NAN;
}

void rg_model_shape_label(const rg_mf_workload *w, char *out, size_t n)
{
    if (!out || !n) return;
    out[0] = 0;
    if (!w) return;
    double b = axis_value(w, "batch_size"), s = axis_value(w, "seq_len");
    double hq = axis_value(w, "num_heads"), hk = axis_value(w, "num_kv_heads");
    size_t at = 0;
    if (isfinite(b) && isfinite(s)) at = (size_t)snprintf(out, n, "%.0f×%.0f", b, s);
    if (at >= n || !isfinite(hq)) return;
    if (isfinite(hk) && hk != hq) snprintf(out + at, n - at, "%s%.0f/%.0f heads", at ? " · " : "", hq, hk);
    else snprintf(out + at, n - at, "%s%.0f heads", at ? " · " : "", hq);
}

/* The GPU's datasheet bandwidth (record.h's table; the hardware table of
 * src/record/stats replaces this one call when it lands). */
double rg_model_peak_gbps(const char *device, char *label, size_t n)
{
    const char *product = NULL;
    double tbps = device && *device ? rg_datasheet_bandwidth_tbps(device, &product) : 0;
    if (label && n) label[0] = 0;
    if (!(tbps > 0)) return NAN;
    if (label && n) snprintf(label, n, "%.120s datasheet peak", product ? product : device);
    return tbps * 1e3;
}

/* ---- the group's reference run -------------------------------------------------------------- */

/* "cuda reference (torch eager) torch 2.5.1": the backend, then the name. */
static int is_reference(const rg_rank_entry *e)
{
    const char *sp = strchr(e->kernel, ' ');
    return sp && !strncmp(sp + 1, RG_REFERENCE_RUN_NAME, strlen(RG_REFERENCE_RUN_NAME));
}

static int usable(const rg_rank_entry *e)
{
    return !strcmp(e->status, "passed") && isfinite(e->primary_ns) && e->primary_ns > 0;
}

static void find_reference(rg_group_view *gv)
{
    gv->ref_id = 0;
    gv->ref_ns = NAN;
    for (size_t i = 0; i < gv->n; i++) {
        const rg_rank_entry *e = &gv->e[i];
        if (is_reference(e) && usable(e) && (!gv->ref_id || e->primary_ns < gv->ref_ns)) {
            gv->ref_id = e->id;
            gv->ref_ns = e->primary_ns;
        }
    }
    for (size_t i = 0; i < gv->n; i++) {
        rg_rank_entry *e = &gv->e[i];
        e->x_ref_run = gv->ref_id && usable(e) ? gv->ref_ns / e->primary_ns : NAN;
    }
}

/* ---- per-workload series -------------------------------------------------------------------- */

static void series_free(rg_field_series *s)
{
    free(s->index);
    free(s->pass);
    free(s->median);
    free(s->bytes);
    free(s->shape);
    memset(s, 0, sizeof *s);
}

/* m's per-workload medians, bytes and shapes into s (s->n 0: none). 0, or 2 out of memory. */
static int series_of(const rg_manifest *m, const rg_rank_entry *e, rg_field_series *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->id = e->id;
    snprintf(s->kernel, sizeof s->kernel, "%s", e->kernel);
    snprintf(s->name, sizeof s->name, "%s", e->name);
    size_t n = m->n_workloads, c = n ? n : 1;
    s->index = calloc(c, sizeof *s->index);
    s->pass = calloc(c, sizeof *s->pass);
    s->median = calloc(c, sizeof *s->median);
    s->bytes = calloc(c, sizeof *s->bytes);
    s->shape = calloc(c, sizeof *s->shape);
    if (!s->index || !s->pass || !s->median || !s->bytes || !s->shape) {
        series_free(s);
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        s->index[i] = w->index;
        s->pass[i] = w->pass;
        s->median[i] = isfinite(w->median) && w->median > 0 ? w->median : NAN;
        s->bytes[i] = isfinite(w->bytes) && w->bytes > 0 ? w->bytes : NAN;
        rg_model_shape_label(w, s->shape[i], sizeof s->shape[i]);
    }
    s->n = n;
    return 0;
}

/* ---- one run's class, figures and the reasons for absent ones ------------------------------ */

/* The run's trust class as the page shows it: the ranking's (rank.h), by name. */
static void classify(rg_rank_entry *e)
{
    snprintf(e->trust, sizeof e->trust, "%s", rg_rank_class_name(e->rank_class));
    snprintf(e->trust_reason, sizeof e->trust_reason, "%s", e->rank_reason);
}

/* A ropegrad CUDA run timed before the harness recorded its timing switches
 * (input restage, timed span, host sync): an older protocol. */
static int old_protocol(const rg_manifest *m)
{
    return !strcmp(m->harness_name, "ropegrad") && !strcmp(m->backend, "cuda") && m->iterations > 0 && !m->restage[0];
}

/* Where the run's SOL and × reference come from (the ranking computes them,
 * one definition for every page, with the reason of an empty one). */
static void figure_basis(const rg_group_view *gv, rg_rank_entry *e)
{
    if (isfinite(e->sol)) snprintf(e->sol_basis, sizeof e->sol_basis, "the speed-of-light score over its workloads");
    if (!isfinite(e->x_ref)) return;
    if (gv->ref_id) snprintf(e->x_ref_basis, sizeof e->x_ref_basis, "the mean over the workloads of the reference's time "
                             "over the run's: the group's reference run #%lld, measured here", (long long)gv->ref_id);
    else snprintf(e->x_ref_basis, sizeof e->x_ref_basis, "the mean over the workloads of the reference's time over the "
                  "run's: the record's own reference times on its GPU");
}

/* The implementation a run belongs to: an implementation line (rank.h) for
 * ropegrad's runs, the source's external id for an imported record. */
static void impl_key(const rg_manifest *m, char *out, size_t n)
{
    if (m->impl_name[0]) snprintf(out, n, "L %.60s|%.16s|%.64s", m->impl_name, m->backend, m->kernel_name);
    else snprintf(out, n, "S %.60s|%.120s|%.60s", m->source, m->external_id, m->external_id[0] ? "" : m->kernel_name);
}

/* ---- one group ----------------------------------------------------------------------------- */

/* A run of a kind that ranks: measured here, or reported by its source. */
static int may_rank(const rg_rank_entry *e) { return !strcmp(e->trust, "measured") || !strcmp(e->trust, "reported"); }

/* Dense ranks among the rows of one kind: measured rows keep the order of
 * their interval ranks (ties stay ties), reported rows rank by their figure. */
static void field_ranks(rg_group_view *gv, const char *kind)
{
    int measured = !strcmp(kind, "measured");
    for (size_t i = 0; i < gv->n; i++) {
        rg_rank_entry *e = &gv->e[i];
        if (!e->impl_best || strcmp(e->trust, kind)) continue;
        int below = 0, same = 0;
        for (size_t k = 0; k < gv->n; k++) {
            const rg_rank_entry *o = &gv->e[k];
            if (k == i || !o->impl_best || strcmp(o->trust, kind)) continue;
            double a = measured ? (double)e->rank : e->primary_ns, b = measured ? (double)o->rank : o->primary_ns;
            below += b < a;
            same += b == a;
        }
        e->field_rank = 1 + below;
        e->field_tied = same > 0;
    }
}

/* Entries i of the field in the page's order: measured by rank, then reported by rank. */
static size_t field_order(const rg_group_view *gv, size_t *order)
{
    size_t n = 0;
    const char *kinds[] = {"measured", "reported"};
    for (int k = 0; k < 2; k++)
        for (int r = 1; r <= (int)gv->n; r++)
            for (size_t i = 0; i < gv->n; i++)
                if (gv->e[i].impl_best && gv->e[i].field_rank == r && !strcmp(gv->e[i].trust, kinds[k]))
                    order[n++] = i;
    return n;
}

/* The chart's series: the top five rows with per-workload figures, and the reference run. */
static void pick_series(rg_group_view *gv, rg_field_series *all, const size_t *order, size_t n_order)
{
    size_t keep = 0;
    int have_ref = 0;
    for (size_t k = 0; k < n_order && keep < RG_FIELD_CHART_LINES - 1; k++) {
        size_t i = order[k];
        if (!all[i].n) continue;
        all[i].reference = gv->e[i].id == gv->ref_id;
        have_ref |= all[i].reference;
        gv->series[keep++] = all[i];
        memset(&all[i], 0, sizeof all[i]);
    }
    for (size_t i = 0; gv->ref_id && !have_ref && i < gv->n; i++)
        if (gv->e[i].id == gv->ref_id && all[i].n) {
            all[i].reference = 1;
            gv->series[keep++] = all[i];
            memset(&all[i], 0, sizeof all[i]);
        }
    gv->n_series = keep;
    gv->floor_ns = NAN;
    for (size_t s = 0; s < keep; s++)
        for (size_t w = 0; w < gv->series[s].n; w++)
            if (gv->series[s].pass[w] != 0 && isfinite(gv->series[s].median[w]) &&
                !(gv->series[s].median[w] >= gv->floor_ns))
                gv->floor_ns = gv->series[s].median[w];
}

/* "NVIDIA B200 · SOL-ExecBench evaluation stack v1.0 · mean · 16 workloads". */
static void group_words(rg_group_view *gv)
{
    char wl[32] = "";
    if (gv->n_workloads > 0) snprintf(wl, sizeof wl, " · %d workload%s", gv->n_workloads, gv->n_workloads == 1 ? "" : "s");
    snprintf(gv->words, sizeof gv->words, "%.200s%s%.160s · %.96s%s", gv->device, gv->harness[0] ? " · " : "",
             gv->harness, gv->primary_stat, wl);
}

/* Versions compared number by number ("v1.10" after "v1.9"); <0, 0, >0. */
static int version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        while (*a && !isdigit((unsigned char)*a)) a++;
        while (*b && !isdigit((unsigned char)*b)) b++;
        if (!*a || !*b) return (*a != 0) - (*b != 0);
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y) return x < y ? -1 : 1;
        a = ea, b = eb;
    }
    return 0;
}

/* The harness name of "name version" (up to the last space). */
static size_t harness_name_len(const char *h)
{
    const char *sp = strrchr(h, ' ');
    return sp ? (size_t)(sp - h) : strlen(h);
}

/* A harness whose version names its protocol (an imported evaluation stack's "v1.1"): ropegrad's
 * version is the software's, and its protocol changes are told by the record (old_protocol). */
static int versioned_protocol(const char *harness)
{
    return *harness && strncmp(harness, "ropegrad ", 9) && strcmp(harness, "ropegrad");
}

/* Runs of an older version of a harness that the group also holds newer are superseded;
 * the group's harness is its newest current one. */
static void older_versions(rg_group_view *gv, char (*harn)[160])
{
    for (size_t i = 0; i < gv->n; i++) {
        rg_rank_entry *e = &gv->e[i];
        size_t li = harness_name_len(harn[i]);
        for (size_t k = 0; k < gv->n && !e->superseded_why[0]; k++) {
            if (!versioned_protocol(harn[i]) || harness_name_len(harn[k]) != li || strncmp(harn[i], harn[k], li) ||
                version_cmp(harn[i] + li, harn[k] + li) >= 0)
                continue;
            e->superseded = 1;
            snprintf(e->superseded_why, sizeof e->superseded_why, "an older version of its harness (%.80s; the "
                     "group holds %.80s)", harn[i], harn[k]);
        }
    }
    gv->harness[0] = 0;
    for (size_t i = 0; i < gv->n; i++)
        if (!gv->e[i].superseded && harn[i][0] && !gv->harness[0]) snprintf(gv->harness, sizeof gv->harness, "%s", harn[i]);
    for (size_t i = 0; i < gv->n && !gv->harness[0]; i++) snprintf(gv->harness, sizeof gv->harness, "%s", harn[i]);
}

static int group_field(rg_registry *g, rg_group_view *gv, char *err, size_t errlen)
{
    find_reference(gv);
    gv->peak_gbps = rg_model_peak_gbps(gv->device, gv->peak_label, sizeof gv->peak_label);
    gv->floor_ns = NAN;
    size_t c = gv->n ? gv->n : 1;
    rg_field_series *all = calloc(c, sizeof *all);
    char (*keys)[320] = calloc(c, sizeof *keys);
    char (*harn)[160] = calloc(c, sizeof *harn);
    size_t *order = calloc(c, sizeof *order);
    gv->series = calloc(RG_FIELD_CHART_LINES, sizeof *gv->series);
    int rc = !all || !keys || !harn || !order || !gv->series ? 2 : 0;
    if (rc) snprintf(err, errlen, "out of memory");
    int current = 0;
    for (size_t i = 0; !rc && i < gv->n; i++) {
        rg_rank_entry *e = &gv->e[i];
        rg_run_row row;
        rg_manifest m;
        char why[200];
        int got = rg_registry_get_display(g, e->id, &row, &m, why, sizeof why);
        if (got == 1) continue;   /* gone since the group was read */
        if (got && rg_registry_get(g, e->id, &row, NULL, err, errlen)) {
            rc = 2;
            break;
        }
        if (got) {   /* its row reads, its manifest does not: damaged (the ranking's reason), listed */
            classify(e);
            snprintf(keys[i], sizeof keys[i], "D %lld", (long long)e->id);
            continue;
        }
        if (!e->name[0]) rg_model_display_name(&m, &row, e->name, sizeof e->name);
        classify(e);
        if (old_protocol(&m)) {
            e->superseded = 1;
            snprintf(e->superseded_why, sizeof e->superseded_why, "an older protocol: timed before the harness "
                     "recorded its input restage, timed span and host sync");
        }
        figure_basis(gv, e);
        impl_key(&m, keys[i], sizeof keys[i]);
        snprintf(e->date, sizeof e->date, "%s", *e->observed_at ? e->observed_at : e->published_at);
        gv->cpu = !strcmp(m.vendor, "cpu");
        snprintf(harn[i], sizeof harn[i], "%.100s%s%.50s", m.harness_name, m.harness_version[0] ? " " : "",
                 m.harness_version);
        rc = series_of(&m, e, &all[i], err, errlen);
        rg_manifest_free(&m);
        rg_replication *reps = NULL;
        rg_run_signature *sigs = NULL;
        size_t nr = 0, ns = 0;
        if (!rc && (rg_registry_replications(g, e->id, &reps, &nr, err, errlen) ||
                    rg_registry_signatures(g, e->id, &sigs, &ns, err, errlen)))
            rc = 2;
        for (size_t k = 0; k < nr; k++) e->replications += reps[k].agreed;
        e->signatures = (int)ns;
        free(reps);
        free(sigs);
    }
    if (!rc) older_versions(gv, harn);
    for (size_t i = 0; i < gv->n; i++) current += !gv->e[i].superseded;
    gv->superseded = gv->n > 0 && !current;
    /* One row per implementation: its best run that may rank (rank order: the first); a run that may
     * not rank (suspect, busy, partial, damaged, failed) is listed on its own, with its reason. */
    for (size_t i = 0; !rc && i < gv->n; i++) {
        rg_rank_entry *e = &gv->e[i];
        if (e->superseded || !keys[i][0]) continue;
        size_t first = i, seen = 0;
        for (size_t k = 0; k < i; k++)
            if (!gv->e[k].superseded && !strcmp(keys[k], keys[i])) {
                seen = 1;
                if (may_rank(&gv->e[k]) && first == i) first = k;
            }
        gv->n_impls += !seen;
        if (!may_rank(e)) continue;
        if (first == i) e->impl_best = 1;
    }
    for (size_t i = 0; !rc && i < gv->n; i++)   /* each implementation's runs, counted on its row */
        for (size_t k = 0; keys[i][0] && !gv->e[i].superseded && k < gv->n; k++)
            if (gv->e[k].impl_best && !strcmp(keys[k], keys[i])) gv->e[k].impl_runs++;
    if (!rc) {
        field_ranks(gv, "measured");
        field_ranks(gv, "reported");
        pick_series(gv, all, order, field_order(gv, order));
        group_words(gv);
    }
    for (size_t i = 0; all && i < gv->n; i++) series_free(&all[i]);
    free(all);
    free(keys);
    free(harn);
    free(order);
    return rc;
}

/* A group is superseded by one of the same GPU, statistic, workload count and harness with a newer
 * version (a harness whose version names its protocol). */
static void newer_harness(rg_problem_view *v)
{
    for (size_t i = 0; i < v->n_groups; i++) {
        rg_group_view *a = &v->groups[i];
        size_t la = harness_name_len(a->harness);
        for (size_t k = 0; k < v->n_groups && !a->superseded; k++) {
            const rg_group_view *b = &v->groups[k];
            if (k == i || b->superseded || !versioned_protocol(a->harness) || a->n_workloads != b->n_workloads ||
                strcmp(a->device, b->device) || strcmp(a->primary_stat, b->primary_stat) ||
                harness_name_len(b->harness) != la || strncmp(a->harness, b->harness, la))
                continue;
            if (version_cmp(a->harness + la, b->harness + la) < 0) a->superseded = 1;
        }
    }
}

int rg_model_field(rg_registry *g, rg_problem_view *v, char *err, size_t errlen)
{
    if (!g || !v) {
        snprintf(err, errlen, "rg_model_field: missing argument");
        return 2;
    }
    for (size_t i = 0; i < v->n_groups; i++)
        if (group_field(g, &v->groups[i], err, errlen)) return 2;
    newer_harness(v);
    /* current protocol first, the larger fields before the smaller (a stable insertion sort) */
    for (size_t i = 1; i < v->n_groups; i++)
        for (size_t k = i; k > 0; k--) {
            const rg_group_view *a = &v->groups[k - 1], *b = &v->groups[k];
            if (a->superseded < b->superseded || (a->superseded == b->superseded && a->n_impls >= b->n_impls)) break;
            rg_group_view t = v->groups[k];
            v->groups[k] = v->groups[k - 1];
            v->groups[k - 1] = t;
        }
    return 0;
}

void rg_model_field_free(rg_group_view *gv)
{
    if (!gv) return;
    for (size_t i = 0; gv->series && i < gv->n_series; i++) series_free(&gv->series[i]);
    free(gv->series);
    gv->series = NULL;
    gv->n_series = 0;
}

const rg_rank_entry *rg_group_first(const rg_group_view *g)
{
    const char *kinds[] = {"measured", "reported"};
    for (int k = 0; g && k < 2; k++)
        for (size_t i = 0; i < g->n; i++)
            if (g->e[i].impl_best && g->e[i].field_rank == 1 && !strcmp(g->e[i].trust, kinds[k])) return &g->e[i];
    return NULL;
}

/* ---- the compare page -------------------------------------------------------------------- */

void rg_model_compare_unlike(rg_compare_view *v)
{
    v->same_gpu = !strcmp(v->a.device, v->b.device);
    v->same_statistic = !strcmp(v->a.primary_stat, v->b.primary_stat);
    v->unlike[0] = 0;
    if (v->same_gpu && v->same_statistic) return;
    char gpu[260] = "", stat[260] = "";
    if (!v->same_gpu) snprintf(gpu, sizeof gpu, "were measured on different GPUs (%.100s and %.100s)", v->a.device,
                               v->b.device);
    if (!v->same_statistic)
        snprintf(stat, sizeof stat, "report different statistics (%.100s and %.100s)", v->a.primary_stat,
                 v->b.primary_stat);
    snprintf(v->unlike, sizeof v->unlike, "These runs %s%s%s: their figures do not compare, so the "
             "primary figures are not divided and no ratio below says which implementation is faster.", gpu,
             *gpu && *stat ? " and " : "", stat);
}
