/*
 * model.c -- the adapter between the record (registry rows, manifests) and
 * the index's view structs (model.h). Nothing else in src/index/ reads a
 * manifest or a registry row: when the record format changes, this file is
 * the one to change.
 */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rg_util.h"

void rg_kv_add(rg_kvlist *l, const char *key, const char *value)
{
    if (l->oom || !value || !*value) return;   /* an absent figure is left out */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        rg_kv *p = realloc(l->items, cap * sizeof *p);
        if (!p) {
            l->oom = 1;
            return;
        }
        l->items = p;
        l->cap = cap;
    }
    rg_kv *x = &l->items[l->n];
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

/* A number member as text, "" when absent. */
static void kv_num(rg_kvlist *l, const char *key, const cJSON *o, const char *k)
{
    double v = rg_json_num(o, k);
    if (!isfinite(v)) return;
    char s[64];
    snprintf(s, sizeof s, "%.15g", v);
    rg_kv_add(l, key, s);
}

static void kv_str(rg_kvlist *l, const char *key, const cJSON *o, const char *k)
{
    rg_kv_add(l, key, rg_json_str_or_empty(o, k));
}

static void copy(char *dst, size_t n, const char *s) { snprintf(dst, n, "%s", s ? s : ""); }

static double positive_or_nan(double v) { return isfinite(v) ? v : NAN; }

