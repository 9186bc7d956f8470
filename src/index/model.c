/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c -- the adapter between the record (registry rows, manifests) and
 * the index's view structs (model.h). Nothing else in src/index/ reads a
 * manifest or a registry row: when the record format changes, this file is
 * the one to change.
 */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "strict_json.h"
#include "names.h"
#include "rank_tables.h"
#include "rg_util.h"

void rg_kv_add(rg_kvlist *l, const char *key, const char *value)
{
    if (l->oom || !value || !*value) return;   /* an absent figure is left out */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        rg_page_kv *p = realloc(l->items, cap * sizeof *p);
        if (!p) {
            l->oom = 1;
            return;
        }
        l->items = p;
        l->cap = cap;
    }
    rg_page_kv *x = &l->items[l->n];
    snprintf(x->key, sizeof x->key, "%s", key);
    x->value = strdup(value);
    if (!x->value) {
        l->oom = 1;
        return;
    }
    l->n++;
}

void rg_kvlist_free(rg_kvlist *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->items[i].value);
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* A number as text; nothing when absent. */
static void kv_num(rg_kvlist *l, const char *key, double v)
{
    if (!isfinite(v)) return;
    char s[64];
    snprintf(s, sizeof s, "%.15g", v);
    rg_kv_add(l, key, s);
}

/* A text; nothing when absent. */
static void kv_str(rg_kvlist *l, const char *key, const char *s)
{
    if (s && *s) rg_kv_add(l, key, s);
}

static void copy(char *dst, size_t n, const char *s) { snprintf(dst, n, "%s", s ? s : ""); }

static double positive_or_nan(double v) { return isfinite(v) ? v : NAN; }

/* "geomean of per-workload medians" for ropegrad's statistic, else its name. */
static const char *stat_label(const char *stat)
{
    if (!strcmp(stat, "geomean")) return "geomean of per-workload medians";
    if (!strcmp(stat, "mean") || !*stat) return "mean";
    return stat;
}

/* The implementation's name: ropegrad's "project backend kernel"; an
 * imported record's metadata title before its first " · " ("Recursive"),
 * else "source #id". */
static void implementation_name(const rg_manifest *m, char *out, size_t n)
{
    const char *title = m->obj[RG_ROLE_RUN].title, *dot = strstr(title, " · ");
    if (m->impl_name[0]) snprintf(out, n, "%.60s %.60s %.60s", m->impl_name, m->backend, m->kernel_name);
    else if (dot && dot > title) snprintf(out, n, "%.*s", (int)(dot - title < 150 ? dot - title : 150), title);
    else if (!m->external_id[0] && m->kernel_name[0])   /* an imported official trace: the solution it ran */
        snprintf(out, n, "%.60s: %.60s", rg_source_display(m->source), m->kernel_name);
    else snprintf(out, n, "%.60s #%.100s", rg_source_display(m->source), m->external_id);
}

/* "2026-08-24" of a timestamp, "" when there is none. */
static const char *date_of(const char *ts, char *out, size_t n)
{
    snprintf(out, n, "%.10s", ts ? ts : "");
    return out;
}

/* The speed-of-light rows of the Workload section: the figures' T_SOL and the
 * index's own check of it; on a CPU run, once, why there is none. */
static void sol_rows(rg_kvlist *l, const rg_manifest *m, const rg_run_view *v)
{
    if (v->cpu) {
        rg_kv_add(l, "T_SOL", RG_NO_SOL_ON_CPU);
        return;
    }
    kv_str(l, "T_SOL", m->t_sol_detail);
    char b[600];
    if (rg_baseline_source(m, b, sizeof b) == 0) rg_kv_add(l, "Baseline (T_b)", b);
    char s[600];
    snprintf(s, sizeof s, "%s: %s", rg_sol_state_name(v->sol_check.state), v->sol_check.basis);
    rg_kv_add(l, "T_SOL check (the index's own)", s);
}

#define RG_GATE_SAYS "the regression gate calls it UNCLEAR, never SLOW"

/* A CPU run's 1-minute load average and online CPUs; on a record without the
 * CPU share over the run (older ones), "busy" as the gate judges it (gate.h
 * rg_manifest_busy). */
static void load_row(rg_kvlist *l, const rg_manifest *m)
{
    if (!isfinite(m->load_avg_1m)) return;
    char s[200];
    int busy = rg_manifest_busy(m, NULL, 0);
    if (m->online_cpus <= 0) snprintf(s, sizeof s, "%.2f (online CPUs not recorded)", m->load_avg_1m);
    else if (isfinite(m->other_cpus))
        snprintf(s, sizeof s, "%.2f on %d online CPU%s, at the run's start", m->load_avg_1m, m->online_cpus,
                 m->online_cpus == 1 ? "" : "s");
    else
        snprintf(s, sizeof s, "%.2f on %d online CPU%s · %s", m->load_avg_1m, m->online_cpus,
                 m->online_cpus == 1 ? "" : "s",
                 busy ? "busy (at or above half the CPUs): " RG_GATE_SAYS : "not busy (below half the CPUs)");
    rg_kv_add(l, "load average (1 min)", s);
}

/* What other processes and steal took over the run (cpu_share.h), "busy" as
 * the gate judges it. */
static void share_row(rg_kvlist *l, const rg_manifest *m)
{
    if (!isfinite(m->other_cpus) || !isfinite(m->steal_cpus) || m->online_cpus <= 0) return;
    char s[300], why[96];
    int busy = rg_manifest_busy(m, why, sizeof why);
    char verdict[160];
    if (busy) snprintf(verdict, sizeof verdict, "busy (%s): %s", why, RG_GATE_SAYS);
    else snprintf(verdict, sizeof verdict, "not busy (others below %g%% of the CPUs, steal below %g%%)",
                  100 * RG_GATE_BUSY_OTHER, 100 * RG_GATE_BUSY_STEAL);
    snprintf(s, sizeof s, "other processes %.2f of %d CPUs, steal %.2f, over %.1f s · %s", m->other_cpus,
             m->online_cpus, m->steal_cpus, m->share_seconds, verdict);
    rg_kv_add(l, "CPU taken by others (over the run)", s);
}

