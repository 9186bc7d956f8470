// SPDX-License-Identifier: Apache-2.0
// cheat_cuda.cu -- CUDA plugins for 014 that compute correctly (through the
// library's CUDA kernel) but cheat the measurement, one per CHEAT_*
// definition, and one that is honest but does extra work on a stream of its
// own, for test_gpu_reward_hack (tests/harness/reward_hack.cmake builds each variant
// when CUDA is built):
//
//   CHEAT_CACHE   results cached by input pointer: the same grad_cos address
//                 gets the first call's output back (a device-to-device copy)
//   CHEAT_LAZY    launches the kernel on its first call only, then nothing
//   CHEAT_ALIAS   also keeps its output in an input's memory (grad_cos): the
//                 C counterpart of returning a view of an input
//   CHEAT_SWITCH  launches one more (empty) kernel on every third call: the
//                 timed iterations do not all launch the same kernels
//   SIDE_STREAM   honest, plus a 256 MiB cudaMemsetAsync and a 64 MiB
//                 device-to-device cudaMemcpyAsync on a stream of its own,
//                 every call: counted in the span with --span all only
//
// and four that passed before the timed calls were checked (timed_sets.c):
//
//   CHEAT_POISON  computes only when its output starts with the correctness
//                 poison (16 bytes 0xff), else launches nothing
//   CHEAT_COUNT   counts its calls per shape: computes the first 3 (--rounds
//                 3), launches nothing on the next 7 (--warmup 2 --iterations
//                 5), computes again after (the call after the timed ones)
//   CHEAT_SCRIBBLE computes, and on an output that is not poisoned zeroes
//                 the first 64 bytes of grad_cos (put back at the start of
//                 the next call)
//   CHEAT_KEYED   results cached by a few sampled input values (16 bytes of
//                 grad_cos, grad_sin, emb and inv_freq, read back): a hit
//                 copies the cached output back without computing
#include <cuda_runtime.h>

#include <cstring>

#include "ropegrad_impl.h"

static int compute(const ropegrad_rope_backward_problem *p, cudaStream_t st) { return ropegrad_rope_backward_cuda(p, st); }

#if defined(CHEAT_CACHE) || defined(CHEAT_ALIAS) || defined(CHEAT_POISON) || defined(CHEAT_SCRIBBLE) || \
    defined(CHEAT_KEYED)
static size_t output_bytes(const ropegrad_rope_backward_problem *p)
{
    return static_cast<size_t>(p->batch_size * p->seq_len) * sizeof(float);
}
#endif