int rg_model_run_from_manifest(const cJSON *m, const rg_run_row *row, rg_run_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    v->primary_ns = v->sol = v->x_ref = v->fast_count = v->fast_total = v->peak_gbps = NAN;
    v->passed = v->total = -1;
    const cJSON *run_item = rg_manifest_item(m, "BenchmarkRun");
    const cJSON *run = rg_manifest_spec(m, "BenchmarkRun"), *proto = rg_manifest_spec(m, "BenchmarkProtocol"),
                *env = rg_manifest_spec(m, "ExecutionEnvironment");
    if (!run || !proto || !env) {
        snprintf(err, errlen, "not a manifest (BenchmarkRun, BenchmarkProtocol or ExecutionEnvironment missing)");
        return 2;
    }
    const cJSON *impl = rg_json_get(run, "implementation"), *tm = rg_json_get(run, "timing");
    const cJSON *sn = rg_json_get(run, "sourceNative"), *src = rg_json_get(sn, "source");
    const cJSON *corr = rg_json_get(run, "correctness"), *gpu = rg_json_get(env, "gpu");
    const cJSON *meta = rg_json_get(run_item, "metadata");

    if (row) {
        v->id = row->id;
        v->replicates_of = row->replicates_of;
        copy(v->evidence, sizeof v->evidence, row->evidence);
        copy(v->created_at, sizeof v->created_at, row->created_at);
        copy(v->device, sizeof v->device, row->device);
    } else {
        copy(v->device, sizeof v->device,
             cJSON_IsObject(gpu) ? rg_json_str_or_empty(gpu, "product")
                                 : rg_json_str_or_empty(rg_json_get(env, "cpu"), "model"));
    }
    copy(v->definition, sizeof v->definition, rg_json_str_or_empty(run, "definition"));
    copy(v->status, sizeof v->status, rg_json_str_or_empty(run, "status"));
    copy(v->backend, sizeof v->backend, rg_json_str_or_empty(impl, "backend"));
    copy(v->observed_at, sizeof v->observed_at, rg_json_str_or_empty(run, "observedAt"));
    copy(v->run_digest, sizeof v->run_digest, rg_json_str_or_empty(meta, "digest"));
    copy(v->comparison_key, sizeof v->comparison_key, rg_json_str_or_empty(run, "comparisonKey"));
    snprintf(v->title, sizeof v->title, "%.100s %.100s · %.150s · %.150s", rg_json_str_or_empty(impl, "name"),
             rg_json_str_or_empty(impl, "kernelName"), v->definition, v->device);

    v->primary_ns = positive_or_nan(rg_json_num(rg_json_get(tm, "suite"), "geomean_of_medians"));
    copy(v->primary_stat, sizeof v->primary_stat, "geomean of per-workload medians");
    v->sol = positive_or_nan(rg_json_num(sn, "sol_score"));
    v->x_ref = positive_or_nan(rg_json_num(sn, "avg_speedup"));
    v->fast_total = rg_json_num(sn, "fast_1_total");
    v->fast_count = rg_json_num(sn, "fast_1_count");
    if (!(v->fast_total > 0) || !isfinite(v->fast_count)) v->fast_total = v->fast_count = NAN;
    v->passed = rg_json_int(corr, "passed");
    v->total = rg_json_int(corr, "total");
    if (v->total <= 0) v->passed = v->total = -1;
    snprintf(v->correctness, sizeof v->correctness, "%s", rg_json_str_or_empty(rg_json_get(proto, "correctness"),
                                                                              "element"));
    copy(v->source, sizeof v->source, row && !strcmp(row->evidence, RG_EVIDENCE_IMPORTED)
                                          ? "imported: made elsewhere, verified here"
                                          : "recorded by ropegrad bench on this index's machines");

    char s[512];
    snprintf(s, sizeof s, "%s %s", rg_json_str_or_empty(impl, "name"), rg_json_str_or_empty(impl, "kernelName"));
    rg_kv_add(&v->identity, "implementation", s);
    kv_str(&v->identity, "project", impl, "name");
    kv_str(&v->identity, "revision", impl, "version");
    kv_str(&v->identity, "backend", impl, "backend");
    kv_str(&v->identity, "device", impl, "device");
    const cJSON *tw = rg_json_get(tm, "workloads");
    int nw = cJSON_IsArray(tw) ? cJSON_GetArraySize(tw) : 0;
    snprintf(s, sizeof s, "suite of %d case%s · %s", nw, nw == 1 ? "" : "s", v->primary_stat);
    rg_kv_add(&v->identity, "workload", s);
    rg_kv_add(&v->identity, "comparison key", v->comparison_key);
    kv_str(&v->identity, "source", src, "tSolDetail");
    kv_str(&v->identity, "external id", meta, "name");
    rg_kv_add(&v->identity, "run digest", v->run_digest);
    kv_str(&v->identity, "implementation digest", run, "implementationDigest");

    kv_str(&v->workload, "definition", run, "definition");
    kv_str(&v->workload, "suite", rg_json_get(run, "suite"), "name");
    kv_str(&v->workload, "figures", rg_json_get(run, "suite"), "figuresFile");
    kv_str(&v->workload, "comparator", rg_json_get(proto, "correctness"), "workload");
    kv_str(&v->workload, "tolerances", rg_json_get(proto, "correctness"), "tolerances");
    kv_str(&v->workload, "workload digest", run, "workloadDigest");

    snprintf(s, sizeof s, "%s %s", rg_json_str_or_empty(rg_json_get(proto, "harness"), "name"),
             rg_json_str_or_empty(rg_json_get(proto, "harness"), "version"));
    rg_kv_add(&v->protocol, "harness", s);
    kv_str(&v->protocol, "timer", proto, "timer");
    kv_str(&v->protocol, "primary statistic", rg_json_get(proto, "statistics"), "suite");
    kv_str(&v->protocol, "per workload", rg_json_get(proto, "statistics"), "perWorkload");
    kv_num(&v->protocol, "warmup", proto, "warmup");
    kv_num(&v->protocol, "iterations", proto, "iterations");
    kv_str(&v->protocol, "cold L2", proto, "coldL2");
    kv_str(&v->protocol, "inputs", proto, "inputs");
    kv_num(&v->protocol, "seed", proto, "seed");
    kv_str(&v->protocol, "correctness reference", rg_json_get(proto, "correctness"), "reference");
    kv_str(&v->protocol, "comparability family", rg_json_get(proto, "comparability"), "family");
    kv_str(&v->protocol, "comparability notes", rg_json_get(proto, "comparability"), "notes");
    kv_str(&v->protocol, "protocol digest", run, "protocolDigest");

    if (cJSON_IsObject(gpu)) {
        snprintf(s, sizeof s, "%s (%s)", rg_json_str_or_empty(gpu, "product"),
                 rg_json_str_or_empty(gpu, "architecture"));
        rg_kv_add(&v->environment, "gpu", s);
        kv_str(&v->environment, "driver", gpu, "driver");
        kv_str(&v->environment, "CUDA runtime", gpu, "cudaRuntime");
    }
    kv_str(&v->environment, "cpu", rg_json_get(env, "cpu"), "model");
    kv_num(&v->environment, "cpu threads", rg_json_get(env, "cpu"), "threads");
    kv_str(&v->environment, "host", env, "hostname");
    kv_str(&v->environment, "os", env, "os");
    kv_str(&v->environment, "build", rg_json_get(env, "ropegrad"), "buildFlags");
    kv_str(&v->environment, "environment digest", run, "environmentDigest");

    kv_str(&v->artifacts, "T_SOL figures", src, "tSol");
    kv_str(&v->artifacts, "baseline", src, "baseline");
    kv_str(&v->artifacts, "suite folder", rg_json_get(run, "suite"), "dir");

    const cJSON *per = rg_json_get(sn, "perWorkload"), *cw = rg_json_get(corr, "workloads");
    if (nw > 0) {
        v->wl = calloc((size_t)nw, sizeof *v->wl);
        if (!v->wl) {
            snprintf(err, errlen, "out of memory");
            rg_model_run_free(v);
            return 2;
        }
    }
    size_t i = 0;
    for (const cJSON *t = nw > 0 ? tw->child : NULL; t; t = t->next, i++) {
        rg_wl_view *w = &v->wl[i];
        w->index = rg_json_int(t, "index");
        w->bytes = rg_json_num(t, "bytes");
        w->median = rg_json_num(t, "median");
        w->mean = rg_json_num(t, "mean");
        w->min = rg_json_num(t, "min");
        w->max = rg_json_num(t, "max");
        w->stddev = rg_json_num(t, "stddev");
        w->gbps = rg_json_num(t, "gbps");
        const cJSON *p = cJSON_GetArrayItem(per, (int)i), *c = cJSON_GetArrayItem(cw, (int)i);
        w->t_sol = rg_json_num(p, "t_sol_ns");
        w->t_b = rg_json_num(p, "t_b_ns");
        w->score = rg_json_num(p, "sol_score");
        w->speedup = rg_json_num(p, "speedup");
        const cJSON *pass = rg_json_get(c, "pass");
        w->pass = cJSON_IsBool(pass) ? cJSON_IsTrue(pass) : -1;
    }
    v->n_wl = i;

    const char *product = NULL;
    double peak = cJSON_IsObject(gpu) ? rg_datasheet_bandwidth_tbps(rg_json_str_or_empty(gpu, "product"), &product)
                                      : 0;
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
    free(v->manifest);
    memset(v, 0, sizeof *v);
}

