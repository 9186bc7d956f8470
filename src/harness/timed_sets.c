/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timed_sets.c -- what the timed iterations of both backends (run.c,
 * run_cuda.c) are checked with: several input sets to rotate over, a fill
 * that changes from call to call, which iterations are checked, and the check.
 *
 * Input sets. The timed iterations (warmup included) rotate over n sets:
 * call `it` gets set it mod n. Set j is made by the op's generator with seed
 * rg_round_seed(seed, rounds + j): values no correctness round saw, and not
 * round 0's. Every odd set is the near twin of the set before it: set j-1's
 * bytes with a sparse random part (each 64-byte chunk with probability 1/32,
 * at least one chunk) taken from set j's own fresh values instead. A cache
 * keyed on a few sampled input values then serves set j-1's output for set j
 * and fails its check, and a cache that reads every input value costs as
 * much as the work. Each set keeps its ground truth (the run's
 * --ground-truth), computed when a checked call first needs it. n = min(RG_TIMED_SETS_MAX, the sets that
 * fit RG_TIMED_SETS_HOST_BUDGET (inputs plus the float64 truth) and, on a
 * GPU, RG_TIMED_SETS_DEVICE_BUDGET (inputs)), rounded down to an even
 * number, at least 2.
 *
 * The fill. Before every timed call (outside the timed span, before the
 * cache flush) the output is overwritten with a window of a buffer of random
 * 16-bit words, each a NaN or a finite value beyond 2^125 in bfloat16 and in
 * the high half of a float32 (never the correctness poison 0xffff): a call
 * that writes nothing leaves values no check accepts, and the window starts
 * at another offset every call, so the output never holds the same bytes
 * twice in a row nor the rounds' 0xff poison.
 *
 * The checks. Of every window of RG_TIMED_CHECK_WINDOW timed iterations one,
 * drawn at random (a key drawn from the system per workload, not from the
 * seed), is checked, and always the last: right after the call returns its
 * output is copied aside, then its inputs are compared with its set's bytes
 * and the copy is checked against the set's ground truth like a correctness
 * round. After the timed loop every set's inputs are compared again (a write
 * into an input during an unchecked call). Any mismatch fails the workload
 * as REWARD_HACK.
 */
#define _DEFAULT_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run_internal.h"

#define RG_TWIN_CHUNK 64
#define RG_TWIN_ODDS 32
#define RG_FILL_SLACK 4096
#define RG_FILL_STEP 16

/* A key from the system's entropy, else the clock and the process. */
static uint64_t draw_key(void)
{
    uint64_t k = 0;
    if (getentropy(&k, sizeof k)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid();
    }
    return rg_mix64(k);
}

static size_t inputs_bytes(const rg_tensors *t)
{
    size_t n = 0;
    for (int k = 0; k < t->n_in; k++) n += t->in_bytes[k];
    return n;
}

/* How many sets fit the budgets: even, 2..RG_TIMED_SETS_MAX. */
static int set_count(const rg_tensors *in, int device)
{
    const size_t ins = inputs_bytes(in) ? inputs_bytes(in) : 1;
    const size_t host = ins + (size_t)in->n_out * sizeof(double);
    size_t n = RG_TIMED_SETS_HOST_BUDGET / host;
    if (device && RG_TIMED_SETS_DEVICE_BUDGET / ins < n) n = RG_TIMED_SETS_DEVICE_BUDGET / ins;
    if (n > RG_TIMED_SETS_MAX) n = RG_TIMED_SETS_MAX;
    n &= ~(size_t)1;
    return n < 2 ? 2 : (int)n;
}

/* Set j (odd) becomes its predecessor p with a sparse random part of its own
 * fresh values kept: each 64-byte chunk with odds 1/RG_TWIN_ODDS, else one
 * chunk drawn from all of them. */
