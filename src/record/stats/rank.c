/* SPDX-License-Identifier: Apache-2.0 */
/* rank.c -- intervals, suspect runs, interval-aware ranks, lines and the
 * regression check (see rank.h). */
#include "rank.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "hardware.h"
#include "rg_util.h"

int rg_run_interval(const rg_manifest *m, double conf, rg_interval *out, char *err, size_t errlen)
{
    if (!m || !out || !(conf > 0 && conf < 1)) {
        snprintf(err, errlen, "run interval: no run, or a confidence outside (0, 1)");
        return 2;
    }
    out->est = out->lo = out->hi = m->primary_ns;
    out->known = 0;
    if (!(m->primary_ns > 0) || !isfinite(m->primary_ns)) {
        snprintf(err, errlen, "run interval: the run has no positive primary figure");
        return 2;
    }
    int geo = !strcmp(m->primary_statistic, "geomean"), mean = !strcmp(m->primary_statistic, "mean");
    size_t n = m->n_workloads;
    if (!n || (!geo && !mean)) return 0;
    /* Simultaneous coverage: each median interval at 1 - (1 - conf) / n, so
     * all n hold together with probability >= conf (Bonferroni); the
     * statistic is monotone in every median, so its interval is the
     * statistic of the lower and of the upper ends. */
    double cw = 1 - (1 - conf) / (double)n, slo = 0, shi = 0;
    for (size_t i = 0; i < n; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        double lo, hi;
        if (w->n_samples == 0 || w->n_samples > 1000000 ||
            rg_median_interval(w->samples, (int)w->n_samples, cw, &lo, &hi))
            return 0;   /* a workload without (valid) samples: the interval is unknown */
        slo += geo ? log(lo) : lo;
        shi += geo ? log(hi) : hi;
    }
    out->lo = geo ? exp(slo / (double)n) : slo / (double)n;
    out->hi = geo ? exp(shi / (double)n) : shi / (double)n;
    /* The recorded figure lies inside its own interval unless a stored
     * median disagrees with the samples (verify refuses that). */
    if (out->lo > out->est) out->lo = out->est;
    if (out->hi < out->est) out->hi = out->est;
    out->known = 1;
    return 0;
}

const char *rg_interval_label(const rg_interval *iv, char *buf, size_t n)
{
    if (!buf || !n) return "";
    if (!iv || !isfinite(iv->est)) snprintf(buf, n, "-");
    else if (!iv->known) snprintf(buf, n, "%.3f [unknown]", iv->est / 1e3);
    else if (!(iv->lo > 0) || !isfinite(iv->hi)) snprintf(buf, n, "%.3f [too few samples]", iv->est / 1e3);
    else snprintf(buf, n, "%.3f [%.3f, %.3f]", iv->est / 1e3, iv->lo / 1e3, iv->hi / 1e3);
    return buf;
}

/* Control bytes from a record never reach a terminal or a page: '?'. */
static int suspect_found(char *why)
{
    for (unsigned char *p = (unsigned char *)why; p && *p; p++)
        if (*p < 0x20 || *p == 0x7f) *p = '?';
    return 1;
}

/* A workload whose output broke the NaN/Inf or all-zero rules, NULL when none. */
static const rg_mf_workload *broken_output(const rg_manifest *m)
{
    for (size_t i = 0; i < m->n_workloads; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        if (w->n_nonfinite > 0 || strstr(w->reason, "NaN/Inf") || strstr(w->reason, "all zero")) return w;
    }
    return NULL;
}

/* A workload's median below the index's own T_SOL (sol_check.h: never the
 * manifest's t_sol_ns) or below the GPU's launch floor (hardware.h); a run
 * without per-workload medians: its primary figure below the launch floor
 * (no workload can take less, so neither can their mean or geomean). 1 with why. */
static int below_gpu_floor(const rg_manifest *m, char *why, size_t whylen)
{
    rg_gpu_floor fl;
    int have_floor = rg_gpu_floor_lookup(m->product, &fl);
    double *t_sol = m->n_workloads ? malloc(m->n_workloads * sizeof *t_sol) : NULL;
    rg_sol_check c;
    char err[160];
    int found = 0, verified = t_sol && !rg_manifest_sol_check(m, &c, t_sol, err, sizeof err) &&
                                c.state == RG_SOL_VERIFIED;
    for (size_t i = 0; i < m->n_workloads && !found; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        if (verified && w->median < t_sol[i]) {
            snprintf(why, whylen, "workload %d: median %.4g us is below its T_SOL %.4g us (the index's: bytes / "
                     "%g TB/s; faster than the memory allows)", w->index, w->median / 1e3, t_sol[i] / 1e3, c.tbps);
            found = 1;
        } else if (have_floor && w->median < fl.launch_ns) {
            snprintf(why, whylen, "workload %d: median %.4g us is below the %s launch floor %.3g us (the shortest "
                     "kernel span measured on that GPU)", w->index, w->median / 1e3, fl.product, fl.launch_ns / 1e3);
            found = 1;
        }
    }
    if (!found && !m->n_workloads && have_floor && isfinite(m->primary_ns) && m->primary_ns > 0 &&
        m->primary_ns < fl.launch_ns) {
        snprintf(why, whylen, "its %s %.4g us is below the %s launch floor %.3g us (the shortest kernel span "
                 "measured on that GPU)", m->primary_statistic, m->primary_ns / 1e3, fl.product, fl.launch_ns / 1e3);
        found = 1;
    }
    free(t_sol);
    return found;
}