/* Rank tables: the passed runs of a comparison group in rank order, kept
 * per (registry file, comparison key) for one registry generation. A run
 * page then ranks by binary search instead of counting its group (10,000
 * runs in the load benchmark) on every render. */
typedef struct rank_table {
    char file[4096], key[RG_DIGEST_LEN];
    int64_t gen;
    int64_t *ids;
    double *geomean;
    size_t n;
    int valid;
} rank_table;

#define RANK_TABLES 16
static rank_table rank_tables[RANK_TABLES];
static unsigned rank_next;
static pthread_mutex_t rank_mu = PTHREAD_MUTEX_INITIALIZER;

/* (geomean, id) of slot i against (x, id) in rank order. */
static int before(const rank_table *t, size_t i, double x, int64_t id)
{
    return t->geomean[i] < x || (t->geomean[i] == x && t->ids[i] < id);
}

static int rank_from_table(const rank_table *t, const rg_run_row *row, rg_run_view *v)
{
    v->group_size = (int)t->n;
    v->first_id = t->n ? t->ids[0] : 0;
    v->rank = 0;
    if (strcmp(row->status, "passed")) return 0;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(t, mid, row->geomean_ns, row->id)) lo = mid + 1;
        else hi = mid;
    }
    if (lo < t->n && t->ids[lo] == row->id) v->rank = (int)lo + 1;
    return 0;
}