/* The run's names and figures: title, device, status, the primary figure,
 * SOL, cases passed, correctness and where the record comes from. impl gets
 * the implementation's name, ext its external id. */
static void run_headline(const rg_manifest *m, const rg_run_row *row, rg_run_view *v, char *impl, size_t implen,
                         const char *ext)
{
    if (row) {
        v->id = row->id;
        v->replicates_of = row->replicates_of;
        copy(v->evidence, sizeof v->evidence, row->evidence);
        copy(v->created_at, sizeof v->created_at, row->created_at);
    }
    copy(v->device, sizeof v->device, m->product);
    copy(v->definition, sizeof v->definition, m->benchmark);
    copy(v->status, sizeof v->status, m->status);
    copy(v->backend, sizeof v->backend, m->backend);
    copy(v->observed_at, sizeof v->observed_at, m->observed_at);
    copy(v->run_digest, sizeof v->run_digest, m->obj[RG_ROLE_RUN].digest);
    copy(v->comparison_key, sizeof v->comparison_key, row ? row->comparison_key : m->comparison_key);
    implementation_name(m, impl, implen);
    rg_impl_name_parts parts = {m->impl_name, m->impl_version, m->backend, m->kernel, m->kernel_name,
                                row ? row->project : "", m->obj[RG_ROLE_RUN].title, m->source, m->external_id};
    rg_impl_display_name(&parts, v->name, sizeof v->name);
    if (row) {
        copy(v->published_at, sizeof v->published_at, row->published_at);
        v->source_rank = row->source_rank;
        v->source_group_size = row->source_group_size;
    }
    v->cpu = !strcmp(m->vendor, "cpu");
    v->replicable = m->have_detail;   /* replicate.c reads the protocol from run.spec.ropegrad */
    copy(v->comparison_label, sizeof v->comparison_label,
         m->source[0] && !m->have_detail ? "source-native comparison" : "ropegrad comparison");
    snprintf(v->title, sizeof v->title, "%.200s · %.150s · %.150s", v->name, v->definition, v->device);

    v->primary_ns = positive_or_nan(m->primary_ns);
    snprintf(v->primary_stat, sizeof v->primary_stat, "%s", stat_label(m->primary_statistic));
    rg_untimed_label(m->status, m->primary_ns, rg_manifest_first_failure(m), v->not_timed, sizeof v->not_timed);
    v->sol = positive_or_nan(m->sol_score);
    v->x_ref = positive_or_nan(m->avg_speedup);
    if (m->fast_1_total > 0 && isfinite(m->fast_1_count)) {
        v->fast_total = m->fast_1_total;
        v->fast_count = m->fast_1_count;
    }
    if (m->total > 0) {
        v->passed = m->passed;
        v->total = m->total;
    }
    if (m->correctness_element[0]) snprintf(v->correctness, sizeof v->correctness, "%s", m->correctness_element);
    else snprintf(v->correctness, sizeof v->correctness, "Marked %s by the source; the correctness policy was not "
                  "published.", *m->status ? m->status : "(no status)");
    if (row && !strcmp(row->evidence, RG_EVIDENCE_IMPORTED))
        snprintf(v->source, sizeof v->source, "imported: measured elsewhere (source %.60s%s%.100s), digests verified here",
                 *m->source ? rg_source_display(m->source) : "unknown", *ext ? ", external id " : "", ext);
    else copy(v->source, sizeof v->source, "recorded by ropegrad bench");
}

/* The Identity section. */
static void identity_rows(const rg_manifest *m, const rg_run_row *row, rg_run_view *v, const char *impl,
                          const char *ext)
{
    char s[512];
    rg_kv_add(&v->identity, "implementation", impl);
    kv_str(&v->identity, "project", row && row->project[0] ? row->project : m->impl_name[0] ? m->impl_name : impl);
    if (row && row->author[0] && strcmp(row->author, row->project)) kv_str(&v->identity, "authors", row->author);
    /* the source's revision of an imported run (its catalog), else the record's own */
    kv_str(&v->identity, "revision", row && row->source_revision[0] ? row->source_revision : v->revision);
    kv_str(&v->identity, "backend", m->backend);
    snprintf(s, sizeof s, "suite of %zu case%s · %s", m->n_workloads, m->n_workloads == 1 ? "" : "s", v->primary_stat);
    if (m->n_workloads) rg_kv_add(&v->identity, "workload", s);
    /* The key is the rule's (registry_store.c refuses a recorded one that differs). */
    snprintf(v->key_origin, sizeof v->key_origin, "%s",
             m->comparison_key_recorded && m->obj[RG_ROLE_WORKLOAD].present ? "recorded, and the rule derives the same"
                                                                           : "derived by rule");
    snprintf(s, sizeof s, "%s (%s)", v->comparison_key, v->key_origin);
    if (v->comparison_key[0]) rg_kv_add(&v->identity, "comparison key", s);
    kv_str(&v->identity, "source", rg_source_display(m->source));
    kv_str(&v->identity, "external id", ext);
    if (v->published_at[0]) {   /* the source's publication date (its catalog) */
        char day[16];
        snprintf(s, sizeof s, "%s · %s", date_of(v->published_at, day, sizeof day),
                 *m->source ? rg_source_display(m->source) : "its source");
        rg_kv_add(&v->identity, "published", s);
    } else if (row && row->created_at[0]) {   /* when this index received it (the record carries no publication date) */
        char day[16];
        snprintf(s, sizeof s, "%s (in this index)", date_of(row->created_at, day, sizeof day));
        rg_kv_add(&v->identity, "published", s);
    }
    if (v->source_rank > 0) {   /* the source's own rank, beside (never instead of) this index's */
        char of[32] = "";
        if (v->source_group_size > 0) snprintf(of, sizeof of, " of %d", v->source_group_size);
        snprintf(s, sizeof s, "%d%s in its comparison group on %s", v->source_rank, of,
                 *m->source ? rg_source_display(m->source) : "its source");
        rg_kv_add(&v->identity, "source rank", s);
    }
    kv_str(&v->identity, "run digest", v->run_digest);
    kv_str(&v->identity, "implementation digest", m->implementation_digest);
}