static int is_cpu_run(const rg_manifest *m) { return !strcmp(m->vendor, "cpu") || !strcmp(m->backend, "cpu"); }

/* A CPU workload moving its bytes (the bundled suite's, else the record's
 * own) faster than the CPU's memory ceiling (hardware.h); 1 with why. */
static int beyond_cpu_ceiling(const rg_manifest *m, char *why, size_t whylen)
{
    if (!is_cpu_run(m) || !m->n_workloads) return 0;
    double *bytes = malloc(m->n_workloads * sizeof *bytes);
    if (!bytes) return 0;
    const char *name = m->cpu_model[0] ? m->cpu_model : m->product;
    double ceiling = rg_cpu_ceiling_gbps(name, NULL);
    int suite = !rg_manifest_suite_bytes(m, bytes), found = 0;
    for (size_t i = 0; i < m->n_workloads && !found; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        double b = suite && isfinite(bytes[i]) ? bytes[i] : w->bytes;
        if (!(b > 0) || !isfinite(b) || !(w->median > 0) || !isfinite(w->median)) continue;
        double gbps = b / w->median;   /* bytes per ns = GB/s */
        if (gbps > ceiling) {
            snprintf(why, whylen, "workload %d: %.4g GB/s (%.4g MB in %.4g us) is beyond the CPU memory ceiling "
                     "%.4g GB/s (%s)", w->index, gbps, b / 1e6, w->median / 1e3, ceiling,
                     ceiling == RG_CPU_CEILING_GBPS ? "the global ceiling" : "the CPU model's row");
            found = 1;
        }
    }
    free(bytes);
    return found;
}

int rg_manifest_suspect(const rg_manifest *m, char *why, size_t whylen)
{
    if (why && whylen) why[0] = 0;
    if (!m) return 0;
    if (!why || !whylen) {
        char tmp[200];
        return rg_manifest_suspect(m, tmp, sizeof tmp);
    }
    const rg_mf_workload *w = broken_output(m);
    if (w) {
        snprintf(why, whylen, "workload %d: %s", w->index, w->reason[0] ? w->reason : "output has NaN/Inf values");
        return suspect_found(why);
    }
    if (is_cpu_run(m)) return beyond_cpu_ceiling(m, why, whylen) ? suspect_found(why) : 0;
    return below_gpu_floor(m, why, whylen) ? suspect_found(why) : 0;
}

/* ---- trust classes ------------------------------------------------------------ */

const char *rg_rank_class_name(rg_rank_class c)
{
    static const char *const names[] = {"measured", "reported", "suspect", "partial", "busy", "damaged", "failed"};
    return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "failed";
}

int rg_rank_class_ranked(rg_rank_class c) { return c == RG_CLASS_MEASURED || c == RG_CLASS_REPORTED; }

/* 1 when every workload of m carries samples (what measured means). */
static int has_samples(const rg_manifest *m)
{
    if (!m->n_workloads) return 0;
    for (size_t i = 0; i < m->n_workloads; i++)
        if (!m->workloads[i].n_samples) return 0;
    return 1;
}

/* Fewer workloads than the bundled suite of its definition (a record without
 * per-workload figures: by its cases counted, fast_1_total, when it gives
 * them); 1 with why. No bundled suite: the index cannot tell, 0. */
static int partial_run(const rg_manifest *m, char *why, size_t n)
{
    int suite = rg_sol_suite_size(m->benchmark);
    if (suite <= 0) return 0;
    double have = (double)m->n_workloads;
    if (!m->n_workloads && m->fast_1_total > 0 && isfinite(m->fast_1_total)) have = m->fast_1_total;
    if (!m->n_workloads && !(m->fast_1_total > 0)) return 0;   /* it does not say: taken as whole */
    if (have >= suite) return 0;
    snprintf(why, n, "partial: %.0f of the %d workloads of its suite", have, suite);
    return 1;
}

