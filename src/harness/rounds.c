/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rounds.c -- correctness over N rounds of fresh seeded inputs and the
 * reward-hack checks around every call, for both backends (run_internal.h:
 * the CPU path calls the op in place; run_cuda.c hands in a rg_round_io that
 * stages the inputs into device buffers and copies the output and the inputs
 * back).
 *
 * Round r's inputs are the op's generator with seed + r * 0x9E3779B97F4A7C15
 * (mod 2^64; round 0 is the run's seed, the inputs the protocol always used),
 * written into the SAME buffers every round (host buffers on the CPU, the
 * same device buffers on a GPU), so an implementation that keys anything on
 * the input pointers sees new values behind old addresses. The output is
 * poisoned (all bytes 0xff: NaN) before every call. After each call:
 *
 *   - the output still all poison: the call wrote nothing          REWARD_HACK
 *   - an input's bytes changed: the call wrote into its input (where a
 *     tensor API would return a view of an input, a C plugin can only keep
 *     its output in the input's memory)                               REWARD_HACK
 *   - the output bit-identical to the previous round's while the inputs
 *     differ: results served from a cache (e.g. keyed by input pointer) REWARD_HACK
 *   - the protocol's check against the ground truth                 as before
 *
 * A call that fails with an error text beginning "REWARD_HACK: " (an
 * in-process implementation's own check, python/ropegrad/impl.py: a returned
 * output that is a view of an input) fails as a reward hack too.
 *
 * The timed iterations themselves are filled and checked too, over input
 * sets of their own (timed_sets.c). After them one more call on the round-0
 * inputs, output poisoned, must pass the check again: an implementation that
 * stops computing after its first calls (a lazy or skipped call) is caught
 * (it is made also when a timed call failed, before the timed buffers are
 * freed, and the first failure's reason stands). The
 * first failure ends the workload; the check kept is the failing round's, or
 * the worst of all rounds (largest errors, smallest matched ratio).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

#define RG_ROUND_SEED_STEP 0x9E3779B97F4A7C15ULL
#define RG_HACK_PREFIX "REWARD_HACK: "

uint64_t rg_round_seed(uint64_t seed, int round) { return seed + (uint64_t)round * RG_ROUND_SEED_STEP; }

/* A 64-bit digest of n bytes (word-wise multiply-xorshift; not cryptographic). */
uint64_t rg_hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 0x100000001B3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ULL;
    return h ^ (h >> 32);
}

static uint64_t input_hash(const rg_tensors *in, int k)
{
    return rg_hash_bytes(in->in[k], in->in_bytes[k], 0xcbf29ce484222325ULL + (uint64_t)k);
}

static int all_poison(const void *out, size_t n)
{
    const unsigned char *b = out;
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0xff) return 0;
    return n > 0;
}

void rg_reward_hack(rg_workload_result *wr, const char *why)
{
    wr->check.pass = 0;
    wr->reward_hack = 1;
    snprintf(wr->check.reason, sizeof wr->check.reason, RG_HACK_PREFIX "%.110s", why);
}

/* "round r", or what the call after the timed iterations is called. */
static const char *call_name(int r, char *buf, size_t n)
{
    if (r < 0) return "the call after the timed iterations";
    snprintf(buf, n, "round %d", r);
    return buf;
}

void rg_call_failed(const rg_op *op, const char *backend, int rc, int r, rg_workload_result *wr)
{
    const char *text = rg_op_error_text(op, rc);
    if (text && !strncmp(text, RG_HACK_PREFIX, strlen(RG_HACK_PREFIX))) {
        char why[128], name[32];
        snprintf(why, sizeof why, "%s: %.90s", call_name(r, name, sizeof name), text + strlen(RG_HACK_PREFIX));
        rg_reward_hack(wr, why);
        return;
    }
    wr->check.pass = 0;
    snprintf(wr->check.reason, sizeof wr->check.reason, "op %s %s: %s%s", op->id, backend, text,
             r > 0 ? " (in a later correctness round)" : "");
}