/* The correctness rounds and ground truth, and a timed ropegrad GPU run's
 * timing switches (an imported record's protocol is its own; a CPU run and
 * an untimed check have none):
 * each in words, and for a run recorded before a switch existed, what the
 * harness did then. */
static void parity_rows(const rg_manifest *m, rg_run_view *v)
{
    if (m->rounds >= 0) kv_num(&v->protocol, "correctness rounds", m->rounds);
    kv_str(&v->protocol, "ground truth", m->ground_truth);
    if (v->cpu || strcmp(m->harness_name, "ropegrad") || strcmp(m->backend, "cuda") || m->iterations < 1) return;
    rg_kv_add(&v->protocol, "input restage", rg_restage_text(m->restage));
    rg_kv_add(&v->protocol, "timed span", rg_span_text(m->span));
    rg_kv_add(&v->protocol, "host sync", rg_sync_text(m->sync));
    rg_kv_add(&v->protocol, "same-kernels check",
              m->same_kernels[0] ? m->same_kernels : "not recorded (a run made before the check): none ran");
}

/* The Workload and Protocol sections. */
static void workload_protocol_rows(const rg_manifest *m, rg_run_view *v)
{
    char s[512];
    kv_str(&v->workload, "definition", m->benchmark);
    kv_str(&v->workload, "comparator", m->correctness_comparator);
    kv_str(&v->workload, "description", rg_source_comparator_description(m->source));
    if (!v->cpu) kv_str(&v->workload, "figures", m->figures_file);   /* B200/H200 figures mean nothing on a CPU */
    kv_str(&v->workload, "workload digest", m->workload_digest);
    sol_rows(&v->workload, m, v);

    snprintf(s, sizeof s, "%s %s", m->harness_name, m->harness_version);
    if (m->harness_name[0]) rg_kv_add(&v->protocol, "harness", s);
    kv_str(&v->protocol, "timer", m->timer);
    kv_str(&v->protocol, "primary statistic", m->measurement_statistic);
    if (m->warmup >= 0) kv_num(&v->protocol, "warmup", m->warmup);
    if (m->iterations >= 0) kv_num(&v->protocol, "iterations", m->iterations);
    kv_str(&v->protocol, "cold L2", m->cold_l2);
    parity_rows(m, v);
    kv_str(&v->protocol, "inputs", m->inputs);
    kv_str(&v->protocol, "seed", m->seed);
    kv_str(&v->protocol, "correctness reference", m->correctness_reference);
    kv_str(&v->protocol, "comparability family", m->family);
    kv_str(&v->protocol, "comparability notes", m->family_notes);
    kv_str(&v->protocol, "protocol digest", m->protocol_digest);
}

/* The Environment and Artifacts sections. */
static void environment_rows(const rg_manifest *m, rg_run_view *v)
{
    char s[512];
    if (m->product[0]) {
        snprintf(s, sizeof s, "%s%s%s%s", m->product, *m->architecture ? " (" : "", m->architecture,
                 *m->architecture ? ")" : "");
        rg_kv_add(&v->environment, strcmp(m->vendor, "cpu") ? "gpu" : "cpu", s);
    }
    for (size_t i = 0; i < m->n_libraries; i++) kv_str(&v->environment, m->libraries[i].key, m->libraries[i].value);
    if (strcmp(m->vendor, "cpu")) kv_str(&v->environment, "cpu", m->cpu_model);
    if (m->cpu_threads > 0) kv_num(&v->environment, "cpu threads", m->cpu_threads);
    load_row(&v->environment, m);
    share_row(&v->environment, m);
    kv_str(&v->environment, "host", m->hostname);
    kv_str(&v->environment, "os", m->os);
    kv_str(&v->environment, "build", m->build_flags);
    kv_str(&v->environment, "environment digest", m->environment_digest);

    kv_str(&v->artifacts, "baseline", m->baseline_name);
}

/* Each case's figures (v->wl already holds m->n_workloads of them), with
 * the index's own T_SOL t_sol[i]. */
static void workload_views(const rg_manifest *m, rg_run_view *v, const double *t_sol)
{
    for (size_t i = 0; i < m->n_workloads; i++) {
        const rg_mf_workload *t = &m->workloads[i];
        rg_wl_view *w = &v->wl[i];
        w->index = t->index;
        w->bytes = t->bytes;
        w->median = t->median;
        w->mean = t->mean;
        w->min = t->min;
        w->max = t->max;
        w->stddev = t->stddev;
        w->gbps = t->gbps;
        /* the index's own T_SOL, never the manifest's t_sol_ns; none on a
         * CPU run, whose GPU figures (T_SOL, reference T_b) say nothing of it */
        w->t_sol = v->cpu ? NAN : t_sol[i];
        w->t_b = v->cpu ? NAN : t->t_b_ns;
        w->score = v->cpu ? NAN : t->sol_score;
        w->speedup = t->speedup;
        w->pass = t->pass;
        rg_model_shape_label(t, w->shape, sizeof w->shape);
    }
    v->n_wl = m->n_workloads;
}