rg_rank_class rg_manifest_rank_class(const rg_manifest *m, const char *evidence, char *reason, size_t n)
{
    char tmp[RG_RANK_REASON_LEN], why[200];
    if (!reason || !n) reason = tmp, n = sizeof tmp;
    reason[0] = 0;
    if (!m) {
        snprintf(reason, n, "damaged: no manifest");
        return RG_CLASS_DAMAGED;
    }
    if (strcmp(m->status, "passed") || !(m->primary_ns > 0) || !isfinite(m->primary_ns)) {
        char label[200];
        if (rg_untimed_label(m->status, m->primary_ns, rg_manifest_first_failure(m), label, sizeof label))
            snprintf(label, sizeof label, "%s", *m->status ? m->status : "no status");
        snprintf(reason, n, "%s", label);
        return RG_CLASS_FAILED;
    }
    int suspect = rg_manifest_suspect(m, why, sizeof why);
    if (suspect && !(evidence && !strcmp(evidence, RG_EVIDENCE_REPLICATED))) {
        snprintf(reason, n, "suspect: %s", why);
        return RG_CLASS_SUSPECT;
    }
    if (partial_run(m, reason, n)) return RG_CLASS_PARTIAL;
    if (rg_manifest_busy(m, why, sizeof why)) {
        snprintf(reason, n, "busy machine: %s", why);
        return RG_CLASS_BUSY;
    }
    if (!has_samples(m)) {
        snprintf(reason, n, "reported: %s without samples; ranked among reported runs by its %s",
                 m->n_workloads ? "per-workload figures" : "a figure", *m->primary_statistic ? m->primary_statistic
                                                                                           : "figure");
        return RG_CLASS_REPORTED;
    }
    snprintf(reason, n, "measured: samples of %zu workload%s held here%s", m->n_workloads,
             m->n_workloads == 1 ? "" : "s", suspect ? " (too fast at first, confirmed by a replication)" : "");
    return RG_CLASS_MEASURED;
}

const rg_mf_workload *rg_manifest_find_workload(const rg_manifest *b, const rg_mf_workload *a, size_t hint)
{
    if (!b || !a) return NULL;
    if (hint < b->n_workloads && b->workloads[hint].index == a->index && !strcmp(b->workloads[hint].uuid, a->uuid))
        return &b->workloads[hint];
    for (size_t k = 0; k < b->n_workloads; k++)
        if (b->workloads[k].index == a->index && !strcmp(b->workloads[k].uuid, a->uuid)) return &b->workloads[k];
    return NULL;
}

void rg_revision_label(const rg_manifest *m, char *buf, size_t n)
{
    if (!buf || !n) return;
    if (m && m->git_commit[0])
        snprintf(buf, n, "git %.12s%s", m->git_commit, m->git_dirty == 1 ? "+dirty" : "");
    else if (m && m->implementation_digest[0])
        snprintf(buf, n, "impl %.12s", m->implementation_digest + (strncmp(m->implementation_digest, "sha256:", 7) ? 0 : 7));
    else snprintf(buf, n, "-");
}

/* ---- groups ------------------------------------------------------------------- */

/* Fills e from run row r (its manifest read once). A manifest that cannot
 * be read leaves e damaged (listed, never ranked), not an error; an error
 * reading the registry itself is one (2). */
static int fill_entry(rg_registry *g, const rg_run_row *r, rg_ranked *e, rg_manifest *keep, char *err,
                      size_t errlen)
{
    memset(e, 0, sizeof *e);
    rg_manifest m;
    char why[200];
    if (rg_registry_get_display(g, r->id, &e->row, &m, why, sizeof why)) {
        if (rg_registry_get(g, r->id, &e->row, NULL, err, errlen)) return 2;
        e->iv.est = e->iv.lo = e->iv.hi = NAN;
        e->sol.state = RG_SOL_UNVERIFIABLE;
        snprintf(e->sol.basis, sizeof e->sol.basis, "the stored manifest cannot be read");
        e->rank_class = RG_CLASS_DAMAGED;
        snprintf(e->rank_reason, sizeof e->rank_reason, "damaged: the stored manifest cannot be read (%s)", why);
        suspect_found(e->rank_reason);
        snprintf(e->revision, sizeof e->revision, "-");
        if (keep) memset(keep, 0, sizeof *keep);
        return 0;
    }
    if (rg_run_interval(&m, RG_STATS_CONF, &e->iv, err, errlen)) {
        /* No primary figure: shown, never ranked. */
        e->iv.est = e->iv.lo = e->iv.hi = NAN;
        e->iv.known = 0;
    }
    e->suspect = rg_manifest_suspect(&m, e->suspect_why, sizeof e->suspect_why);
    e->confirmed = e->suspect && !strcmp(e->row.evidence, RG_EVIDENCE_REPLICATED);
    e->rank_class = rg_manifest_rank_class(&m, e->row.evidence, e->rank_reason, sizeof e->rank_reason);
    if (rg_manifest_sol_check(&m, &e->sol, NULL, err, errlen)) {
        rg_manifest_free(&m);
        return 2;
    }
    rg_revision_label(&m, e->revision, sizeof e->revision);
    snprintf(e->harness, sizeof e->harness, "%.60s%s%.30s", m.harness_name, *m.harness_version ? " " : "",
             m.harness_version);
    if (keep) *keep = m;
    else rg_manifest_free(&m);
    return 0;
}