#if defined(CHEAT_CACHE)
static const void *cached_at;
static void *cached;
static size_t cached_bytes;
static int cheat(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    const size_t n = output_bytes(p);
    if (cached && cached_at == p->grad_cos && cached_bytes == n)
        return cudaMemcpyAsync(p->grad_position_ids, cached, n, cudaMemcpyDeviceToDevice, st) == cudaSuccess
                   ? ROPEGRAD_OK : ROPEGRAD_ERR_CUDA;
    int rc = compute(p, st);
    if (cached) cudaFree(cached);
    cached = nullptr;
    if (cudaMalloc(&cached, n) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    cached_at = p->grad_cos;
    cached_bytes = n;
    if (cudaMemcpyAsync(cached, p->grad_position_ids, n, cudaMemcpyDeviceToDevice, st) != cudaSuccess)
        return ROPEGRAD_ERR_CUDA;
    return rc;
}
#elif defined(CHEAT_POISON) || defined(CHEAT_SCRIBBLE)
// The output starts with the harness's correctness poison (read back: a synchronization).
static int poisoned(const ropegrad_rope_backward_problem *p, cudaStream_t st)
{
    unsigned char head[16];
    const size_t n = output_bytes(p) < sizeof head ? output_bytes(p) : sizeof head;
    if (cudaMemcpyAsync(head, p->grad_position_ids, n, cudaMemcpyDeviceToHost, st) != cudaSuccess ||
        cudaStreamSynchronize(st) != cudaSuccess)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (head[i] != 0xff) return 0;
    return 1;
}
#if defined(CHEAT_POISON)
static int cheat(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    return poisoned(p, st) ? compute(p, st) : ROPEGRAD_OK;
}
#else
static void *saved, *scribbled;
static long long scribbled_b = -1, scribbled_s = -1;
static int cheat(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    const int checked = poisoned(p, st);
    if (!saved && cudaMalloc(&saved, 64) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    if (p->batch_size != scribbled_b || p->seq_len != scribbled_s) {
        // Another workload: the last one's buffers are freed, its scribble is gone with them.
        scribbled = nullptr;
        scribbled_b = p->batch_size, scribbled_s = p->seq_len;
    }
    if (scribbled) {   // the previous call's scribble put back first
        if (cudaMemcpyAsync(scribbled, saved, 64, cudaMemcpyDeviceToDevice, st) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
        scribbled = nullptr;
    }
    int rc = compute(p, st);
    if (!checked) {
        scribbled = const_cast<void *>(p->grad_cos);
        if (cudaMemcpyAsync(saved, scribbled, 64, cudaMemcpyDeviceToDevice, st) != cudaSuccess ||
            cudaMemsetAsync(scribbled, 0, 64, st) != cudaSuccess)
            return ROPEGRAD_ERR_CUDA;
    }
    return rc;
}
#endif
#elif defined(CHEAT_COUNT)
static long long shape_b = -1, shape_s = -1;
static int calls;
static int cheat(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    if (p->batch_size != shape_b || p->seq_len != shape_s) {
        shape_b = p->batch_size, shape_s = p->seq_len;
        calls = 0;
    }
    ++calls;
    return calls > 3 && calls <= 10 ? ROPEGRAD_OK : compute(p, static_cast<cudaStream_t>(stream));
}
#elif defined(CHEAT_KEYED)
#define ENTRIES 16
struct entry {
    unsigned char key[64];
    void *out;
    size_t n;
};
static entry cache[ENTRIES];
static int next_entry;

// 16 bytes of each tensor, read back: grad_cos's first, grad_sin's middle, emb's last, inv_freq's first.
static int key_of(const ropegrad_rope_backward_problem *p, cudaStream_t st, unsigned char *key)
{
    const size_t es = p->grad_dtype == ROPEGRAD_F32 ? 4 : 2;
    const size_t n = static_cast<size_t>(p->batch_size * p->seq_len * p->head_dim);
    const void *from[4] = {p->grad_cos, static_cast<const char *>(p->grad_sin) + (n / 2) * es,
                           reinterpret_cast<const char *>(p->emb) + n * sizeof(float) - 16, p->inv_freq};
    for (int i = 0; i < 4; i++)
        if (cudaMemcpyAsync(key + 16 * i, from[i], 16, cudaMemcpyDeviceToHost, st) != cudaSuccess) return 1;
    return cudaStreamSynchronize(st) != cudaSuccess;
}

static int cheat(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    const size_t n = output_bytes(p);
    unsigned char key[64];
    if (key_of(p, st, key)) return ROPEGRAD_ERR_CUDA;
    for (int i = 0; i < ENTRIES; i++)
        if (cache[i].out && cache[i].n == n && !memcmp(cache[i].key, key, sizeof key))
            return cudaMemcpyAsync(p->grad_position_ids, cache[i].out, n, cudaMemcpyDeviceToDevice, st) == cudaSuccess
                       ? ROPEGRAD_OK : ROPEGRAD_ERR_CUDA;
    int rc = compute(p, st);
    entry *e = &cache[next_entry];
    next_entry = (next_entry + 1) % ENTRIES;
    if (e->out) cudaFree(e->out);
    e->out = nullptr;
    if (cudaMalloc(&e->out, n) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    e->n = n;
    memcpy(e->key, key, sizeof key);
    if (cudaMemcpyAsync(e->out, p->grad_position_ids, n, cudaMemcpyDeviceToDevice, st) != cudaSuccess)
        return ROPEGRAD_ERR_CUDA;
    return rc;
}
#elif defined(CHEAT_LAZY)
static int calls;
static int cheat(const void *problem, void *stream)
{
    if (++calls > 1) return ROPEGRAD_OK;
    return compute(static_cast<const ropegrad_rope_backward_problem *>(problem), static_cast<cudaStream_t>(stream));
}
#elif defined(CHEAT_ALIAS)
static int cheat(const void *problem, void *stream)
{
    const ropegrad_rope_backward_problem *p = static_cast<const ropegrad_rope_backward_problem *>(problem);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    int rc = compute(p, st);
    // The "view": the result also lives at the start of grad_cos.
    void *into = const_cast<void *>(p->grad_cos);
    if (cudaMemcpyAsync(into, p->grad_position_ids, output_bytes(p), cudaMemcpyDeviceToDevice, st) != cudaSuccess)
        return ROPEGRAD_ERR_CUDA;
    return rc;
}
#elif defined(CHEAT_SWITCH)
__global__ static void other_kernel(void) {}
static int calls;
static int cheat(const void *problem, void *stream)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    int rc = compute(static_cast<const ropegrad_rope_backward_problem *>(problem), st);
    if (++calls % 3 == 0) other_kernel<<<1, 32, 0, st>>>();
    return rc ? rc : cudaGetLastError() == cudaSuccess ? ROPEGRAD_OK : ROPEGRAD_ERR_CUDA;
}
#elif defined(SIDE_STREAM)
#define SIDE_MEMSET (256u << 20)
#define SIDE_COPY (64u << 20)
static cudaStream_t side;
static char *scratch;
static int cheat(const void *problem, void *stream)
{
    int rc = compute(static_cast<const ropegrad_rope_backward_problem *>(problem), static_cast<cudaStream_t>(stream));
    if (!side && cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    if (!scratch && cudaMalloc(&scratch, SIDE_MEMSET) != cudaSuccess) return ROPEGRAD_ERR_CUDA;
    if (cudaMemsetAsync(scratch, 0, SIDE_MEMSET, side) != cudaSuccess ||
        cudaMemcpyAsync(scratch + SIDE_COPY, scratch, SIDE_COPY, cudaMemcpyDeviceToDevice, side) != cudaSuccess)
        return ROPEGRAD_ERR_CUDA;
    return rc;
}
#endif

static const ropegrad_impl descriptor = {
    ROPEGRAD_IMPL_ABI_VERSION,
#if defined(SIDE_STREAM)
    "side-stream",
#else
    "cheat-cuda",
#endif
    "1",
    "014_rotary_embedding_with_attention_scaling_backward",
    cheat,
    nullptr,
};

extern "C" const ropegrad_impl *ropegrad_impl_descriptor(void)
{
    return &descriptor;
}