int rg_model_run_from_manifest(const rg_manifest *m, const rg_run_row *row, rg_run_view *v, char *err,
                               size_t errlen)
{
    memset(v, 0, sizeof *v);
    v->primary_ns = v->sol = v->x_ref = v->fast_count = v->fast_total = v->peak_gbps = NAN;
    {
        char e2[160];
        if (rg_run_interval(m, RG_STATS_CONF, &v->iv, e2, sizeof e2)) v->iv.est = v->iv.lo = v->iv.hi = NAN;
        v->suspect = rg_manifest_suspect(m, v->suspect_why, sizeof v->suspect_why);
        v->confirmed = v->suspect && row && !strcmp(row->evidence, RG_EVIDENCE_REPLICATED);
        v->rank_class = rg_manifest_rank_class(m, row ? row->evidence : NULL, v->rank_reason, sizeof v->rank_reason);
        snprintf(v->harness, sizeof v->harness, "%.60s%s%.30s", m->harness_name, *m->harness_version ? " " : "",
                 m->harness_version);
        rg_revision_label(m, v->revision, sizeof v->revision);
    }
    double *t_sol = m && m->n_workloads ? calloc(m->n_workloads, sizeof *t_sol) : NULL;
    if (rg_manifest_sol_check(m, &v->sol_check, t_sol, err, errlen)) {
        free(t_sol);
        return 2;
    }
    v->passed = v->total = -1;
    if (!m->obj[RG_ROLE_RUN].present) {
        snprintf(err, errlen, "not a manifest (no run object)");
        free(t_sol);
        return 2;
    }
    char impl[200], ext[160];
    rg_source_external_id(m->source, m->external_id, ext, sizeof ext);
    run_headline(m, row, v, impl, sizeof impl, ext);
    identity_rows(m, row, v, impl, ext);
    workload_protocol_rows(m, v);
    environment_rows(m, v);
    if (m->n_workloads) {
        v->wl = calloc(m->n_workloads, sizeof *v->wl);
        if (!v->wl || !t_sol) {
            snprintf(err, errlen, "out of memory");
            free(t_sol);
            rg_model_run_free(v);
            return 2;
        }
    }
    workload_views(m, v, t_sol);
    free(t_sol);

    const char *product = NULL;
    double peak = strcmp(m->vendor, "cpu") ? rg_datasheet_bandwidth_tbps(m->product, &product) : 0;
    if (peak > 0) {
        v->peak_gbps = peak * 1e3;
        snprintf(v->peak_label, sizeof v->peak_label, "%s datasheet peak", product);
    }
    if (v->identity.oom || v->workload.oom || v->protocol.oom || v->environment.oom || v->artifacts.oom) {
        snprintf(err, errlen, "out of memory");
        rg_model_run_free(v);
        return 2;
    }
    return 0;
}

void rg_model_run_free(rg_run_view *v)
{
    rg_kvlist_free(&v->identity);
    rg_kvlist_free(&v->workload);
    rg_kvlist_free(&v->protocol);
    rg_kvlist_free(&v->environment);
    rg_kvlist_free(&v->artifacts);
    free(v->wl);
    rg_notes_free(v->notes, v->n_notes);
    free(v->reps);
    free(v->sigs);
    rg_run_conflicts_free(v->conflicts, v->n_conflicts);
    free(v->manifest);
    free(v->manifest_pretty);
    memset(v, 0, sizeof *v);
}

/* The rank by the primary figure, from the group's table of this
 * generation (rank_tables.h: built once per generation, not per page). */
static int rank_run(rg_registry *g, const rg_run_row *row, rg_run_view *v, char *err, size_t errlen)
{
    int64_t gen;
    if (rg_registry_generation(g, &gen, err, errlen)) return 2;
    return rg_rank_tables_rank(g, gen, row, &v->rank, &v->group_size, &v->first_id, err, errlen);
}

/* The interval rank (rank.h) when the group is small enough to read whole. */
static int interval_rank_run(rg_registry *g, const rg_run_row *row, rg_run_view *v, char *err, size_t errlen)
{
    if (v->group_size > RG_INTERVAL_RANK_MAX) {
        /* Ranked by the figure alone: a run that may not be #1 (rank.h) gets no figure rank. */
        if (v->rank_class != RG_CLASS_MEASURED || v->sol_check.state == RG_SOL_UNVERIFIABLE) v->rank = 0;
        return 0;
    }
    rg_ranked me;
    int ranked;
    if (rg_registry_rank_run(g, row->id, &me, &ranked, err, errlen)) return 2;
    v->interval_ranked = 1;
    v->rank = me.rank;
    v->tied = me.tied;
    v->superseded = me.superseded;
    v->group_size = ranked;
    return 0;
}

/* The group's reference run (model.h RG_REFERENCE_RUN_NAME: the fastest
 * passed one), its manifest into *ref; 0 with *id 0 when none, 2 on error. */
static int group_reference(rg_registry *g, const char *key, int64_t *id, rg_manifest *ref, char *err, size_t errlen)
{
    rg_run_row *rows;
    size_t n;
    *id = 0;
    if (rg_registry_list(g, &rows, &n, err, errlen)) return 2;
    double best = INFINITY;
    size_t len = strlen(RG_REFERENCE_RUN_NAME);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].comparison_key, key) && !strcmp(rows[i].status, "passed") &&
            !strncmp(rows[i].kernel_name, RG_REFERENCE_RUN_NAME, len) && rows[i].primary_ns > 0 &&
            rows[i].primary_ns < best)
            best = rows[i].primary_ns, *id = rows[i].id;
    free(rows);
    rg_run_row r;
    char e2[160];
    if (*id && rg_registry_get_display(g, *id, &r, ref, e2, sizeof e2)) *id = 0;   /* damaged: no reference */
    return 0;
}

static void put_figures(const rg_ref_figures *f, double *sol, double *x_ref, double *fast_count, double *fast_total,
                        char *x_why, char *s_why, char *f_why, size_t n)
{
    *sol = f->sol;
    *x_ref = f->x_ref;
    *fast_count = f->fast_count;
    *fast_total = f->fast_total;
    snprintf(x_why, n, "%s", f->x_ref_why);
    snprintf(s_why, n, "%s", f->sol_why);
    snprintf(f_why, n, "%s", f->fast_why);
}

/* The run's SOL, x reference and cases faster by the one definition
 * (model_figures.c), in a group small enough to read. */