/* Tier: 0 measured and verified (may be #1), 1 measured but unverifiable,
 * 2 reported (ranked apart, from 1), 3 not ranked (every other class). */
enum { TIER_FIRST, TIER_UNVERIFIABLE, TIER_REPORTED, TIER_UNRANKED, N_RANKED_TIERS = TIER_UNRANKED };

static int tier(const rg_ranked *e)
{
    if (e->superseded) return TIER_UNRANKED;
    if (e->rank_class == RG_CLASS_REPORTED && isfinite(e->iv.est)) return TIER_REPORTED;
    if (e->rank_class != RG_CLASS_MEASURED || strcmp(e->row.status, "passed") || !isfinite(e->iv.est))
        return TIER_UNRANKED;
    return e->sol.state == RG_SOL_UNVERIFIABLE ? TIER_UNVERIFIABLE : TIER_FIRST;
}

int rg_ranked_may_be_first(const rg_ranked *e) { return e && tier(e) == TIER_FIRST; }

/* Measured (0) or reported (1) ranks: a table never mixes the two. */
static int rank_kind(const rg_ranked *e) { return tier(e) == TIER_REPORTED; }

static int cmp_ranked(const void *pa, const void *pb)
{
    const rg_ranked *a = pa, *b = pb;
    int ta = tier(a), tb = tier(b);
    if (a->superseded != b->superseded) return a->superseded - b->superseded;   /* current protocol first */
    if (ta != tb) return ta - tb;
    if (ta == TIER_UNRANKED && a->rank_class != b->rank_class) return (int)a->rank_class - (int)b->rank_class;
    if (a->rank != b->rank) return a->rank - b->rank;
    if (ta < TIER_UNRANKED && a->iv.est != b->iv.est) return a->iv.est < b->iv.est ? -1 : 1;
    return a->row.id < b->row.id ? -1 : a->row.id > b->row.id;
}

int rg_version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            char *ea, *eb;
            unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
            if (x != y) return x < y ? -1 : 1;
            a = ea, b = eb;
            continue;
        }
        if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++, b++;
    }
    return 0;
}

/* The harness name of e ("name version": up to the last space). */
static size_t harness_name_len(const rg_ranked *e)
{
    const char *sp = strrchr(e->harness, ' ');
    return sp ? (size_t)(sp - e->harness) : strlen(e->harness);
}

/* Marks the runs of e[n] whose harness has a newer version in e: the newest
 * version of each harness name first (a few names per group), then each run
 * against its name's. */
static void mark_superseded(rg_ranked *e, size_t n)
{
    enum { NAMES = 32 };
    size_t newest[NAMES], names = 0;
    for (size_t i = 0; i < n; i++) {
        size_t li = harness_name_len(&e[i]), k = 0;
        if (!e[i].harness[li]) continue;   /* no version */
        while (k < names && !(harness_name_len(&e[newest[k]]) == li && !strncmp(e[newest[k]].harness, e[i].harness, li)))
            k++;
        if (k == names && names < NAMES) newest[names++] = i;
        else if (k < names && rg_version_cmp(e[newest[k]].harness + li + 1, e[i].harness + li + 1) < 0) newest[k] = i;
    }
    for (size_t i = 0; i < n; i++) {
        size_t li = harness_name_len(&e[i]);
        if (!e[i].harness[li]) continue;
        for (size_t k = 0; k < names; k++)
            if (harness_name_len(&e[newest[k]]) == li && !strncmp(e[newest[k]].harness, e[i].harness, li))
                e[i].superseded = rg_version_cmp(e[i].harness + li + 1, e[newest[k]].harness + li + 1) < 0;
    }
}