void rg_timed_call_failed(const rg_op *op, const char *backend, const char *what, int rc, rg_workload_result *wr)
{
    const char *text = rg_op_error_text(op, rc);
    if (text && !strncmp(text, RG_HACK_PREFIX, strlen(RG_HACK_PREFIX))) {
        char why[128];
        snprintf(why, sizeof why, "a call (%s): %.90s", what, text + strlen(RG_HACK_PREFIX));
        rg_reward_hack(wr, why);
        return;
    }
    wr->check.pass = 0;
    snprintf(wr->check.reason, sizeof wr->check.reason, "op %s %s (%s): %s", op->id, backend, what, text);
}

/* The worst of two rounds' checks into acc. */
static void merge(rg_check *acc, const rg_check *c)
{
    acc->max_abs_err = fmax(acc->max_abs_err, c->max_abs_err);
    acc->max_rel_err = fmax(acc->max_rel_err, c->max_rel_err);
    acc->matched_ratio = fmin(acc->matched_ratio, c->matched_ratio);
    acc->n_nonfinite = acc->n_nonfinite > c->n_nonfinite ? acc->n_nonfinite : c->n_nonfinite;
    acc->n_abs_only = acc->n_abs_only > c->n_abs_only ? acc->n_abs_only : c->n_abs_only;
}

/* Round r's inputs written into in's host buffers (addresses kept), then
 * staged where the call reads them. 0, or 1 with a message. */
static int regenerate(const rg_op *op, const rg_workload *w, const rg_run_options *o, int r, rg_tensors *in,
                      const rg_round_io *io, char *err, size_t errlen)
{
    rg_tensors t;
    if (op->make(w, in->dtype, (int)o->inputs, rg_round_seed(o->seed, r), &t, err, errlen)) return 1;
    int same = t.n_in == in->n_in;
    for (int k = 0; same && k < t.n_in; k++) same = t.in_bytes[k] == in->in_bytes[k];
    if (same)
        for (int k = 0; k < t.n_in; k++) memcpy(in->in[k], t.in[k], t.in_bytes[k]);
    in->attention_scaling = t.attention_scaling;
    rg_tensors_free(&t);
    if (!same) {
        snprintf(err, errlen, "workload %d: round %d's inputs have other sizes", w->index, r);
        return 1;
    }
    return io->stage ? io->stage(io->ctx, in, err, errlen) : 0;
}

/* What one_round remembers between rounds. */
typedef struct round_state {
    uint64_t in_hash[RG_OP_MAX_TENSORS], prev_in_hash, prev_out_hash;
    int have_prev;
} round_state;

/* The guards after round r's call: 0 none tripped, RG_CALL_FAILED one did (wr says which). */
static int guards(const rg_op *op, int r, const rg_tensors *in, const void *out, const rg_tensors *after,
                  uint64_t all_in, round_state *st, rg_workload_result *wr)
{
    char why[128];
    if (all_poison(out, in->out_bytes)) {
        snprintf(why, sizeof why, "round %d: the call wrote no output (a skipped or lazy call)", r);
        rg_reward_hack(wr, why);
        return RG_CALL_FAILED;
    }
    for (int k = 0; k < in->n_in; k++)
        if (input_hash(after, k) != st->in_hash[k]) {
            snprintf(why, sizeof why, "round %d: the call wrote into its input %.30s", r, op->inputs[k].name);
            rg_reward_hack(wr, why);
            return RG_CALL_FAILED;
        }
    uint64_t out_hash = rg_hash_bytes(out, in->out_bytes, 0);
    if (st->have_prev && out_hash == st->prev_out_hash && all_in != st->prev_in_hash) {
        snprintf(why, sizeof why, "round %d: output bit-identical to round %d's, inputs differ (a cache)", r, r - 1);
        rg_reward_hack(wr, why);
        return RG_CALL_FAILED;
    }
    st->prev_out_hash = out_hash;
    st->prev_in_hash = all_in;
    st->have_prev = 1;
    return 0;
}