static int run_figures(rg_registry *g, const rg_run_row *row, rg_run_view *v, char *err, size_t errlen)
{
    if (v->group_size > RG_INTERVAL_RANK_MAX) return 0;
    int64_t ref_id;
    rg_manifest ref, m;
    rg_run_row r;
    if (group_reference(g, row->comparison_key, &ref_id, &ref, err, errlen)) return 2;
    if (rg_registry_get_display(g, row->id, &r, &m, err, errlen)) {
        if (ref_id) rg_manifest_free(&ref);
        return 2;
    }
    rg_ref_figures f;
    rg_model_ref_figures(&m, ref_id ? &ref : NULL, ref_id, &f);
    put_figures(&f, &v->sol, &v->x_ref, &v->fast_count, &v->fast_total, v->x_ref_why, v->sol_why, v->fast_why,
                sizeof v->x_ref_why);
    snprintf(v->x_ref_source, sizeof v->x_ref_source, "%s", f.source);
    rg_manifest_free(&m);
    if (ref_id) rg_manifest_free(&ref);
    return 0;
}

/* Each listed entry's SOL, x reference and cases faster by the one
 * definition, from the group's reference run (rg_model_field found it). */
static int group_figures(rg_registry *g, rg_group_view *gv, char *err, size_t errlen)
{
    rg_manifest ref, m;
    rg_run_row r;
    int have_ref = gv->ref_id > 0 && !rg_registry_get_display(g, gv->ref_id, &r, &ref, err, errlen);
    for (size_t i = 0; i < gv->n; i++) {
        rg_rank_entry *e = &gv->e[i];
        rg_ref_figures f;
        if (rg_registry_get_display(g, e->id, &r, &m, err, errlen)) {
            if (e->rank_class != RG_CLASS_DAMAGED) continue;   /* gone meanwhile: as listed */
            rg_model_ref_figures(NULL, NULL, 0, &f);
            snprintf(f.x_ref_why, sizeof f.x_ref_why, "%s", e->rank_reason);
            snprintf(f.sol_why, sizeof f.sol_why, "%s", e->rank_reason);
            snprintf(f.fast_why, sizeof f.fast_why, "%s", e->rank_reason);
        } else {
            rg_model_ref_figures(&m, have_ref ? &ref : NULL, have_ref ? gv->ref_id : 0, &f);
            rg_manifest_free(&m);
        }
        put_figures(&f, &e->sol, &e->x_ref, &e->fast_count, &e->fast_total, e->x_ref_why, e->sol_why, e->fast_why,
                    sizeof e->x_ref_why);
        e->x_ref_run = e->x_ref;
    }
    if (have_ref) rg_manifest_free(&ref);
    return 0;
}

/* What the run's source says of it beyond the row's names and dates
 * (run_sources): its trust columns, retraction and supersession. */
static int source_rows(rg_registry *g, int64_t id, rg_run_view *v, char *err, size_t errlen)
{
    rg_run_source_facts f;
    int found;
    if (rg_registry_source_facts(g, id, &f, &found, err, errlen)) return 2;
    if (!found) return 0;
    copy(v->source_name, sizeof v->source_name, f.source_name);
    char s[600];
    if (f.reported >= 0 || f.reproduced >= 0 || f.replications >= 0) {
        snprintf(s, sizeof s, "%s · %s · %d independent replication%s",
                 f.reported > 0 ? "reported by the source" : "not marked reported",
                 f.reproduced > 0 ? "reproduced by KernelIndex" : "not reproduced by KernelIndex",
                 f.replications > 0 ? f.replications : 0, f.replications == 1 ? "" : "s");
        rg_kv_add(&v->identity, "KernelIndex trust", s);
    }
    if (f.retracted_at[0]) {
        snprintf(s, sizeof s, "%.40s%s%.400s", f.retracted_at, f.retraction_reason[0] ? ": " : "", f.retraction_reason);
        rg_kv_add(&v->identity, "retracted", s);
    }
    kv_str(&v->identity, "supersedes (source id)", f.supersedes);
    kv_str(&v->identity, "superseded by (source id)", f.superseded_by);
    kv_str(&v->identity, "source run id", f.catalog_id);
    if (v->identity.oom) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return 0;
}

int rg_model_run(rg_registry *g, int64_t id, rg_run_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    rg_run_row row;
    rg_manifest m;
    char *text, *bytes;
    size_t nbytes;
    int rc = rg_registry_get_page(g, id, &row, &m, &text, &bytes, &nbytes, err, errlen);
    if (rc) return rc;
    rc = rg_model_run_from_manifest(&m, &row, v, err, errlen);
    rg_manifest_free(&m);
    /* The stored manifest indented for reading (the page's; /runs/ID.json serves the stored bytes). */
    if (!rc) {
        v->manifest = bytes;
        v->manifest_len = nbytes;
        bytes = NULL;
        v->manifest_pretty = rg_json_reindent(text, strlen(text), err, errlen);
        rc = !v->manifest_pretty;
    }
    free(text);
    free(bytes);
    if (!rc) rc = source_rows(g, id, v, err, errlen);
    if (rc || rank_run(g, &row, v, err, errlen) || interval_rank_run(g, &row, v, err, errlen) ||
        run_figures(g, &row, v, err, errlen) ||
        rg_registry_notes(g, id, &v->notes, &v->n_notes, err, errlen) ||
        rg_registry_replications(g, id, &v->reps, &v->n_reps, err, errlen) ||
        rg_registry_signatures(g, id, &v->sigs, &v->n_sigs, err, errlen) ||
        rg_registry_conflicts(g, id, &v->conflicts, &v->n_conflicts, err, errlen)) {
        rg_model_run_free(v);
        return 2;
    }
    return 0;
}

const char *rg_run_display_name(const rg_run_row *r, char *out, size_t n)
{
    rg_impl_name_parts p = {r->impl_name, r->impl_version, r->backend,       r->kernel,
                            r->kernel_name, r->project, r->run_title, r->source, r->external_id};
    return rg_impl_display_name(&p, out, n);
}