/* Ranks entries e[n] in place and sorts them into rank order. */
static int rank_entries(rg_ranked *e, size_t n, char *err, size_t errlen)
{
    double *lo = malloc((n + 1) * sizeof *lo), *hi = malloc((n + 1) * sizeof *hi);
    int *rk = malloc((n + 1) * sizeof *rk);
    size_t *at = malloc((n + 1) * sizeof *at);
    if (!lo || !hi || !rk || !at) {
        free(lo), free(hi), free(rk), free(at);
        snprintf(err, errlen, "rank: out of memory");
        return 2;
    }
    mark_superseded(e, n);
    int offset = 0;
    for (int t = 0; t < N_RANKED_TIERS; t++) {
        int k = 0;
        for (size_t i = 0; i < n; i++)
            if (tier(&e[i]) == t) {
                lo[k] = e[i].iv.lo, hi[k] = e[i].iv.hi, at[k] = i;
                k++;
            }
        if (rg_rank_intervals(k, lo, hi, rk)) {
            free(lo), free(hi), free(rk), free(at);
            snprintf(err, errlen, "rank: an interval is not a number");
            return 2;
        }
        for (int j = 0; j < k; j++) e[at[j]].rank = offset + rk[j];
        offset = t + 1 == TIER_REPORTED ? 0 : offset + k;   /* reported runs rank apart, from 1 */
    }
    free(lo), free(hi), free(rk), free(at);
    qsort(e, n, sizeof *e, cmp_ranked);
    for (size_t i = 0; i < n; i++)
        e[i].tied = e[i].rank &&
                    ((i > 0 && e[i - 1].rank == e[i].rank && rank_kind(&e[i - 1]) == rank_kind(&e[i])) ||
                     (i + 1 < n && e[i + 1].rank == e[i].rank && rank_kind(&e[i + 1]) == rank_kind(&e[i])));
    return 0;
}

/* The runs for which keep(row, ctx) holds, each filled (fill_entry), in id order. */
static int collect(rg_registry *g, int (*keep)(const rg_run_row *, const void *), const void *ctx, rg_ranked **out,
                   size_t *n, char *err, size_t errlen)
{
    rg_run_row *rows;
    size_t nr;
    *out = NULL;
    *n = 0;
    if (rg_registry_list(g, &rows, &nr, err, errlen)) return 2;
    rg_ranked *e = calloc(nr ? nr : 1, sizeof *e);
    if (!e) {
        free(rows);
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    size_t k = 0;
    for (size_t i = 0; i < nr; i++) {
        if (!keep(&rows[i], ctx)) continue;
        if (fill_entry(g, &rows[i], &e[k], NULL, err, errlen)) {
            free(rows);
            free(e);
            return 2;
        }
        k++;
    }
    free(rows);
    *out = e;
    *n = k;
    return 0;
}

typedef struct group_sel {
    const char *key, *evidence;
} group_sel;

static int in_group(const rg_run_row *r, const void *ctx)
{
    const group_sel *s = ctx;
    return !strcmp(r->comparison_key, s->key) && (!s->evidence || !strcmp(r->evidence, s->evidence));
}

int rg_registry_rank_group(rg_registry *g, const char *key, const char *evidence, rg_ranked **out, size_t *n,
                           char *err, size_t errlen)
{
    if (!g || !key || !out || !n) {
        snprintf(err, errlen, "rank: no registry, key or output");
        return 2;
    }
    group_sel sel = {key, evidence};
    rg_ranked *e;
    size_t k;
    if (collect(g, in_group, &sel, &e, &k, err, errlen)) return 2;
    if (rank_entries(e, k, err, errlen)) {
        free(e);
        return 2;
    }
    *out = e;
    *n = k;
    return 0;
}

int rg_registry_rank_run(rg_registry *g, int64_t id, rg_ranked *entry, int *group_ranked, char *err, size_t errlen)
{
    rg_run_row row;
    if (!entry || rg_registry_get(g, id, &row, NULL, err, errlen)) {
        if (!entry) snprintf(err, errlen, "rank: no output");
        return 2;
    }
    rg_ranked *e;
    size_t n;
    if (rg_registry_rank_group(g, row.comparison_key, NULL, &e, &n, err, errlen)) return 2;
    int ranked = 0, found = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i].row.id == id) *entry = e[i], found = 1;
    for (size_t i = 0; i < n && found; i++)   /* the runs ranked in the same table: measured, or reported */
        ranked += e[i].rank > 0 && rank_kind(&e[i]) == rank_kind(entry);
    free(e);
    if (group_ranked) *group_ranked = ranked;
    if (!found) {
        snprintf(err, errlen, "rank: run #%lld is not in its own group", (long long)id);
        return 2;
    }
    return 0;
}

/* Picks #1 from entries e[n] in rank-figure order (rg_registry_first_of). */
static int64_t pick_first(const rg_ranked *e, size_t n)
{
    int64_t reported = 0;
    int measured = 0;
    for (size_t i = 0; i < n; i++) {
        if (rg_ranked_may_be_first(&e[i])) return e[i].row.id;
        measured |= e[i].rank_class == RG_CLASS_MEASURED && !e[i].superseded;
        if (!reported && tier(&e[i]) == TIER_REPORTED && e[i].sol.state != RG_SOL_UNVERIFIABLE) reported = e[i].row.id;
    }
    return measured ? 0 : reported;
}

