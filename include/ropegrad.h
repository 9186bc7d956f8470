/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ropegrad.h -- the public C API of libropegrad.
 *
 * Five ops of the rotary-embedding layer (SOL-ExecBench L1/011 forward,
 * L1/012 cos/sin from frequencies, L1/014 backward, L1/088 applying cos/sin
 * to q and k, L1/068 its backward; each below under its own names). The
 * backward (014), with H = head_dim/2, for every (b, s):
 *
 *   grad_position_ids[b,s] = scale * sum_{d<H} inv_freq[b,d] *
 *       ( (gs[d] + gs[d+H]) * cos(emb[d]) - (gc[d] + gc[d+H]) * sin(emb[d]) )
 *
 * where gc = grad_cos[b,s,:], gs = grad_sin[b,s,:], emb = emb[b,s,:].
 *
 * Each op is its own problem struct and four entry points,
 * ropegrad_<op>_validate, _reference (float64 ground truth), _cpu
 * (multithreaded, vectorized) and _cuda (the CUDA kernel, on the caller's
 * stream); 014's are ropegrad_rope_backward_*.
 *
 * Every entry point validates its arguments and returns 0 or a ROPEGRAD_ERR_*
 * code; ropegrad_strerror() turns a code into a message. Nothing here needs a
 * CUDA header: the stream is passed as void * (a cudaStream_t, or NULL for
 * the legacy default stream).
 */
#ifndef ROPEGRAD_H
#define ROPEGRAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROPEGRAD_VERSION_MAJOR 0
#define ROPEGRAD_VERSION_MINOR 2
#define ROPEGRAD_VERSION_PATCH 0

/* Largest head_dim accepted (any even value from 2 up to this). */
#define ROPEGRAD_MAX_HEAD_DIM 1024

typedef enum {
    ROPEGRAD_BF16 = 0,
    ROPEGRAD_F16 = 1,
    ROPEGRAD_F32 = 2
} ropegrad_dtype;

/* Status codes. 0 is success; every error is positive and stable. */
enum {
    ROPEGRAD_OK = 0,
    ROPEGRAD_ERR_NULL_PROBLEM = 1,   /* the problem pointer is NULL */
    ROPEGRAD_ERR_NULL_POINTER = 2,   /* a tensor pointer in the problem is NULL */
    ROPEGRAD_ERR_BAD_SIZE = 3,       /* batch_size or seq_len < 1 */
    ROPEGRAD_ERR_BAD_HEAD_DIM = 4,   /* head_dim odd, < 2 or > ROPEGRAD_MAX_HEAD_DIM */
    ROPEGRAD_ERR_OVERFLOW = 5,       /* B*S*head_dim (or its byte size) overflows */
    ROPEGRAD_ERR_BAD_DTYPE = 6,      /* grad_dtype is not a ropegrad_dtype */
    ROPEGRAD_ERR_BAD_STRIDE = 7,     /* inv_freq_batch_stride < 0 */
    ROPEGRAD_ERR_NONFINITE_SCALE = 8,/* attention_scaling is NaN or Inf */
    ROPEGRAD_ERR_BAD_THREADS = 9,    /* num_threads < 0 */
    ROPEGRAD_ERR_MISALIGNED = 10,    /* a pointer is not aligned to its element size */
    ROPEGRAD_ERR_NULL_OUTPUT = 11,   /* the output pointer (out / grad_position_ids) is NULL */
    ROPEGRAD_ERR_NO_CUDA = 12,       /* built without CUDA, or no usable GPU */
    ROPEGRAD_ERR_NOT_DEVICE_POINTER = 13, /* CUDA path given memory the GPU cannot access */
    ROPEGRAD_ERR_CUDA = 14,          /* a CUDA runtime call or launch failed */
    ROPEGRAD_ERR_BAD_KERNEL = 15,    /* unknown kernel version number (ropegrad_cos_sin_cuda_kernel) */
    ROPEGRAD_ERR_OUT_OF_MEMORY = 16, /* host allocation failed */
    ROPEGRAD_ERR_OVERLAP = 17,       /* the output's bytes overlap an input's: the op never works in place,
                                        so such a call is refused before anything is read or written */
    ROPEGRAD_ERR_UNSUPPORTED = 18,   /* a combination of layout, dtype or strides the entry point does not implement */
    ROPEGRAD_ERR__COUNT
};