/* A ranked line from the registry row alone (the row carries the figures). */
static void fill_entry(const rg_run_row *r, rg_rank_entry *e)
{
    memset(e, 0, sizeof *e);
    e->id = r->id;
    e->primary_ns = positive_or_nan(r->primary_ns);
    e->sol = positive_or_nan(r->sol_score);
    e->x_ref = positive_or_nan(r->avg_speedup);
    e->fast_count = e->fast_total = NAN;
    if (r->fast_total > 0 && isfinite(r->fast_count)) e->fast_count = r->fast_count, e->fast_total = r->fast_total;
    copy(e->evidence, sizeof e->evidence, r->evidence);
    copy(e->observed_at, sizeof e->observed_at, r->observed_at);
    copy(e->status, sizeof e->status, r->status);
    rg_run_display_name(r, e->name, sizeof e->name);
    copy(e->published_at, sizeof e->published_at, r->published_at);
    e->source_rank = r->source_rank;
    e->source_group_size = r->source_group_size;
    copy(e->retracted_at, sizeof e->retracted_at, r->retracted_at);
    if (r->backend[0]) snprintf(e->kernel, sizeof e->kernel, "%.15s %.70s", r->backend, r->kernel_name);
    else if (!r->external_id[0] && r->kernel_name[0])   /* an imported official trace: the solution it ran */
        snprintf(e->kernel, sizeof e->kernel, "%.30s: %.70s", rg_source_display(r->source), r->kernel_name);
    else {
        char ext[160];
        rg_source_external_id(r->source, r->external_id, ext, sizeof ext);
        snprintf(e->kernel, sizeof e->kernel, "%.30s %.60s", rg_source_display(r->source), ext);
    }
}

int rg_model_problem(rg_registry *g, const char *definition, rg_problem_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    copy(v->definition, sizeof v->definition, definition);
    rg_problem_row *pr = NULL;
    size_t npr = 0;
    rg_run_row *rows = NULL;
    size_t n = 0;
    if (rg_registry_problem_groups(g, definition, &pr, &npr, err, errlen) ||   /* the page shows no #1 */
        rg_registry_list_problem(g, definition, pr, npr, RG_PROBLEM_ROWS, &rows, &n, err, errlen)) {
        free(pr);
        return 2;
    }
    if (n == 0) {
        free(pr);
        free(rows);
        snprintf(err, errlen, "no runs of problem '%.200s'", definition);
        return 1;
    }
    size_t ng = 0;
    for (size_t i = 0; i < npr; i++) ng += !strcmp(pr[i].definition, definition);
    v->groups = calloc(ng ? ng : 1, sizeof *v->groups);
    if (!v->groups) goto oom;
    for (size_t i = 0; i < npr; i++) {
        if (strcmp(pr[i].definition, definition)) continue;
        rg_group_view *gv = &v->groups[v->n_groups++];
        copy(gv->comparison_key, sizeof gv->comparison_key, pr[i].comparison_key);
        copy(gv->device, sizeof gv->device, pr[i].device);
        gv->n_workloads = -1;
        for (size_t k = 0; k < n; k++)   /* the group's statistic (one per comparison key) */
            if (!strcmp(rows[k].comparison_key, gv->comparison_key)) {
                copy(gv->primary_stat, sizeof gv->primary_stat, stat_label(rows[k].primary_statistic));
                gv->n_workloads = rows[k].n_workloads;
                break;
            }
        gv->runs = pr[i].runs;
        size_t cnt = 0;
        for (size_t k = 0; k < n; k++) cnt += !strcmp(rows[k].comparison_key, gv->comparison_key);
        gv->e = calloc(cnt ? cnt : 1, sizeof *gv->e);
        if (!gv->e) goto oom;
        if (gv->runs <= RG_INTERVAL_RANK_MAX) {   /* interval ranks, suspect runs after the others (rank.h) */
            rg_ranked *r;
            size_t nr;
            if (rg_registry_rank_group(g, gv->comparison_key, NULL, &r, &nr, err, errlen)) {
                free(pr);
                free(rows);
                rg_model_problem_free(v);
                return 2;
            }
            if (nr > cnt) {
                rg_rank_entry *ne = realloc(gv->e, nr * sizeof *ne);
                if (!ne) {
                    free(r);
                    goto oom;
                }
                gv->e = ne;
            }
            for (size_t k = 0; k < nr && k < RG_PROBLEM_ROWS; k++) {
                rg_rank_entry *e = &gv->e[gv->n++];
                fill_entry(&r[k].row, e);
                e->rank = r[k].rank;
                e->tied = r[k].tied;
                e->suspect = r[k].suspect;
                e->iv = r[k].iv;
                e->rank_class = r[k].rank_class;
                copy(e->rank_reason, sizeof e->rank_reason, r[k].rank_reason);
                copy(e->harness, sizeof e->harness, r[k].harness);
                e->superseded = r[k].superseded;
                gv->n_superseded += (size_t)e->superseded;
                if (!gv->harness[0] && !e->superseded) copy(gv->harness, sizeof gv->harness, e->harness);
                copy(e->verification, sizeof e->verification, rg_sol_state_name(r[k].sol.state));
            }
            gv->interval_ranked = 1;
            free(r);
            continue;
        }
        int rank = 0;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(rows[k].comparison_key, gv->comparison_key)) continue;
            rg_rank_entry *e = &gv->e[gv->n++];
            fill_entry(&rows[k], e);
            e->rank = !strcmp(rows[k].status, "passed") && isfinite(rows[k].primary_ns) ? ++rank : 0;
            e->rank_class = e->rank ? RG_CLASS_MEASURED : RG_CLASS_FAILED;
            snprintf(e->rank_reason, sizeof e->rank_reason, "%s", e->rank ? RG_CLASS_NOT_READ : "failed, or not timed");
        }
    }
    free(pr);
    free(rows);
    if (rg_model_field(g, v, err, errlen)) {
        rg_model_problem_free(v);
        return 2;
    }
    for (size_t i = 0; i < v->n_groups; i++)
        if (v->groups[i].interval_ranked && group_figures(g, &v->groups[i], err, errlen)) {
            rg_model_problem_free(v);
            return 2;
        }
    return 0;