int rg_registry_first_of(rg_registry *g, const int64_t *ids, size_t n, int64_t *id, char *err, size_t errlen)
{
    if (!g || (!ids && n) || !id) {
        snprintf(err, errlen, "#1: no registry, order or output");
        return 2;
    }
    *id = 0;
    /* A group small enough to read whole: every run, so that superseded
     * runs are known; a larger one: by the figure alone, reading runs until
     * the first that may be #1 (the best of the first tier: its lowest
     * figure always ranks 1). A group without any measured run: its best
     * verified reported run (the reported table's 1). */
    int whole = n <= RG_RANK_READ_ALL_MAX;
    rg_ranked *e = calloc(whole && n ? n : 1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "#1: out of memory");
        return 2;
    }
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        rg_run_row row = {.id = ids[i]};
        rc = fill_entry(g, &row, &e[whole ? k : 0], NULL, err, errlen);
        if (rc) break;
        if (whole) k++;
        else if (rg_ranked_may_be_first(&e[0])) {
            *id = ids[i];
            break;
        }
    }
    if (!rc && whole) {
        mark_superseded(e, k);
        *id = pick_first(e, k);
    }
    free(e);
    return rc;
}

int rg_registry_first(rg_registry *g, const char *key, int64_t *id, char *err, size_t errlen)
{
    if (!g || !key || !id) {
        snprintf(err, errlen, "#1: no registry, key or output");
        return 2;
    }
    *id = 0;
    int64_t *ids;
    double *primary;
    size_t n;
    /* The passed runs by primary figure, then id. */
    if (rg_registry_group_order(g, key, &ids, &primary, &n, err, errlen)) return 2;
    int rc = rg_registry_first_of(g, ids, n, id, err, errlen);
    free(ids);
    free(primary);
    return rc;
}

const char *rg_rank_label(const rg_ranked *r, char *buf, size_t n)
{
    if (!r || !r->rank) snprintf(buf, n, "-");
    else snprintf(buf, n, "%s%d", r->tied ? "=" : "", r->rank);
    return buf;
}

/* ---- lines and history ------------------------------------------------------------ */

/* The line a run belongs to, as one string. */
static void line_of(const rg_run_row *r, char *buf, size_t n)
{
    if (r->backend[0]) snprintf(buf, n, "%s|%s|%d|%s", r->comparison_key, r->backend, r->kernel, r->kernel_name);
    else snprintf(buf, n, "%s|source:%s", r->comparison_key, r->source);
}

static int in_line(const rg_run_row *r, const void *ctx)
{
    char other[600];
    line_of(r, other, sizeof other);
    return !strcmp(other, (const char *)ctx);
}

static int cmp_observed(const void *pa, const void *pb)
{
    const rg_ranked *a = pa, *b = pb;
    return rg_run_cmp_time(&a->row, &b->row);
}

int rg_registry_line(rg_registry *g, int64_t id, rg_ranked **out, size_t *n, char *err, size_t errlen)
{
    if (!g || !out || !n) {
        snprintf(err, errlen, "history: no registry or output");
        return 2;
    }
    *out = NULL;
    *n = 0;
    rg_run_row me;
    int rc = rg_registry_get(g, id, &me, NULL, err, errlen);
    if (rc) return rc;
    char mine[600];
    line_of(&me, mine, sizeof mine);
    rg_ranked *e;
    size_t k;
    if (collect(g, in_line, mine, &e, &k, err, errlen)) return 2;
    qsort(e, k, sizeof *e, cmp_observed);
    *out = e;
    *n = k;
    return 0;
}

int rg_registry_previous_revision(rg_registry *g, int64_t id, int64_t *base, char *err, size_t errlen)
{
    if (!base) {
        snprintf(err, errlen, "check: no output");
        return 2;
    }
    *base = 0;
    rg_ranked *e;
    size_t n;
    int rc = rg_registry_line(g, id, &e, &n, err, errlen);
    if (rc) return rc;
    size_t me = n;
    for (size_t i = 0; i < n; i++)
        if (e[i].row.id == id) me = i;
    for (size_t i = me; i-- > 0 && me < n;)   /* a run that timed nothing is no baseline */
        if (strcmp(e[i].row.implementation_digest, e[me].row.implementation_digest) && !isnan(e[i].row.primary_ns)) {
            *base = e[i].row.id;
            break;
        }
    free(e);
    return 0;
}

/* ---- the regression check ----------------------------------------------------------------- */

