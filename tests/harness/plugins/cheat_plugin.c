/* SPDX-License-Identifier: Apache-2.0 */
/* cheat_plugin.c -- plugins that compute 014 correctly (through the library's
 * CPU path) but cheat the measurement, one per CHEAT_* definition, for
 * test_reward_hack (tests/harness/reward_hack.cmake builds each variant):
 *
 *   CHEAT_CACHE   results cached by input pointer: the same grad_cos address
 *                 gets the first call's output back, whatever the values
 *   CHEAT_LAZY    computes on its first call only, then returns at once
 *   CHEAT_ALIAS   keeps its output in an input's memory (grad_cos), the C
 *                 counterpart of returning a view of an input
 *   CHEAT_STOP    computes on its first 3 calls only (the correctness calls
 *                 of --rounds 3), then returns at once: fast when timed
 *
 * and five that passed before the timed calls were checked (timed_sets.c):
 *
 *   CHEAT_POISON  computes only when its output holds the correctness
 *                 poison (every byte 0xff), else returns at once
 *   CHEAT_COUNT   counts its calls per shape: computes the first 3 (--rounds
 *                 3), returns at once on the next 4 (--warmup 1 --iterations
 *                 3), computes again after (the call after the timed ones)
 *   CHEAT_THREAD  computes at once on a poisoned output, else returns at
 *                 once and leaves the work to a thread of its own, whose
 *                 result the next call copies into the output
 *   CHEAT_SCRIBBLE computes, and on an output that is not poisoned zeroes
 *                 the first 64 bytes of grad_cos (put back at the start of
 *                 the next call, so the checked calls see intact inputs)
 *   CHEAT_KEYED   results cached by a few sampled input values (16 bytes of
 *                 grad_cos, grad_sin, emb and inv_freq): a hit copies the
 *                 cached output back without computing
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ropegrad.h"
#include "ropegrad_impl.h"

static int compute(const ropegrad_rope_backward_problem *p) { return ropegrad_rope_backward_cpu(p, 1); }

#if defined(CHEAT_CACHE)
static const void *cached_at;
static float *cached;
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    const ropegrad_rope_backward_problem *p = problem;
    const size_t n = (size_t)(p->batch_size * p->seq_len) * sizeof(float);
    if (cached && cached_at == p->grad_cos) {
        memcpy(p->grad_position_ids, cached, n);
        return ROPEGRAD_OK;
    }
    int rc = compute(p);
    free(cached);
    cached = malloc(n);
    if (!cached) return ROPEGRAD_ERR_OUT_OF_MEMORY;
    memcpy(cached, p->grad_position_ids, n);
    cached_at = p->grad_cos;
    return rc;
}
#elif defined(CHEAT_LAZY) || defined(CHEAT_STOP)
#if defined(CHEAT_LAZY)
#define WORKING_CALLS 1
#else
#define WORKING_CALLS 3
#endif
static int calls;
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    return ++calls > WORKING_CALLS ? ROPEGRAD_OK : compute(problem);
}
#elif defined(CHEAT_ALIAS)
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    const ropegrad_rope_backward_problem *p = problem;
    int rc = compute(p);
    /* The "view": the result also lives at the start of grad_cos. */
    memcpy((void *)(uintptr_t)p->grad_cos, p->grad_position_ids, (size_t)(p->batch_size * p->seq_len) * sizeof(float));
    return rc;
}
#elif defined(CHEAT_POISON) || defined(CHEAT_THREAD) || defined(CHEAT_SCRIBBLE)
static size_t output_bytes(const ropegrad_rope_backward_problem *p)
{
    return (size_t)(p->batch_size * p->seq_len) * sizeof(float);
}

/* The output holds the harness's correctness poison. */
static int poisoned(const ropegrad_rope_backward_problem *p)
{
    const unsigned char *b = (const unsigned char *)p->grad_position_ids;
    const size_t n = output_bytes(p);
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0xff) return 0;
    return 1;
}
#if defined(CHEAT_POISON)
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    return poisoned(problem) ? compute(problem) : ROPEGRAD_OK;
}
#elif defined(CHEAT_THREAD)
#include <pthread.h>
static pthread_t worker;
static int running;
static ropegrad_rope_backward_problem pending;   /* the call the thread computes, into `result` */
static float *result;
static void *result_to;                          /* where the result goes when the thread is joined */
static size_t result_bytes;