static void make_twin(const rg_tensors *p, rg_tensors *t, uint64_t seed, int w)
{
    size_t total = 0, drawn = 0;
    for (int k = 0; k < t->n_in; k++) {
        const uint64_t key = rg_stream_key(seed, w, 5 + k);
        const size_t chunks = (t->in_bytes[k] + RG_TWIN_CHUNK - 1) / RG_TWIN_CHUNK;
        for (size_t c = 0; c < chunks; c++) drawn += rg_uniform_at(key, (int64_t)c) * RG_TWIN_ODDS < 1.0;
        total += chunks;
    }
    const size_t forced = drawn || !total ? (size_t)-1 : (size_t)(rg_mix64(seed) % total);
    size_t index = 0;
    for (int k = 0; k < t->n_in; k++) {
        const uint64_t key = rg_stream_key(seed, w, 5 + k);
        const size_t chunks = (t->in_bytes[k] + RG_TWIN_CHUNK - 1) / RG_TWIN_CHUNK;
        for (size_t c = 0; c < chunks; c++, index++) {
            if (index == forced || rg_uniform_at(key, (int64_t)c) * RG_TWIN_ODDS < 1.0) continue;
            const size_t at = c * RG_TWIN_CHUNK, left = t->in_bytes[k] - at;
            memcpy((char *)t->in[k] + at, (const char *)p->in[k] + at, left < RG_TWIN_CHUNK ? left : RG_TWIN_CHUNK);
        }
    }
}

void rg_timed_sets_close(rg_timed_sets *ts)
{
    if (!ts) return;
    for (int j = 0; j < RG_TIMED_SETS_MAX; j++) {
        rg_tensors_free(&ts->set[j]);
        free(ts->ref[j]);
    }
    free(ts->fill);
    free(ts->snap);
    memset(ts, 0, sizeof *ts);
}

/* The fill buffer: random words, each NaN or beyond 2^125, never 0xffff. */
static void make_fill(rg_timed_sets *ts)
{
    uint64_t s = ts->key;
    uint16_t *w = (uint16_t *)ts->fill;
    const size_t n = ts->fill_bytes / 2;
    for (size_t i = 0; i < n; i++) {
        if (!(i & 3)) s = rg_mix64(s + 0x9e3779b97f4a7c15ull);
        uint16_t v = (uint16_t)(0x7e00u | ((s >> (16 * (i & 3))) & 0x81ffu));
        w[i] = v == 0xffffu ? 0xfffeu : v;
    }
}

int rg_timed_sets_open(const rg_op *op, const rg_workload *w, const rg_run_options *o, const rg_tensors *in,
                       int device, rg_timed_sets *ts, char *err, size_t errlen)
{
    memset(ts, 0, sizeof *ts);
    ts->n = set_count(in, device);
    ts->warmup = o->warmup;
    ts->iterations = o->iterations;
    ts->key = draw_key();
    ts->out_bytes = in->out_bytes;
    ts->fill_bytes = ((in->out_bytes + 1) & ~(size_t)1) + RG_FILL_SLACK;
    ts->fill = rg_alloc64(ts->fill_bytes);
    ts->snap = rg_alloc64(in->out_bytes);
    if (!ts->fill || !ts->snap) {
        snprintf(err, errlen, "workload %d: out of memory for the timed checks", w->index);
        rg_timed_sets_close(ts);
        return 1;
    }
    make_fill(ts);
    const int rounds = o->rounds > 0 ? o->rounds : 1;
    for (int j = 0; j < ts->n; j++) {
        rg_tensors *t = &ts->set[j];
        const uint64_t seed = rg_round_seed(o->seed, rounds + j);
        if (op->make(w, in->dtype, (int)o->inputs, seed, t, err, errlen)) {
            rg_timed_sets_close(ts);
            return 1;
        }
        int same = t->n_in == in->n_in && t->out_bytes == in->out_bytes;
        for (int k = 0; same && k < t->n_in; k++) same = t->in_bytes[k] == in->in_bytes[k];
        if (!same) {
            snprintf(err, errlen, "workload %d: timed input set %d has other sizes", w->index, j);
            rg_timed_sets_close(ts);
            return 1;
        }
        if (j & 1) make_twin(&ts->set[j - 1], t, seed, w->index);
        for (int k = 0; k < t->n_in; k++) ts->in_hash[j][k] = rg_hash_bytes(t->in[k], t->in_bytes[k], (uint64_t)k);
    }
    ts->truth = o->ground_truth;
    return 0;
}