int rg_check_runs(const rg_manifest *base, const rg_manifest *run, double alpha, double threshold,
                  rg_check_row **rows, size_t *n, char *err, size_t errlen)
{
    if (!base || !run || !rows || !n || !(alpha > 0 && alpha < 1) || !(threshold >= 0 && threshold < 10)) {
        snprintf(err, errlen, "check: alpha must lie in (0, 1) and the threshold in [0, 10)");
        return 2;
    }
    *rows = NULL;
    *n = 0;
    if (!run->n_workloads || !base->n_workloads) {
        snprintf(err, errlen, "check: %s has no per-workload figures (an imported record without samples)",
                 !run->n_workloads ? "the run" : "the baseline");
        return 2;
    }
    rg_check_row *r = calloc(run->n_workloads, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "check: out of memory");
        return 2;
    }
    char busy_why[64];
    int busy = rg_manifest_busy(run, busy_why, sizeof busy_why);
    for (size_t i = 0; i < run->n_workloads; i++) {
        const rg_mf_workload *w = &run->workloads[i], *b = rg_manifest_find_workload(base, w, i);
        rg_check_row *o = &r[i];
        o->index = w->index;
        snprintf(o->uuid, sizeof o->uuid, "%s", w->uuid);
        o->run_median = w->median;
        o->base_median = b ? b->median : NAN;
        o->verdict = RG_VERDICT_UNCLEAR;
        if (!b) {
            snprintf(o->why, sizeof o->why, "not in the baseline");
            continue;
        }
        if (!w->n_samples || !b->n_samples || w->n_samples > 1000000 || b->n_samples > 1000000) {
            snprintf(o->why, sizeof o->why, "no stored samples in the %s", !w->n_samples ? "run" : "baseline");
            continue;
        }
        if (rg_shift_estimate(b->samples, (int)b->n_samples, w->samples, (int)w->n_samples, RG_STATS_CONF,
                              &o->shift)) {
            snprintf(o->why, sizeof o->why, "samples not comparable (not positive, or too many)");
            continue;
        }
        o->have = 1;
        o->verdict = rg_shift_verdict(&o->shift, alpha, threshold);
        if (busy) {   /* gate.h: a busy CPU run is UNCLEAR (never SLOW, nor SAME or FAST) */
            o->verdict = RG_VERDICT_UNCLEAR;
            snprintf(o->why, sizeof o->why, "busy machine: %s", busy_why);
        }
    }
    *rows = r;
    *n = run->n_workloads;
    return 0;
}

/* ---- alerts ------------------------------------------------------------------------------ */

void rg_regressions_free(rg_regression *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) free(r[i].rows);
    free(r);
}

static int fill_regression(rg_registry *g, int64_t id, int64_t base, double alpha, double threshold, rg_regression *o,
                           char *err, size_t errlen)
{
    rg_run_row rr, rb;
    rg_manifest mr, mb;
    memset(o, 0, sizeof *o);
    if (rg_registry_get_display(g, id, &rr, &mr, err, errlen)) return 2;
    if (rg_registry_get_display(g, base, &rb, &mb, err, errlen)) {
        rg_manifest_free(&mr);
        return 2;
    }
    int rc = rg_check_runs(&mb, &mr, alpha, threshold, &o->rows, &o->n_rows, err, errlen);
    o->run_id = id;
    o->base_id = base;
    if (rr.backend[0]) snprintf(o->line, sizeof o->line, "%.15s kernel %d (%.60s)", rr.backend, rr.kernel, rr.kernel_name);
    else snprintf(o->line, sizeof o->line, "source %.100s", rr.source);
    snprintf(o->definition, sizeof o->definition, "%s", rr.definition);
    snprintf(o->device, sizeof o->device, "%s", rr.device);
    snprintf(o->comparison_key, sizeof o->comparison_key, "%s", rr.comparison_key);
    snprintf(o->observed_at, sizeof o->observed_at, "%s", rr.observed_at);
    rg_revision_label(&mr, o->revision, sizeof o->revision);
    rg_revision_label(&mb, o->base_revision, sizeof o->base_revision);
    for (size_t i = 0; !rc && i < o->n_rows; i++) {
        rg_verdict v = o->rows[i].verdict;
        o->n_slow += v == RG_VERDICT_SLOW;
        o->n_fast += v == RG_VERDICT_FAST;
        o->n_same += v == RG_VERDICT_SAME;
        o->n_unclear += v == RG_VERDICT_UNCLEAR;
    }
    rg_manifest_free(&mr);
    rg_manifest_free(&mb);
    return rc;
}