static void *work(void *arg)
{
    (void)arg;
    compute(&pending);
    return NULL;
}

static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    const ropegrad_rope_backward_problem *p = problem;
    const int checked = poisoned(p);
    if (running) {   /* the previous call's work lands now */
        pthread_join(worker, NULL);
        running = 0;
        memcpy(result_to, result, result_bytes);
    }
    if (checked) return compute(p);
    free(result);
    result_bytes = output_bytes(p);
    if (!(result = malloc(result_bytes))) return ROPEGRAD_ERR_OUT_OF_MEMORY;
    pending = *p;
    pending.grad_position_ids = result;
    result_to = p->grad_position_ids;
    running = pthread_create(&worker, NULL, work, NULL) == 0;
    return running ? ROPEGRAD_OK : compute(p);
}
#else
static unsigned char saved[64];
static void *scribbled;
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    const ropegrad_rope_backward_problem *p = problem;
    const int checked = poisoned(p);
    if (scribbled) {   /* the previous call's scribble put back first */
        memcpy(scribbled, saved, sizeof saved);
        scribbled = NULL;
    }
    int rc = compute(p);
    if (!checked) {
        scribbled = (void *)(uintptr_t)p->grad_cos;
        memcpy(saved, scribbled, sizeof saved);
        memset(scribbled, 0, sizeof saved);
    }
    return rc;
}
#endif
#elif defined(CHEAT_COUNT)
static int64_t shape_b = -1, shape_s = -1;
static int calls;
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    const ropegrad_rope_backward_problem *p = problem;
    if (p->batch_size != shape_b || p->seq_len != shape_s) {
        shape_b = p->batch_size, shape_s = p->seq_len;
        calls = 0;
    }
    ++calls;
    return calls > 3 && calls <= 7 ? ROPEGRAD_OK : compute(p);
}
#elif defined(CHEAT_KEYED)
#define ENTRIES 16
typedef struct entry {
    unsigned char key[64];
    float *out;
    size_t n;
} entry;
static entry cache[ENTRIES];
static int next;

/* 16 bytes of each tensor: grad_cos's first, grad_sin's middle, emb's last, inv_freq's first. */
static void key_of(const ropegrad_rope_backward_problem *p, unsigned char *key)
{
    const size_t es = p->grad_dtype == ROPEGRAD_F32 ? 4 : 2, n = (size_t)(p->batch_size * p->seq_len * p->head_dim);
    memcpy(key, p->grad_cos, 16);
    memcpy(key + 16, (const char *)p->grad_sin + (n / 2) * es, 16);
    memcpy(key + 32, (const char *)p->emb + n * sizeof(float) - 16, 16);
    memcpy(key + 48, p->inv_freq, 16);
}

static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    const ropegrad_rope_backward_problem *p = problem;
    const size_t n = (size_t)(p->batch_size * p->seq_len);
    unsigned char key[64];
    key_of(p, key);
    for (int i = 0; i < ENTRIES; i++)
        if (cache[i].out && cache[i].n == n && !memcmp(cache[i].key, key, sizeof key)) {
            memcpy(p->grad_position_ids, cache[i].out, n * sizeof(float));
            return ROPEGRAD_OK;
        }
    int rc = compute(p);
    entry *e = &cache[next];
    next = (next + 1) % ENTRIES;
    free(e->out);
    e->out = malloc(n * sizeof(float));
    e->n = n;
    if (!e->out) return ROPEGRAD_ERR_OUT_OF_MEMORY;
    memcpy(e->key, key, sizeof key);
    memcpy(e->out, p->grad_position_ids, n * sizeof(float));
    return rc;
}
#endif

static const ropegrad_impl descriptor = {ROPEGRAD_IMPL_ABI_VERSION, "cheat", "1",
                                         "014_rotary_embedding_with_attention_scaling_backward", NULL, cheat};

const ropegrad_impl *ropegrad_impl_descriptor(void) { return &descriptor; }