/* ---- L1/014: the backward of rotary-embedding generation (formula above) -- */
typedef struct ropegrad_rope_backward_problem {
    int64_t batch_size, seq_len, head_dim;   /* head_dim: any even value 2..1024 */
    ropegrad_dtype grad_dtype;               /* dtype of grad_cos and grad_sin */
    const void *grad_cos, *grad_sin;         /* [B,S,head_dim], contiguous */
    const float *emb;                        /* [B,S,head_dim] fp32, contiguous; only the first half is read */
    const float *inv_freq;                   /* head_dim/2 values per batch */
    int64_t inv_freq_batch_stride;           /* in elements: head_dim/2 for [B,H,1]; 0 when batches share one vector */
    float attention_scaling;
    float *grad_position_ids;                /* [B,S] fp32 output */
} ropegrad_rope_backward_problem;

/* Checks a problem description without touching the tensors' contents.
 * Returns 0 or the first error found (the same checks every entry point runs).
 * The byte ranges the op reads and writes are those of the declared shapes:
 * grad_cos, grad_sin [B,S,head_dim] of grad_dtype; emb [B,S,head_dim] fp32;
 * inv_freq ((B-1)*inv_freq_batch_stride + head_dim/2) fp32; the output
 * [B,S] (fp32, or the reference's doubles). An output range that overlaps any
 * input range is ROPEGRAD_ERR_OVERLAP (inputs may overlap each other). */
int ropegrad_rope_backward_validate(const ropegrad_rope_backward_problem *p);

/* Float64 ground truth: out[b*S+s] (B*S doubles). Reads p->grad_position_ids
 * never; it may be NULL. sin/cos in double precision from libm. */
int ropegrad_rope_backward_reference(const ropegrad_rope_backward_problem *p, double *out);

/* CPU path: OpenMP threads (0 = all cores), SIMD width chosen at run time. */
int ropegrad_rope_backward_cpu(const ropegrad_rope_backward_problem *p, int num_threads);

/* CUDA path: every pointer in p is device memory; runs on cuda_stream
 * (a cudaStream_t; NULL = legacy default stream). Asynchronous: no allocation,
 * no synchronization, safe from several host threads at once. */
int ropegrad_rope_backward_cuda(const ropegrad_rope_backward_problem *p, void *cuda_stream);

/* ---- L1/011: rotary embedding forward (position ids -> cos_sin) -----------
 *
 * With H = head_dim/2, for every (b, s) and j < head_dim:
 *   x = (float)position_ids[b,s] * inv_freq[j mod H]          (a float32 product)
 *   cos_sin[b,s,j,0] = bf16(attention_scaling * cos(x))
 *   cos_sin[b,s,j,1] = bf16(attention_scaling * sin(x))
 * Every batch is computed from its own positions (packed sequences differ per
 * batch). Each bf16 is the one nearest to the exact value of the formula. */
typedef struct ropegrad_rope_forward_problem {
    int64_t batch_size, seq_len, head_dim;   /* head_dim: any even value 2..1024 */
    const int64_t *position_ids;             /* [B,S] */
    const float *inv_freq;                   /* [head_dim/2], shared by every batch */
    float attention_scaling;
    uint16_t *cos_sin;                       /* [B,S,head_dim,2] bf16 bits, output */
} ropegrad_rope_forward_problem;

int ropegrad_rope_forward_validate(const ropegrad_rope_forward_problem *p);
/* Float64 ground truth, B*S*head_dim*2 doubles in cos_sin's order (p->cos_sin unused). */
int ropegrad_rope_forward_reference(const ropegrad_rope_forward_problem *p, double *out);
int ropegrad_rope_forward_cpu(const ropegrad_rope_forward_problem *p, int num_threads);
int ropegrad_rope_forward_cuda(const ropegrad_rope_forward_problem *p, void *cuda_stream);

