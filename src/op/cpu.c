/* SPDX-License-Identifier: Apache-2.0 */
/* cpu.c -- what every op's CPU path shares: OpenMP threading
 * (rg_cpu_parallel_rows), the run-time ISA choice (rg_cpu_isa_chosen), and
 * the forward ops' sin/cos primitive per ISA (rg_sincos_bf16_row).
 *
 * Every output row b*S+s is independent, so rows are split into chunks and
 * the chunks shared out with a static OpenMP schedule (each thread gets one
 * contiguous run of memory to stream through). Within a row the work is done
 * by a kernel chosen once per process from what the CPU supports:
 *
 *   avx512    cpu_sincos_avx512.c  16 lanes, core16 / Sleef_sincosf16_u10avx512f
 *   avx2      cpu_sincos_avx2.c     8 lanes, core8 / Sleef_sincosf8_u10avx2
 *   portable  below                 scalar, rg_sincos_core1 / Sleef_sincosf_u10
 *
 * (014's row kernels follow the same choice: rope_backward/cpu*.c.)
 *
 * The SIMD files are compiled with their instruction sets (-mavx2, -mavx512f)
 * and nothing else in the library is, so one binary runs on any x86-64 and the
 * library still builds on other architectures (the SIMD files then compile to
 * stubs). ROPEGRAD_CPU_ISA=portable|avx2|avx512 in the environment forces a
 * path for tests and comparisons; a path the CPU cannot run is ignored. The
 * choice is read once (the first call), so set it before using the library.
 *
 * Every sincos used reduces the argument properly: emb holds position *
 * inv_freq, which reaches 2.6e5 for 256K-token contexts, where a cheap
 * reduction that only works near [-pi, pi] would return garbage. Up to
 * |x| = 4e6 the kernels run the GPU's float core (cpu_sincos_core.h: a
 * three-part Cody-Waite reduction, checked on every float argument by
 * dev/common/sincos_bound_cpu.c), beyond it (or for NaN) SLEEF's 1-ulp sincos
 * with its Payne-Hanek reduction. */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sleef.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

#include "cpu_kernels.h"
#include "internal.h"
#include "ropegrad.h"

/* Rows per OpenMP chunk are chosen so one chunk is about this many emb
 * elements (the first half of each row): large enough that the per-chunk
 * call is noise, small enough that tiny problems still spread over threads. */
#define RG_CHUNK_ELEMS 8192

/* A thread must have enough work to repay waking it: starting an OpenMP team
 * costs tens to hundreds of microseconds on an idle machine (milliseconds on a
 * busy one: measured 0.19 ms for a 131-row problem that one thread does in
 * 0.02 ms), while one thread gets through about one element per nanosecond.
 * So each thread gets at least this many elements (rows x head_dim/2); a
 * problem smaller than twice this runs on the calling thread alone. With the
 * forward ops' faster sin/cos a smaller threshold (32K) was tried and made
 * 011's 131K- and 262K-element workloads slower after a cache flush: the
 * team's wake-up then costs more than the second thread saves
 * (dev/rope_forward/NOTES.md, "The CPU path's sin/cos"). */
#define RG_MIN_THREAD_ELEMS ((int64_t)256 * 1024)

/* ---- portable primitive --------------------------------------------------- */

/* The scalar core (SLEEF's scalar 1-ulp sincos beyond its range), then the
 * bf16 rounding check: the portable forward primitive. */
static void sincos_bf16_portable(const float *x, float mul, int64_t n, float scale, uint16_t *cb, uint16_t *sb,
                                 uint32_t *w)
{
    if (rg_sincos_bf16_huge_scale(x, mul, n, scale, cb, sb, w)) return;
    rg_sincos_bf16_scalar(x, mul, 0, n, scale, cb, sb, w);
}

/* ---- run-time dispatch ---------------------------------------------------- */

/* Read once per process (isa_resolve): the CPU's instruction sets, and the
 * processors OpenMP may use -- omp_get_num_procs asks the kernel for the
 * affinity mask on every call, a system call that costs ~10 us when the
 * caches are cold, as the protocol's flush leaves them before every call
 * (results/dev/cpu-dev-2026-12-01.txt): most of the op's time on the
 * smallest problems. */
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static int procs = 1;
static rg_cpu_isa_id isa_id = RG_CPU_PORTABLE;
static rg_cpu_sincos_bf16_fn isa_sincos = sincos_bf16_portable;