static int rank_run(rg_registry *g, const rg_run_row *row, rg_run_view *v, char *err, size_t errlen)
{
    int64_t gen;
    if (rg_registry_generation(g, &gen, err, errlen)) return 2;
    const char *file = rg_registry_file(g);
    int done = 0;
    pthread_mutex_lock(&rank_mu);
    for (unsigned i = 0; i < RANK_TABLES && !done; i++) {
        rank_table *t = &rank_tables[i];
        if (t->valid && t->gen == gen && !strcmp(t->key, row->comparison_key) && !strcmp(t->file, file))
            done = !rank_from_table(t, row, v);
    }
    pthread_mutex_unlock(&rank_mu);
    if (done) return 0;
    rank_table fresh = {.gen = gen, .valid = 1};
    if (rg_registry_group_order(g, row->comparison_key, &fresh.ids, &fresh.geomean, &fresh.n, err, errlen))
        return 2;
    copy(fresh.file, sizeof fresh.file, file);
    copy(fresh.key, sizeof fresh.key, row->comparison_key);
    rank_from_table(&fresh, row, v);
    pthread_mutex_lock(&rank_mu);
    rank_table *t = NULL;
    for (unsigned i = 0; i < RANK_TABLES && !t; i++)
        if (rank_tables[i].valid && !strcmp(rank_tables[i].key, fresh.key) && !strcmp(rank_tables[i].file, file))
            t = &rank_tables[i];
    if (!t) t = &rank_tables[rank_next++ % RANK_TABLES];
    if (!t->valid || t->gen <= gen) {
        free(t->ids);
        free(t->geomean);
        *t = fresh;
        fresh.ids = NULL;
        fresh.geomean = NULL;
    }
    pthread_mutex_unlock(&rank_mu);
    free(fresh.ids);
    free(fresh.geomean);
    return 0;
}

int rg_model_run(rg_registry *g, int64_t id, rg_run_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    rg_run_row row;
    cJSON *m = NULL;
    int rc = rg_registry_get(g, id, &row, &m, err, errlen);
    if (rc) return rc;
    rc = rg_model_run_from_manifest(m, &row, v, err, errlen);
    cJSON_Delete(m);
    if (rc) return 2;
    if (rank_run(g, &row, v, err, errlen) ||
        rg_registry_notes(g, id, &v->notes, &v->n_notes, err, errlen) ||
        rg_registry_replications(g, id, &v->reps, &v->n_reps, err, errlen) ||
        rg_registry_manifest_bytes(g, id, &v->manifest, &v->manifest_len, err, errlen)) {
        rg_model_run_free(v);
        return 2;
    }
    return 0;
}

/* The speedup and cases faster of a run, from its manifest. A manifest
 * never changes once stored and its run digest names its content, so these
 * are kept by digest: a problem page of 100 rows parses each manifest once
 * per process, not once per render. */
typedef struct summary {
    char digest[RG_DIGEST_LEN];
    double x_ref, fast_count, fast_total;
} summary;

#define SUMMARY_SLOTS 8192
static summary summaries[SUMMARY_SLOTS];
static pthread_mutex_t summaries_mu = PTHREAD_MUTEX_INITIALIZER;