/* ---- L1/012: cos and sin from frequencies ---------------------------------
 *
 *   cos[b,s,j] = bf16(attention_scaling * cos(freqs[b,s,j mod H]))
 *   sin[b,s,j] = bf16(attention_scaling * sin(freqs[b,s,j mod H]))
 * freqs may be any float (position * inv_freq reaches ~3e5 rad): sin/cos are
 * range-reduced, and each bf16 is the one nearest to the exact value. */
typedef struct ropegrad_cos_sin_problem {
    int64_t batch_size, seq_len, head_dim;   /* head_dim: any even value 2..1024 */
    const float *freqs;                      /* [B,S,head_dim/2] */
    float attention_scaling;
    uint16_t *cos, *sin;                     /* [B,S,head_dim] bf16 bits each, outputs */
} ropegrad_cos_sin_problem;

int ropegrad_cos_sin_validate(const ropegrad_cos_sin_problem *p);
/* Float64 ground truth: B*S*head_dim doubles of cos, then as many of sin. */
int ropegrad_cos_sin_reference(const ropegrad_cos_sin_problem *p, double *out);
int ropegrad_cos_sin_cpu(const ropegrad_cos_sin_problem *p, int num_threads);
int ropegrad_cos_sin_cuda(const ropegrad_cos_sin_problem *p, void *cuda_stream);

/* 012's CUDA kernels (`ropegrad bench --suite suites/012-cos_sin --kernel N`).
 * 0, the default (ropegrad_cos_sin_cuda): each bf16 the nearest to the exact
 * value. 1, "fast" (ROPEGRAD_COS_SIN_KERNEL_FAST): the same float sin/cos
 * without the test that makes that rounding exact, so each value is within
 * 0.5 + 2^-12 of a bf16 ulp of the exact one (the nearest but for about 2 in
 * 10^5 on real positions) and small problems run faster. The CPU path always
 * rounds exactly, which meets that bound too. Any other number is
 * ROPEGRAD_ERR_BAD_KERNEL. */
#define ROPEGRAD_COS_SIN_KERNEL_FAST 1
int ropegrad_cos_sin_cuda_kernel(const ropegrad_cos_sin_problem *p, int kernel, void *cuda_stream);
const char *ropegrad_cos_sin_kernel_name(int kernel); /* "default", "fast"; NULL for an unknown number */