static void isa_use(rg_cpu_isa_id id, rg_cpu_sincos_bf16_fn fn)
{
    isa_id = id;
    isa_sincos = fn;
}

static void isa_resolve(void)
{
    procs = omp_get_num_procs();
    rg_cpu_sincos_bf16_fn avx2 = NULL, avx512 = NULL;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    /* __builtin_cpu_supports also checks that the OS saves the AVX / AVX-512
     * register state (XGETBV), not just the CPUID bits. The kernels are
     * compiled with FMA and F16C too, so those are required as well. */
    __builtin_cpu_init();
    /* F16C from CPUID.1:ECX directly: clang before 15 rejects "f16c" in
     * __builtin_cpu_supports. Its register state is AVX's, checked below. */
    unsigned int eax, ebx, ecx, edx;
    int f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
    int fma_f16c = __builtin_cpu_supports("fma") && f16c;
    if (fma_f16c && __builtin_cpu_supports("avx2")) avx2 = rg_cpu_avx2_sincos_bf16();
    if (avx2 && __builtin_cpu_supports("avx512f")) avx512 = rg_cpu_avx512_sincos_bf16();
#endif
    if (avx512)
        isa_use(RG_CPU_AVX512, avx512);
    else if (avx2)
        isa_use(RG_CPU_AVX2, avx2);
    /* Forcing a narrower (or the same) path the CPU can run. */
    const char *want = getenv("ROPEGRAD_CPU_ISA");
    if (!want) return;
    if (strcmp(want, "portable") == 0)
        isa_use(RG_CPU_PORTABLE, sincos_bf16_portable);
    else if (strcmp(want, "avx2") == 0 && avx2)
        isa_use(RG_CPU_AVX2, avx2);
    else if (strcmp(want, "avx512") == 0 && avx512)
        isa_use(RG_CPU_AVX512, avx512);
}

rg_cpu_isa_id rg_cpu_isa_chosen(void)
{
    pthread_once(&isa_once, isa_resolve);
    return isa_id;
}

const char *ropegrad_cpu_isa(void)
{
    static const char *const names[] = {"portable", "avx2", "avx512"};
    return names[rg_cpu_isa_chosen()];
}

/* ---- entry point ---------------------------------------------------------- */

/* Every output is the correctly rounded bf16 of scale*sin(x) (to double's
 * 1e-16), and never further from the float64 reference than a float32
 * evaluation rounded to bf16 (tests/test_forward.c checks both): the ISA's
 * primitive writes the values it can prove (rg_bf16_certain in
 * cpu_kernels.h) and recomputes the rare others from libm's double sin/cos,
 * rounded once (rg_sincos_bf16_put). */
void rg_sincos_bf16_row(const float *x, float mul, int64_t n, float scale, uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    isa_sincos(x, mul, n, scale, cb, sb, w);   /* resolved by rg_cpu_parallel_rows, its only way in */
}

void rg_cpu_parallel_rows(int64_t rows, int64_t row_elems, int num_threads, rg_cpu_chunk_fn fn, const void *ctx)
{
    pthread_once(&isa_once, isa_resolve);
    const int64_t chunk = row_elems >= RG_CHUNK_ELEMS ? 1 : RG_CHUNK_ELEMS / row_elems;
    const int64_t nchunks = (rows - 1) / chunk + 1;

    /* The ops are compute bound on every core, so more threads than processors
     * only adds switching: 0 means all of them, and larger requests are
     * clamped to them, to one thread per chunk, and to one thread per
     * RG_MIN_THREAD_ELEMS of work. */
    int64_t nt = procs;
    if (num_threads > 0 && num_threads < nt) nt = num_threads;
    if (nt > nchunks) nt = nchunks;
    if (nt > rows * row_elems / RG_MIN_THREAD_ELEMS) nt = rows * row_elems / RG_MIN_THREAD_ELEMS;
    if (nt <= 1) {
        fn(ctx, 0, rows);
        return;
    }
#pragma omp parallel for schedule(static) num_threads((int)nt)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t r0 = c * chunk;
        const int64_t r1 = r0 + chunk < rows ? r0 + chunk : rows;
        fn(ctx, r0, r1);
    }
}