/* One call with a poisoned output, the guards around it and the check into
 * c (*out: the output's host bytes): 0 checked, 1 a system error (err), else
 * the workload failed (wr->check says why: the op returned an error, a guard
 * tripped, the GPU was lost). */
static int one_round(const rg_op *op, const rg_workload *w, const rg_tensors *in, const double *ref, int r,
                     const rg_round_io *io, round_state *st, rg_workload_result *wr, rg_check *c, const void **out,
                     char *err, size_t errlen)
{
    uint64_t all_in = 0;
    for (int k = 0; k < in->n_in; k++) all_in ^= st->in_hash[k] = input_hash(in, k);
    const rg_tensors *after = NULL;
    int rc = io->call(io->ctx, r, out, &after, wr, err, errlen);
    if (rc) return rc;
    if (guards(op, r, in, *out, after, all_in, st, wr)) return RG_CALL_FAILED;
    if (rg_check_op_output(op, *out, in->n_out, ref, w, c)) {
        snprintf(err, errlen, "workload %d: out of memory", w->index);
        return 1;
    }
    return 0;
}

/* Round 0's output against float64 when the ground truth is not float64. */
static int yardstick(const rg_op *op, const rg_workload *w, const rg_tensors *in, const void *out,
                     rg_workload_result *wr)
{
    double *ref = malloc((size_t)in->n_out * sizeof *ref);
    if (!ref) return 1;
    int rc = op->reference_fn(in, ref) ? 0 : rg_check_op_output(op, out, in->n_out, ref, w, &wr->yardstick);
    wr->have_yardstick = rc == 0;
    free(ref);
    return rc;
}

/* Round r's ground truth into ref (round 0: ref0 copied). 0, or 1 with a message. */
static int round_truth(const rg_op *op, const rg_workload *w, const rg_run_options *o, const rg_tensors *in, int r,
                       double *ref, char *err, size_t errlen)
{
    int rc = rg_ground_truth_reference(op, in, o->ground_truth, ref);
    if (rc) snprintf(err, errlen, "workload %d: round %d reference: %s", w->index, r, ropegrad_strerror(rc));
    return rc != 0;
}

/* Folds round r's check c into wr: 0 go on, 1 stop (it failed). */
static int keep_round(int r, int rounds, const rg_check *c, rg_workload_result *wr)
{
    wr->rounds_run = r + 1;
    if (r == 0) wr->check = *c;
    else merge(&wr->check, c);
    if (!c->pass) {
        wr->check.pass = 0;
        snprintf(wr->check.reason, sizeof wr->check.reason, "%s%.100s", r ? "in a later round: " : "", c->reason);
        return 1;
    }
    wr->check.pass = r == rounds - 1;
    return 0;
}

int rg_correctness_rounds(const rg_op *op, const rg_workload *w, const rg_run_options *o, rg_tensors *in,
                          const double *ref0, const rg_round_io *io, rg_workload_result *wr, char *err, size_t errlen)
{
    round_state st;
    memset(&st, 0, sizeof st);
    memset(&wr->check, 0, sizeof wr->check);
    wr->rounds_run = 0;
    const int rounds = o->rounds > 0 ? o->rounds : 1;
    double *ref = rounds > 1 ? malloc((size_t)in->n_out * sizeof *ref) : NULL;
    if (rounds > 1 && !ref) {
        snprintf(err, errlen, "workload %d: out of memory in the correctness rounds", w->index);
        return 1;
    }
    int rc = 0;
    for (int r = 0; r < rounds && !rc; r++) {
        if (r > 0 && (regenerate(op, w, o, r, in, io, err, errlen) || round_truth(op, w, o, in, r, ref, err, errlen))) {
            rc = 1;
            break;
        }
        rg_check c;
        memset(&c, 0, sizeof c);
        const void *out = NULL;
        int g = one_round(op, w, in, r ? ref : ref0, r, io, &st, wr, &c, &out, err, errlen);
        if (g) {
            rc = g == RG_CALL_SYSTEM;
            break;
        }
        if (r == 0 && o->ground_truth != RG_TRUTH_FLOAT64 && yardstick(op, w, in, out, wr)) {
            snprintf(err, errlen, "workload %d: out of memory in the correctness rounds", w->index);
            rc = 1;
        }
        if (!rc && keep_round(r, rounds, &c, wr)) break;
    }
    free(ref);
    if (rc) return 1;
    /* The timed iterations and the call after them see round 0's inputs again. */
    return wr->check.pass && rounds > 1 ? regenerate(op, w, o, 0, in, io, err, errlen) : 0;
}