/* ---- L1/088 and L1/068: applying the rotary embedding to q and k ----------
 *
 * With H = head_dim/2, rotate_half(x) = [-x[H:], x[:H]], and c = cos[b,s,:],
 * n = sin[b,s,:] (or cos[s,:], sin[s,:] when every batch shares them), for
 * every batch b, position s and head of q and of k (x that head's row):
 *
 *   088 forward:   out    = x*c + rotate_half(x)*n
 *   068 backward:  grad_x = g*c - rotate_half(g)*n         (g: out's gradient)
 *                  grad_cos[b,s,:] = sum over q's and k's heads of g*x
 *                  grad_sin[b,s,:] = sum over q's and k's heads of g*rotate_half(x)
 *
 * 068's grad_x is its definition's formula, which is the exact gradient of the
 * forward when n[d] == n[d+H] (every RoPE table: cos/sin repeat their halves);
 * the suite's random sin is not such a table, and the op follows the definition.
 * With shared cos/sin (cos_sin_batch_stride 0) grad_cos and grad_sin are
 * [S,head_dim], summed over the batches too.
 *
 * Style and partial rotary (shape.style, shape.rotary_dim; zero = all of the
 * above). With R = rotary_dim (0 = head_dim; even, 2..head_dim) cos and sin
 * are [B,S,R] (or [S,R]) -- Hugging Face's tables for a partial rotary model
 * -- and only elements 0..R-1 of each head's row rotate; elements R..D-1 are
 * copied through (in place: left untouched). Each table column d multiplies
 * element d, and the elements rotate in pairs (a, b):
 *   ROPEGRAD_ROTARY_HALF (NeoX, Hugging Face): pairs (j, j+R/2), j < R/2;
 *   ROPEGRAD_ROTARY_INTERLEAVED (GPT-J): pairs (2i, 2i+1), i < R/2 -- the
 *     table in that order, cos[..,2i] = cos[..,2i+1] = cos(theta_i) (GPT-J's
 *     and Cohere's repeat_interleave tables).
 * For each pair (a, b) (a the first of it), with c = cos row, n = sin row:
 *   088:  out[a] = x[a]*c[a] - x[b]*n[a]     out[b] = x[b]*c[b] + x[a]*n[b]
 *   068:  grad_x[a] = g[a]*c[a] + g[b]*n[a]  grad_x[b] = g[b]*c[b] - g[a]*n[b]
 *         grad_cos[.., d] = sum of g[d]*x[d]
 *         grad_sin[.., a] = -sum of g[a]*x[b]    grad_sin[.., b] = sum of g[b]*x[a]
 * (sums over q's and k's heads, and batches when shared). grad_x is 068's
 * formula above with the style's pairs (exact when n[a] == n[b], as in every
 * RoPE table); grad_cos and grad_sin are the exact gradient of 088 with
 * respect to each table entry as 088 indexes it (at rotate-half, R = head_dim:
 * the sums above). grad_cos, grad_sin are [B,S,R] (or [S,R]);
 * cos_sin_batch_stride is then seq_len*R. A style other
 * than the two is ROPEGRAD_ERR_UNSUPPORTED; an odd, negative or too large
 * rotary_dim ROPEGRAD_ERR_BAD_HEAD_DIM. The suites' shapes (rotate-half,
 * R = head_dim) run the kernels they always did; the other cases one
 * generic kernel a direction.
 *
 * Reference: float64 from the inputs widened exactly. CPU and CUDA: float32
 * arithmetic, each output rounded once to its dtype (nearest even).
 *
 * ABI: style and rotary_dim were added to the shape in 0.2.0 (unreleased),
 * after cos_sin_batch_stride, so the shape and the structs holding it
 * (ropegrad_rope_apply_pos_problem's too) grew; a zero-initialised shape keeps
 * the old meaning. */
typedef enum {
    ROPEGRAD_LAYOUT_BHSD = 0,   /* [batch, heads, seq, head_dim] (the suites'; Hugging Face's q, k) */
    ROPEGRAD_LAYOUT_BSHD = 1    /* [batch, seq, heads, head_dim] (a projection's output, flash-attention's) */
} ropegrad_layout;

/* Which elements of a head's row rotate together (see above). */
typedef enum { ROPEGRAD_ROTARY_HALF = 0, ROPEGRAD_ROTARY_INTERLEAVED = 1 } ropegrad_rotary_style;

typedef struct ropegrad_rope_apply_shape {
    int64_t batch_size, seq_len, head_dim;   /* head_dim: any even value 2..1024 */
    int64_t num_heads, num_kv_heads;         /* q's heads and k's (GQA: any num_kv_heads >= 1) */
    ropegrad_layout layout;                  /* of q, k, their outputs and gradients; each contiguous */
    ropegrad_dtype dtype;                    /* of q, k, their outputs and gradients */
    ropegrad_dtype cos_sin_dtype;            /* of cos, sin (and 068's grad_cos, grad_sin) */
    int64_t cos_sin_batch_stride;            /* elements: seq_len*head_dim for [B,S,D], 0 for one [S,D]
                                                shared by every batch; any other value is UNSUPPORTED
                                                (seq_len*rotary_dim with partial rotary) */
    ropegrad_rotary_style style;             /* 088/068: the pairs; 0 = rotate-half (the suites') */
    int64_t rotary_dim;                      /* 088/068: 0 = head_dim; even, <= head_dim */
} ropegrad_rope_apply_shape;

/* 088. In place: q_out may be q and k_out k (the same pointers); any other
 * overlap of an output with a tensor is ROPEGRAD_ERR_OVERLAP. */
typedef struct ropegrad_rope_apply_problem {
    ropegrad_rope_apply_shape shape;
    const void *q, *k;                       /* [B,num_heads,S,D] / [B,num_kv_heads,S,D] (or BSHD) */
    const void *cos, *sin;
    void *q_out, *k_out;                     /* the rotated q and k, outputs */
} ropegrad_rope_apply_problem;