static unsigned summary_slot(const char *digest)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)digest; *p; p++) h = (h ^ *p) * 16777619u;
    return h % SUMMARY_SLOTS;
}

static void fill_entry(rg_registry *g, const rg_run_row *r, rg_rank_entry *e)
{
    memset(e, 0, sizeof *e);
    e->id = r->id;
    e->primary_ns = positive_or_nan(r->geomean_ns);
    e->sol = positive_or_nan(r->sol_score);
    e->x_ref = e->fast_count = e->fast_total = NAN;
    copy(e->evidence, sizeof e->evidence, r->evidence);
    copy(e->observed_at, sizeof e->observed_at, r->observed_at);
    copy(e->status, sizeof e->status, r->status);
    snprintf(e->kernel, sizeof e->kernel, "%s %s", r->backend, r->kernel_name);
    unsigned slot = summary_slot(r->run_digest);
    int known = 0;
    pthread_mutex_lock(&summaries_mu);
    if (*r->run_digest && !strcmp(summaries[slot].digest, r->run_digest)) {
        e->x_ref = summaries[slot].x_ref;
        e->fast_count = summaries[slot].fast_count;
        e->fast_total = summaries[slot].fast_total;
        known = 1;
    }
    pthread_mutex_unlock(&summaries_mu);
    if (known) return;
    cJSON *m = NULL;
    char err[256];
    if (rg_registry_get(g, r->id, NULL, &m, err, sizeof err)) return;
    const cJSON *sn = rg_json_get(rg_manifest_spec(m, "BenchmarkRun"), "sourceNative");
    e->x_ref = positive_or_nan(rg_json_num(sn, "avg_speedup"));
    double tot = rg_json_num(sn, "fast_1_total"), cnt = rg_json_num(sn, "fast_1_count");
    if (tot > 0 && isfinite(cnt)) e->fast_count = cnt, e->fast_total = tot;
    cJSON_Delete(m);
    pthread_mutex_lock(&summaries_mu);
    summary *x = &summaries[slot];
    copy(x->digest, sizeof x->digest, r->run_digest);
    x->x_ref = e->x_ref;
    x->fast_count = e->fast_count;
    x->fast_total = e->fast_total;
    pthread_mutex_unlock(&summaries_mu);
}

int rg_model_problem(rg_registry *g, const char *definition, rg_problem_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    copy(v->definition, sizeof v->definition, definition);
    rg_problem_row *pr = NULL;
    size_t npr = 0;
    rg_run_row *rows = NULL;
    size_t n = 0;
    if (rg_registry_problems(g, definition, &pr, &npr, err, errlen) ||
        rg_registry_list_problem(g, definition, RG_PROBLEM_ROWS, &rows, &n, err, errlen)) {
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
        copy(gv->primary_stat, sizeof gv->primary_stat, "geomean of per-workload medians");
        gv->runs = pr[i].runs;
        size_t cnt = 0;
        for (size_t k = 0; k < n; k++) cnt += !strcmp(rows[k].comparison_key, gv->comparison_key);
        gv->e = calloc(cnt ? cnt : 1, sizeof *gv->e);
        if (!gv->e) goto oom;
        int rank = 0;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(rows[k].comparison_key, gv->comparison_key)) continue;
            rg_rank_entry *e = &gv->e[gv->n++];
            fill_entry(g, &rows[k], e);
            e->rank = !strcmp(rows[k].status, "passed") ? ++rank : 0;
        }
    }
    free(pr);
    free(rows);
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
    for (size_t i = 0; v->groups && i < v->n_groups; i++) free(v->groups[i].e);
    free(v->groups);
    memset(v, 0, sizeof *v);
}

int rg_model_index(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    return rg_registry_problems(g, NULL, &v->rows, &v->n, err, errlen);
}

void rg_model_index_free(rg_index_view *v)
{
    free(v->rows);
    memset(v, 0, sizeof *v);
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
    size_t cap = v->a.n_wl + v->b.n_wl;
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