int rg_timed_set(const rg_timed_sets *ts, int it) { return it % ts->n; }

int rg_timed_checked(const rg_timed_sets *ts, int it)
{
    const int i = it - ts->warmup;
    if (i < 0 || i >= ts->iterations) return 0;
    if (i == ts->iterations - 1) return 1;
    const int window = i / RG_TIMED_CHECK_WINDOW, start = window * RG_TIMED_CHECK_WINDOW;
    const int len = ts->iterations - start < RG_TIMED_CHECK_WINDOW ? ts->iterations - start : RG_TIMED_CHECK_WINDOW;
    return i - start == (int)(rg_mix64(ts->key ^ (uint64_t)(window + 1)) % (uint64_t)len);
}

size_t rg_timed_fill_offset(const rg_timed_sets *ts, int it)
{
    return (size_t)(rg_mix64(ts->key + 0x632be59bd9b4e019ull * (uint64_t)(it + 1)) % (RG_FILL_SLACK / RG_FILL_STEP)) *
           RG_FILL_STEP;
}

void rg_timed_fill(const rg_timed_sets *ts, int it, void *out)
{
    memcpy(out, ts->fill + rg_timed_fill_offset(ts, it), ts->out_bytes);
}

/* "timed iteration i of n" for call it. */
static void iteration_name(const rg_timed_sets *ts, int it, char *dst, size_t n)
{
    snprintf(dst, n, "timed iteration %d of %d", it - ts->warmup, ts->iterations);
}

int rg_timed_inputs_intact(const rg_op *op, const rg_timed_sets *ts, int it, int set, const rg_tensors *after,
                           rg_workload_result *wr)
{
    for (int k = 0; k < after->n_in; k++) {
        if (rg_hash_bytes(after->in[k], after->in_bytes[k], (uint64_t)k) == ts->in_hash[set][k]) continue;
        char why[160], name[48];
        if (it < 0) snprintf(name, sizeof name, "a timed call");
        else iteration_name(ts, it, name, sizeof name);
        snprintf(why, sizeof why, "%s wrote into its input %.30s (input set %d)", name, op->inputs[k].name, set);
        rg_reward_hack(wr, why);
        return RG_CALL_FAILED;
    }
    return RG_CALL_OK;
}

int rg_timed_check(const rg_op *op, const rg_workload *w, rg_timed_sets *ts, int it, const void *out,
                   const rg_tensors *after, rg_workload_result *wr)
{
    const int set = rg_timed_set(ts, it);
    if (after && rg_timed_inputs_intact(op, ts, it, set, after, wr)) return RG_CALL_FAILED;
    if (!ts->ref[set]) {   /* the set's ground truth, made when first needed */
        double *ref = malloc((size_t)ts->set[set].n_out * sizeof *ref);
        if (!ref || rg_ground_truth_reference(op, &ts->set[set], ts->truth, ref)) {
            free(ref);
            return RG_CALL_SYSTEM;
        }
        ts->ref[set] = ref;
    }
    rg_check c;
    memset(&c, 0, sizeof c);
    if (rg_check_op_output(op, out, ts->set[set].n_out, ts->ref[set], w, &c)) return RG_CALL_SYSTEM;
    if (c.pass) return RG_CALL_OK;
    char why[192], name[48];
    iteration_name(ts, it, name, sizeof name);
    snprintf(why, sizeof why, "%s does not match the reference (input set %d: %.60s)", name, set, c.reason);
    rg_reward_hack(wr, why);
    return RG_CALL_FAILED;
}