oom:
    free(pr);
    free(rows);
    rg_model_problem_free(v);
    snprintf(err, errlen, "out of memory");
    return 2;
}

void rg_model_problem_free(rg_problem_view *v)
{
    for (size_t i = 0; v->groups && i < v->n_groups; i++) {
        free(v->groups[i].e);
        rg_model_field_free(&v->groups[i]);
    }
    free(v->groups);
    memset(v, 0, sizeof *v);
}

/* Each group's #1 (primary figure, statistic, workloads): the headline figures. */
static int index_best(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    v->best = calloc(v->n ? v->n : 1, sizeof *v->best);
    if (!v->best) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < v->n; i++) {
        rg_index_best *b = &v->best[i];
        b->primary_ns = NAN;
        b->n_workloads = -1;
        if (v->rows[i].best_id <= 0) continue;
        rg_run_row r;
        rg_manifest m;
        if (rg_registry_get_display(g, v->rows[i].best_id, &r, &m, err, errlen)) return 2;
        b->rank_class = rg_manifest_rank_class(&m, r.evidence, NULL, 0);
        snprintf(b->harness, sizeof b->harness, "%.40s%s%.40s", m.harness_name, *m.harness_version ? " " : "",
                 m.harness_version);
        rg_manifest_free(&m);
        b->primary_ns = positive_or_nan(r.primary_ns);
        b->n_workloads = r.n_workloads;
        copy(b->primary_stat, sizeof b->primary_stat, stat_label(r.primary_statistic));
    }
    return 0;
}

/* The trust class of run id (rank.h), from its manifest; damaged when the
 * manifest cannot be read. 0, or 2 when the registry cannot be read. */
static int run_class(rg_registry *g, int64_t id, rg_rank_class *c, char *reason, size_t n, char *err, size_t errlen)
{
    rg_run_row row;
    rg_manifest m;
    char why[200];
    if (!rg_registry_get_display(g, id, &row, &m, why, sizeof why)) {
        *c = rg_manifest_rank_class(&m, row.evidence, reason, n);
        rg_manifest_free(&m);
        return 0;
    }
    if (rg_registry_get(g, id, &row, NULL, err, errlen)) return 2;
    *c = RG_CLASS_DAMAGED;
    snprintf(reason, n, "damaged: the stored manifest cannot be read (%s)", why);
    for (char *p = reason; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return 0;
}

/* The RG_LATEST_RUNS newest runs, newest first. */
static int index_latest(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(g, &rows, &n, err, errlen)) return 2;
    size_t keep = n < RG_LATEST_RUNS ? n : RG_LATEST_RUNS;
    for (size_t i = 0; i < keep; i++) v->latest[i] = rows[n - 1 - i];
    v->n_latest = keep;
    free(rows);
    for (size_t i = 0; i < keep; i++)
        if (run_class(g, v->latest[i].id, &v->latest_class[i], v->latest_reason[i], sizeof v->latest_reason[i], err,
                      errlen))
            return 2;
    return 0;
}

int rg_model_index(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (rg_registry_problems(g, NULL, &v->rows, &v->n, err, errlen)) return 2;
    if (index_best(g, v, err, errlen)) {
        rg_model_index_free(v);
        return 2;
    }
    int64_t total = 0;
    for (size_t i = 0; i < v->n; i++) total += v->rows[i].runs;
    if (total > RG_INTERVAL_RANK_MAX) return 0;
    if (index_latest(g, v, err, errlen)) {
        rg_model_index_free(v);
        return 2;
    }
    v->latest_listed = 1;
    if (rg_registry_regressions(g, RG_STATS_ALPHA, RG_STATS_THRESHOLD, 1, &v->alerts, &v->n_alerts, err, errlen)) {
        rg_model_index_free(v);
        return 2;
    }
    v->alerts_checked = 1;
    return 0;
}

int rg_model_history(rg_registry *g, int64_t id, rg_history_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    int rc = rg_registry_line(g, id, &v->e, &v->n, err, errlen);
    if (rc) return rc;
    if (v->n) rg_run_display_name(&v->e[v->n - 1].row, v->name, sizeof v->name);
    return 0;
}

void rg_model_history_free(rg_history_view *v)
{
    free(v->e);
    memset(v, 0, sizeof *v);
}

void rg_model_index_free(rg_index_view *v)
{
    rg_regressions_free(v->alerts, v->n_alerts);
    free(v->rows);
    free(v->best);
    free(v->leaders);
    memset(v, 0, sizeof *v);
}


/* A record without per-workload figures (an imported one) is compared by
 * the runs' primary figures: the ratio, and an interval from the two 95%
 * intervals where both are known. */
static void primary_row(rg_compare_view *v)
{
    rg_compare_row *r = &v->rows[v->n++];
    r->primary = 1;
    r->a = v->a.primary_ns;
    r->b = v->b.primary_ns;
    r->ratio = r->lo = r->hi = NAN;
    if (!v->same_gpu || !v->same_statistic) return;   /* unlike figures are not divided (v->unlike says why) */
    r->ratio = r->b / r->a;
    const rg_interval *ia = &v->a.iv, *ib = &v->b.iv;
    if (ia->known && ib->known && ia->lo > 0 && ib->lo > 0 && isfinite(ia->hi) && isfinite(ib->hi)) {
        r->lo = ib->lo / ia->hi;
        r->hi = ib->hi / ia->lo;
    }
}

/* The summary row: geomeans over the workloads both runs have, verdicts counted. */
static void compare_summary(rg_compare_view *v)
{
    double la = 0, lb = 0;
    v->geo_a = v->geo_b = NAN;
    for (size_t i = 0; i < v->n; i++) {
        const rg_compare_row *r = &v->rows[i];
        if (r->primary || !(r->a > 0) || !(r->b > 0) || !isfinite(r->a) || !isfinite(r->b)) continue;
        v->n_shared++;
        la += log(r->a);
        lb += log(r->b);
        v->n_slow += r->shift && !strcmp(r->verdict, "SLOW");
        v->n_fast += r->shift && !strcmp(r->verdict, "FAST");
    }
    if (v->n_shared) v->geo_a = exp(la / v->n_shared), v->geo_b = exp(lb / v->n_shared);
}