int rg_registry_regressions(rg_registry *g, double alpha, double threshold, int only_slow, rg_regression **out,
                            size_t *n, char *err, size_t errlen)
{
    if (!g || !out || !n) {
        snprintf(err, errlen, "regressions: no registry or output");
        return 2;
    }
    *out = NULL;
    *n = 0;
    rg_run_row *rows;
    size_t nr;
    if (rg_registry_list(g, &rows, &nr, err, errlen)) return 2;
    /* The latest run of each line: by credible observed time (rg_run_time), then id. */
    char (*lines)[600] = calloc(nr ? nr : 1, sizeof *lines);
    rg_regression *r = calloc(nr ? nr : 1, sizeof *r);
    int64_t *latest = calloc(nr ? nr : 1, sizeof *latest);
    size_t nl = 0, k = 0;
    int rc = (!lines || !r || !latest) ? 2 : 0;
    if (rc) snprintf(err, errlen, "regressions: out of memory");
    for (size_t i = 0; i < nr && !rc; i++) {
        char l[600];
        line_of(&rows[i], l, sizeof l);
        size_t j = 0;
        while (j < nl && strcmp(lines[j], l)) j++;
        if (j == nl) {
            memcpy(lines[nl], l, sizeof l);
            latest[nl++] = (int64_t)i;
        } else {
            if (rg_run_cmp_time(&rows[i], &rows[latest[j]]) > 0) latest[j] = (int64_t)i;
        }
    }
    for (size_t j = 0; j < nl && !rc; j++) {
        int64_t id = rows[latest[j]].id, base;
        if ((rc = rg_registry_previous_revision(g, id, &base, err, errlen))) break;
        if (!base) continue;
        rc = fill_regression(g, id, base, alpha, threshold, &r[k], err, errlen);
        if (rc == 2 && r[k].rows == NULL && !r[k].run_id) break;
        if (rc) {   /* not comparable (no samples): not an alert */
            free(r[k].rows);
            rc = 0;
            continue;
        }
        if (only_slow && !r[k].n_slow) {
            free(r[k].rows);
            continue;
        }
        k++;
    }
    free(rows);
    free(lines);
    free(latest);
    if (rc) {
        rg_regressions_free(r, k);
        return 2;
    }
    *out = r;
    *n = k;
    return 0;
}

static void add_num_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

char *rg_regressions_json(const rg_regression *r, size_t n, double alpha, double threshold, char *err, size_t errlen)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *list = doc ? cJSON_AddArrayToObject(doc, "regressions") : NULL;
    if (!list) {
        cJSON_Delete(doc);
        snprintf(err, errlen, "regressions: out of memory");
        return NULL;
    }
    cJSON_AddStringToObject(doc, "method", RG_CHECK_METHOD);
    cJSON_AddNumberToObject(doc, "alpha", alpha);
    cJSON_AddNumberToObject(doc, "threshold", threshold);
    for (size_t i = 0; i < n; i++) {
        const rg_regression *x = &r[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(list, o);
        cJSON_AddNumberToObject(o, "run", (double)x->run_id);
        cJSON_AddNumberToObject(o, "baseline", (double)x->base_id);
        cJSON_AddStringToObject(o, "line", x->line);
        cJSON_AddStringToObject(o, "definition", x->definition);
        cJSON_AddStringToObject(o, "device", x->device);
        cJSON_AddStringToObject(o, "comparisonKey", x->comparison_key);
        cJSON_AddStringToObject(o, "revision", x->revision);
        cJSON_AddStringToObject(o, "baselineRevision", x->base_revision);
        cJSON_AddStringToObject(o, "observedAt", x->observed_at);
        cJSON_AddNumberToObject(o, "slow", x->n_slow);
        cJSON_AddNumberToObject(o, "fast", x->n_fast);
        cJSON_AddNumberToObject(o, "same", x->n_same);
        cJSON_AddNumberToObject(o, "unclear", x->n_unclear);
        cJSON *ws = cJSON_AddArrayToObject(o, "workloads");
        for (size_t k = 0; ws && k < x->n_rows; k++) {
            const rg_check_row *c = &x->rows[k];
            cJSON *w = cJSON_CreateObject();
            cJSON_AddItemToArray(ws, w);
            cJSON_AddNumberToObject(w, "index", c->index);
            cJSON_AddStringToObject(w, "uuid", c->uuid);
            cJSON_AddStringToObject(w, "verdict", rg_verdict_name(c->verdict));
            add_num_or_null(w, "ratio", c->have ? c->shift.ratio : NAN);
            add_num_or_null(w, "lo", c->have ? c->shift.lo : NAN);
            add_num_or_null(w, "hi", c->have ? c->shift.hi : NAN);
            add_num_or_null(w, "p", c->have ? c->shift.p : NAN);
        }
    }
    char *text = rg_json_print(doc, 1, err, errlen);
    cJSON_Delete(doc);
    return text;
}