int ropegrad_rope_apply_validate(const ropegrad_rope_apply_problem *p);
/* Float64 ground truth: q_out's values, then k_out's (each in the layout);
 * q_out and k_out unused. */
int ropegrad_rope_apply_reference(const ropegrad_rope_apply_problem *p, double *out);
int ropegrad_rope_apply_cpu(const ropegrad_rope_apply_problem *p, int num_threads);
int ropegrad_rope_apply_cuda(const ropegrad_rope_apply_problem *p, void *cuda_stream);

/* 068. In place: grad_q may be grad_q_out and grad_k grad_k_out. grad_cos and
 * grad_sin are both given or both NULL (not computed; q and k may then be NULL). */
typedef struct ropegrad_rope_apply_backward_problem {
    ropegrad_rope_apply_shape shape;
    const void *grad_q_out, *grad_k_out;     /* out's gradients (the suite's grad_q_embed, grad_k_embed) */
    const void *q, *k;                       /* the forward's inputs */
    const void *cos, *sin;
    void *grad_q, *grad_k;                   /* outputs, q's and k's shapes */
    void *grad_cos, *grad_sin;               /* outputs, [B,S,D] ([S,D] when shared), cos_sin_dtype */
} ropegrad_rope_apply_backward_problem;

int ropegrad_rope_apply_backward_validate(const ropegrad_rope_apply_backward_problem *p);
/* Float64 ground truth: grad_q, grad_k, grad_cos, grad_sin back to back (all
 * four: q and k must be given); the problem's outputs unused. */
int ropegrad_rope_apply_backward_reference(const ropegrad_rope_apply_backward_problem *p, double *out);
int ropegrad_rope_apply_backward_cpu(const ropegrad_rope_apply_backward_problem *p, int num_threads);
int ropegrad_rope_apply_backward_cuda(const ropegrad_rope_apply_backward_problem *p, void *cuda_stream);

/* ---- Applying the rotary embedding from positions (no cos/sin table) ----
 *
 * 088's rotation with each cos/sin computed in the kernel from the token's
 * position. With R = rotary_dim and, for pair i < R/2 of a head's row,
 *   x_i = (float)position * inv_freq[i]                        (a float32 product, as HF builds freqs)
 *   c_i = round(cos_sin_dtype, attention_scaling * cos(x_i))   (correctly rounded, like 011's outputs)
 *   n_i = round(cos_sin_dtype, attention_scaling * sin(x_i))
 * the pairs are (i, i + R/2) in the rotate-half (NeoX, Hugging Face) style and
 * (2i, 2i+1) in the interleaved (GPT-J) style; for each pair (a, b) of every
 * head of q and of k at that token:
 *
 *   forward:   out[a] = x[a]*c_i - x[b]*n_i       out[b] = x[b]*c_i + x[a]*n_i
 *   backward:  grad_x[a] = g[a]*c_i + g[b]*n_i    grad_x[b] = g[b]*c_i - g[a]*n_i
 *
 * (the backward is the exact gradient of the forward: the rotation by minus the
 * angle; there is no cos/sin tensor, so no table gradient). Elements R..D-1 of
 * a row are copied through (in place: left untouched). CPU and CUDA: float32
 * arithmetic from the rounded c_i, n_i, each output rounded once to dtype --
 * the bits 088 (backward: 068's grad_q, grad_k) gives on the same path with a
 * table holding those c_i, n_i (011's output, for bf16). Reference: the same
 * c_i, n_i, the rotation in float64.
 *
 * Positions: position_ids [B,S] (int32 or int64, position_bits 32 or 64), or
 * packed sequences (thd): cu_seqlens [num_seqs+1] (cu_seqlens[0] = 0,
 * non-decreasing, cu_seqlens[num_seqs] = seq_len) with q, k in BSHD and B = 1
 * ([total_tokens, heads, head_dim]); token t of sequence j (cu_seqlens[j] <= t
 * < cu_seqlens[j+1]) is at position t - cu_seqlens[j], and position_ids is not
 * read. The CPU and reference paths check cu_seqlens' contents
 * (ROPEGRAD_ERR_BAD_SIZE); the CUDA path cannot read them on the host, and a
 * caller that passes other values gets unspecified positions. */