int rg_model_compare(rg_registry *g, int64_t a, int64_t b, rg_compare_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    int rc = rg_model_run(g, a, &v->a, err, errlen);
    if (rc) return rc;
    rc = rg_model_run(g, b, &v->b, err, errlen);
    if (rc) {
        rg_model_run_free(&v->a);
        return rc;
    }
    v->comparable = !strcmp(v->a.comparison_key, v->b.comparison_key);
    rg_model_compare_unlike(v);
    size_t cap = v->a.n_wl + v->b.n_wl + 1;   /* + the primary row */
    v->rows = calloc(cap ? cap : 1, sizeof *v->rows);
    if (!v->rows) {
        rg_model_compare_free(v);
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    /* Every workload of a, then those only b has. */
    for (size_t i = 0; i < v->a.n_wl + v->b.n_wl; i++) {
        const rg_wl_view *x = i < v->a.n_wl ? &v->a.wl[i] : &v->b.wl[i - v->a.n_wl];
        const rg_wl_view *wa = NULL, *wb = NULL;
        for (size_t k = 0; k < v->a.n_wl; k++)
            if (v->a.wl[k].index == x->index) wa = &v->a.wl[k];
        for (size_t k = 0; k < v->b.n_wl; k++)
            if (v->b.wl[k].index == x->index) wb = &v->b.wl[k];
        if (i >= v->a.n_wl && wa) continue;
        rg_compare_row *r = &v->rows[v->n++];
        r->index = x->index;
        r->a = wa ? wa->median : NAN;
        r->b = wb ? wb->median : NAN;
        r->ratio = r->b / r->a;
        r->lo = wa && wb ? wb->min / wa->max : NAN;
        r->hi = wa && wb ? wb->max / wa->min : NAN;
    }
    if (!v->a.n_wl || !v->b.n_wl) primary_row(v);
    /* From the stored samples where both records carry them (rank.h). */
    rg_manifest ma, mb;
    rg_run_row ra, rb;
    if (rg_registry_get_display(g, a, &ra, &ma, err, errlen)) return 0;
    if (!rg_registry_get_display(g, b, &rb, &mb, err, errlen)) {
        rg_check_row *c;
        size_t nc;
        if (!rg_check_runs(&ma, &mb, RG_STATS_ALPHA, RG_STATS_THRESHOLD, &c, &nc, err, errlen)) {
            for (size_t i = 0; i < nc; i++)
                for (size_t k = 0; c[i].have && k < v->n; k++)
                    if (v->rows[k].index == c[i].index && !v->rows[k].primary) {
                        rg_compare_row *r = &v->rows[k];
                        r->shift = 1;
                        r->ratio = c[i].shift.ratio;
                        r->lo = c[i].shift.lo;
                        r->hi = c[i].shift.hi;
                        r->p = c[i].shift.p;
                        snprintf(r->verdict, sizeof r->verdict, "%s", rg_verdict_name(c[i].verdict));
                    }
            free(c);
        }
        rg_manifest_free(&mb);
    }
    rg_manifest_free(&ma);
    compare_summary(v);
    return 0;
}

void rg_model_compare_free(rg_compare_view *v)
{
    rg_model_run_free(&v->a);
    rg_model_run_free(&v->b);
    free(v->rows);
    memset(v, 0, sizeof *v);
}

int rg_model_run_ids(rg_registry *g, int64_t **ids, size_t *n, char *err, size_t errlen)
{
    rg_run_row *rows;
    *ids = NULL;
    *n = 0;
    if (rg_registry_list(g, &rows, n, err, errlen)) return 2;
    *ids = malloc((*n ? *n : 1) * sizeof **ids);
    if (!*ids) {
        free(rows);
        *n = 0;
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < *n; i++) (*ids)[i] = rows[i].id;
    free(rows);
    return 0;
}

/* needle (lower-case) in hay, ignoring ASCII case. */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *h = hay; *h; h++) {
        size_t k = 0;
        while (k < n && h[k] && tolower((unsigned char)h[k]) == needle[k]) k++;
        if (k == n) return 1;
    }
    return n == 0;
}

int rg_model_search(rg_registry *g, const char *q, rg_search_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (!g || !q || !*q || strlen(q) > RG_SEARCH_QUERY_MAX) {
        snprintf(err, errlen, "search needs q of 1 to %d bytes", RG_SEARCH_QUERY_MAX);
        return 1;
    }
    copy(v->q, sizeof v->q, q);
    char needle[RG_SEARCH_QUERY_MAX + 1];
    size_t i = 0;
    for (; q[i]; i++) needle[i] = (char)tolower((unsigned char)q[i]);
    needle[i] = 0;
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(g, &rows, &n, err, errlen)) return 2;
    for (size_t k = n; k-- > 0;) {   /* newest first */
        rg_rank_entry e;
        fill_entry(&rows[k], &e);
        if (!contains_ci(e.kernel, needle) && !contains_ci(e.name, needle)) continue;   /* "cuda default", "doubleAI" */
        if (v->n == RG_SEARCH_MAX) {
            v->more = 1;
            break;
        }
        rg_search_hit *h = &v->hits[v->n++];
        h->id = e.id;
        h->primary_ns = e.primary_ns;
        copy(h->kernel, sizeof h->kernel, e.kernel);
        copy(h->definition, sizeof h->definition, rows[k].definition);
        copy(h->device, sizeof h->device, rows[k].device);
        copy(h->status, sizeof h->status, rows[k].status);
        if (run_class(g, h->id, &h->rank_class, h->rank_reason, sizeof h->rank_reason, err, errlen)) {
            free(rows);
            return 2;
        }
    }
    free(rows);
    return 0;
}