/* A workload that failed after it was timed carries no timing. */
static void drop_timing(rg_workload_result *wr)
{
    free(wr->samples_ns);
    wr->samples_ns = NULL;
    wr->n_samples = 0;
    wr->timed = 0;
    wr->time_ns.mean = wr->time_ns.median = wr->time_ns.min = wr->time_ns.max = wr->time_ns.stddev = NAN;
    wr->gbps = NAN;
}

int rg_after_timing(const rg_op *op, const rg_workload *w, const rg_tensors *in, const double *ref,
                    const rg_round_io *io, rg_workload_result *wr, char *err, size_t errlen)
{
    rg_check c;
    memset(&c, 0, sizeof c);
    const void *out = NULL;
    const rg_tensors *after = NULL;
    if (!wr->check.pass) {   /* failed already (timed): the call is made, the first reason stands */
        rg_check keep = wr->check;
        int rc = io->call(io->ctx, -1, &out, &after, wr, err, errlen);
        wr->check = keep;
        drop_timing(wr);
        return rc == RG_CALL_SYSTEM;
    }
    int rc = io->call(io->ctx, -1, &out, &after, wr, err, errlen);
    if (rc == RG_CALL_SYSTEM) return 1;
    if (rc == RG_CALL_LOST) {   /* the GPU was lost: the call's reason stands, not a reward hack */
        drop_timing(wr);
        return 0;
    }
    if (!rc && rg_check_op_output(op, out, in->n_out, ref, w, &c)) {
        snprintf(err, errlen, "workload %d: out of memory", w->index);
        return 1;
    }
    if (!rc && c.pass) return 0;
    drop_timing(wr);
    rg_reward_hack(wr, rc ? "the call after the timed iterations returned an error: it does not run every call"
                          : "the call after the timed iterations fails the check: it does not compute every call");
    return 0;
}

/* ---- the CPU backend's calls: in place, the inputs are the host buffers ---------------- */

typedef struct cpu_round_ctx {
    const rg_op *op;
    const rg_tensors *in;
    void *out;
    int threads;
} cpu_round_ctx;

static int cpu_round_call(void *ctx, int r, const void **out, const rg_tensors **after, rg_workload_result *wr,
                          char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    const cpu_round_ctx *x = ctx;
    memset(x->out, 0xff, x->in->out_bytes);   /* all NaN: a kernel that skips an element fails */
    int rc = x->op->cpu(x->in, x->out, x->threads);
    if (!rc && x->op->finish) rc = x->op->finish(x->in, x->out, NULL);   /* outside any timing */
    if (rc) {
        rg_call_failed(x->op, "cpu", rc, r, wr);
        return RG_CALL_FAILED;
    }
    *out = x->out;
    *after = x->in;
    return 0;
}

int rg_cpu_correctness(const rg_op *op, const rg_workload *w, const rg_run_options *o, rg_tensors *in, void *out,
                       const double *ref0, rg_workload_result *wr, char *err, size_t errlen)
{
    cpu_round_ctx x = {op, in, out, o->threads};
    const rg_round_io io = {NULL, cpu_round_call, &x};
    return rg_correctness_rounds(op, w, o, in, ref0, &io, wr, err, errlen);
}

int rg_cpu_after_timing(const rg_op *op, const rg_workload *w, const rg_tensors *in, void *out, const double *ref,
                        int threads, rg_workload_result *wr)
{
    char err[RG_ERRLEN];
    cpu_round_ctx x = {op, in, out, threads};
    const rg_round_io io = {NULL, cpu_round_call, &x};
    return rg_after_timing(op, w, in, ref, &io, wr, err, sizeof err);
}