typedef struct ropegrad_rope_apply_pos_problem {
    ropegrad_rope_apply_shape shape;  /* layout BHSD/BSHD, GQA as 088; cos_sin_dtype: the dtype each cos/sin is
                                         rounded to before use (BF16 like the stock HF table, F16, or F32);
                                         cos_sin_batch_stride, style and rotary_dim unused, must be 0
                                         (the problem's own style and rotary_dim below say them) */
    ropegrad_rotary_style style;
    int64_t rotary_dim;               /* 0 = head_dim; even, 2..head_dim; elements beyond it copied through */
    const void *position_ids;         /* [B,S] (ignored, may be NULL, when cu_seqlens is set) */
    int position_bits;                /* 32 (int32_t ids) or 64 (int64_t ids); else ROPEGRAD_ERR_BAD_DTYPE */
    const int32_t *cu_seqlens;        /* optional thd: [num_seqs+1]; then q/k are BSHD with B=1, S = total tokens */
    int64_t num_seqs;
    const float *inv_freq;            /* [rotary_dim/2] */
    float attention_scaling;
    const void *q, *k;                /* backward: grad_q_out, grad_k_out */
    void *q_out, *k_out;              /* backward: grad_q, grad_k. In place allowed (q_out == q, k_out == k);
                                         any other overlap with a tensor is ROPEGRAD_ERR_OVERLAP */
} ropegrad_rope_apply_pos_problem;

/* Checks the description (never the tensors' contents, cu_seqlens' included). */
int ropegrad_rope_apply_pos_validate(const ropegrad_rope_apply_pos_problem *p);
/* Float64 ground truth: q_out's values, then k_out's (each in the layout); q_out and k_out unused. */
int ropegrad_rope_apply_pos_reference(const ropegrad_rope_apply_pos_problem *p, double *out);
int ropegrad_rope_apply_pos_cpu(const ropegrad_rope_apply_pos_problem *p, int num_threads);
int ropegrad_rope_apply_pos_cuda(const ropegrad_rope_apply_pos_problem *p, void *cuda_stream);

/* The backward: the same problem with q, k = grad_q_out, grad_k_out and
 * q_out, k_out = grad_q, grad_k. */
int ropegrad_rope_apply_pos_backward_validate(const ropegrad_rope_apply_pos_problem *p);
int ropegrad_rope_apply_pos_backward_reference(const ropegrad_rope_apply_pos_problem *p, double *out);
int ropegrad_rope_apply_pos_backward_cpu(const ropegrad_rope_apply_pos_problem *p, int num_threads);
int ropegrad_rope_apply_pos_backward_cuda(const ropegrad_rope_apply_pos_problem *p, void *cuda_stream);

/* ---- Applying the rotary embedding to packed sequences from one table (thd) ----
 *
 * 088's rotation on packed sequences, TransformerEngine's thd layout: q, k in
 * BSHD with B = 1 and S = total tokens T ([T, num_heads, D] / [T, num_kv_heads, D]),
 * and ONE cos/sin table [table_len, R] (R = rotary_dim, cos_sin_dtype) whose
 * row p holds the values of position p. Token t is rotated by row pos(t):
 *   with cu_seqlens [num_seqs+1] (cu_seqlens[0] = 0, non-decreasing,
 *   cu_seqlens[num_seqs] = T): pos(t) = t - cu_seqlens[j] for the sequence j
 *   with cu_seqlens[j] <= t < cu_seqlens[j+1] (positions restart per sequence);
 *   without (cu_seqlens NULL): pos(t) = position_ids[t] (int32 or int64,
 *   position_bits 32 or 64).
 * Style and rotary_dim are the shape's, as 088's: for each pair (a, b) of a
 * head's row -- (i, i + R/2) rotate-half, (2i, 2i+1) interleaved -- with
 * c = cos[pos(t)], n = sin[pos(t)] (row columns a and b):
 *
 *   forward:   out[a] = x[a]*c[a] - x[b]*n[a]       out[b] = x[b]*c[b] + x[a]*n[b]
 *   backward:  grad_x[a] = g[a]*c[a] + g[b]*n[a]    grad_x[b] = g[b]*c[b] - g[a]*n[b]
 *
 * (the backward is the rotation by minus the angle: grad_q, grad_k from
 * grad_q_out, grad_k_out). Table gradients are NOT computed in this layout
 * (the rows are gathered by position; 068 on per-token tables computes them).
 * Elements R..D-1 of a row are copied through (in place: left untouched).
 * CPU and CUDA give the bits 088 (backward: 068's grad_q, grad_k) gives on
 * the same path with the per-token table [T, R] whose row t is row pos(t) of
 * this one; the reference computes in float64.
 *
 * Positions out of the table (pos(t) < 0 or >= table_len) and bad cu_seqlens
 * contents: the CPU and reference paths read them and return
 * ROPEGRAD_ERR_BAD_SIZE (writing nothing). The CUDA path cannot read them on
 * the host: it clamps each position into [0, table_len) on the device (no
 * read outside the table), and such tokens' outputs are unspecified. */

typedef struct ropegrad_rope_apply_thd_problem {
    ropegrad_rope_apply_shape shape;  /* layout BSHD, batch_size 1, seq_len = total tokens T; head_dim, heads
                                         (GQA), dtype, cos_sin_dtype, style and rotary_dim as 088;
                                         cos_sin_batch_stride must be 0 */
    const void *cos, *sin;            /* [table_len, R], cos_sin_dtype */
    int64_t table_len;                /* >= 1 */
    const int32_t *cu_seqlens;        /* [num_seqs+1], or NULL: position_ids gives each token's position */
    int64_t num_seqs;                 /* >= 1 with cu_seqlens */
    const void *position_ids;         /* [T] (ignored, may be NULL, when cu_seqlens is set) */
    int position_bits;                /* 32 (int32_t ids) or 64 (int64_t ids); else ROPEGRAD_ERR_BAD_DTYPE */
    const void *q, *k;                /* backward: grad_q_out, grad_k_out */
    void *q_out, *k_out;              /* backward: grad_q, grad_k. In place allowed (q_out == q, k_out == k);
                                         any other overlap with a tensor is ROPEGRAD_ERR_OVERLAP */
} ropegrad_rope_apply_thd_problem;

/* Checks the description (never the tensors' contents, cu_seqlens' and position_ids' included). */
int ropegrad_rope_apply_thd_validate(const ropegrad_rope_apply_thd_problem *p);
/* Float64 ground truth: q_out's values, then k_out's; q_out and k_out unused. */
int ropegrad_rope_apply_thd_reference(const ropegrad_rope_apply_thd_problem *p, double *out);
int ropegrad_rope_apply_thd_cpu(const ropegrad_rope_apply_thd_problem *p, int num_threads);
int ropegrad_rope_apply_thd_cuda(const ropegrad_rope_apply_thd_problem *p, void *cuda_stream);

/* The backward: the same problem with q, k = grad_q_out, grad_k_out and
 * q_out, k_out = grad_q, grad_k (no table gradient). */
int ropegrad_rope_apply_thd_backward_validate(const ropegrad_rope_apply_thd_problem *p);
int ropegrad_rope_apply_thd_backward_reference(const ropegrad_rope_apply_thd_problem *p, double *out);
int ropegrad_rope_apply_thd_backward_cpu(const ropegrad_rope_apply_thd_problem *p, int num_threads);
int ropegrad_rope_apply_thd_backward_cuda(const ropegrad_rope_apply_thd_problem *p, void *cuda_stream);

/* 1 when libropegrad was built with the CUDA backend and a GPU is usable. */
int ropegrad_cuda_available(void);

/* The CPU path's SIMD choice on this machine ("avx512", "avx2", "portable"). */
const char *ropegrad_cpu_isa(void);

const char *ropegrad_strerror(int status);
const char *ropegrad_version(void);

/* Bytes of element type dt (2 or 4), 0 for an invalid dtype. */
size_t ropegrad_dtype_size(ropegrad_dtype dt);

#ifdef __cplusplus
}
#endif

#endif /* ROPEGRAD_H */
