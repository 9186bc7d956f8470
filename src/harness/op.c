/* SPDX-License-Identifier: Apache-2.0 */
/* op.c -- the op table and the helpers its rows share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "run_internal.h"

extern const rg_op rg_op_rope_forward, rg_op_cos_sin, rg_op_rope_backward, rg_op_rope_apply, rg_op_rope_apply_backward;

/* One line per op. */
const rg_op *const rg_ops[] = {&rg_op_rope_forward, &rg_op_cos_sin, &rg_op_rope_backward, &rg_op_rope_apply,
                               &rg_op_rope_apply_backward, NULL};

void rg_op_suite_dir(const rg_op *op, const char *root, char *dst, size_t n)
{
    if (root) snprintf(dst, n, "%s/%s-%s", root, op->id, op->name);
    else snprintf(dst, n, "%s-%s", op->id, op->name);
}

const rg_op *rg_op_by_id(const char *id)
{
    if (!id) return NULL;
    for (const rg_op *const *o = rg_ops; *o; o++)
        if (!strcmp((*o)->id, id)) return *o;
    return NULL;
}

const rg_op *rg_op_find(const char *name)
{
    if (!name) return NULL;
    for (const rg_op *const *o = rg_ops; *o; o++)
        if (!strcmp((*o)->definition, name)) return *o;
    return NULL;
}

void rg_axes_text(const rg_op *op, const rg_workload *w, char *dst, size_t n)
{
    int used = snprintf(dst, n, "B=%lld S=%lld D=%lld", (long long)w->batch_size, (long long)w->seq_len,
                        (long long)w->head_dim);
    for (int a = 0; op->axes && op->axes[a] && a < RG_OP_MAX_AXES && used > 0 && (size_t)used < n; a++) {
        int more = snprintf(dst + used, n - (size_t)used, " %s=%lld", op->axes[a], (long long)w->axes[a]);
        if (more < 0) return;
        used += more;
    }
}

const char *rg_op_error_text(const rg_op *op, int rc)
{
    const char *line = op && op->error_text ? op->error_text(rc) : NULL;
    return line ? line : ropegrad_strerror(rc);
}

void rg_tensors_free(rg_tensors *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_in && i < RG_OP_MAX_TENSORS; i++) free(t->in[i]);
    memset(t, 0, sizeof *t);
}

void rg_widen_f32(const void *out, int64_t n, float *dst)
{
    memcpy(dst, out, (size_t)n * sizeof(float));
}

void rg_widen_bf16(const void *out, int64_t n, float *dst)
{
    const uint16_t *h = out;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)h[i] << 16;
        memcpy(&dst[i], &u, sizeof u);
    }
}

const char *rg_kernel_default_only(int k)
{
    return k == 0 ? "default" : NULL;
}

void rg_op_kernels_text(const rg_op *op, char *dst, size_t n)
{
    size_t used = 0;
    dst[0] = '\0';
    for (int k = 0; k < RG_OP_KERNEL_SCAN && used < n; k++) {
        const char *name = op->kernel_name(k);
        if (!name) continue;
        int w = snprintf(dst + used, n - used, "%s%d (%s)", used ? ", " : "", k, name);
        if (w < 0) return;
        used += (size_t)w;
    }
}

int rg_tensors_shape(const rg_workload *w, int64_t bytes_per_row_max, rg_tensors *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const int64_t B = w->batch_size, S = w->seq_len, D = w->head_dim;
    if (B < 1 || S < 1 || D < 2 || D > ROPEGRAD_MAX_HEAD_DIM || (D & 1)) {
        snprintf(err, errlen, "workload %d: invalid sizes B=%lld S=%lld D=%lld", w->index, (long long)B,
                 (long long)S, (long long)D);
        return 1;
    }
    if (B > INT64_MAX / S || B * S > INT64_MAX / bytes_per_row_max ||
        (uint64_t)(B * S) * (uint64_t)bytes_per_row_max > (uint64_t)SIZE_MAX) {
        snprintf(err, errlen, "workload %d: B*S*D overflows", w->index);
        return 1;
    }
    t->batch_size = B;
    t->seq_len = S;
    t->head_dim = D;
    memcpy(t->axes, w->axes, sizeof t->axes);
    t->dtype = ROPEGRAD_BF16;
    t->attention_scaling = w->attention_scaling;
    return 0;
}

int rg_op_row_blocks(int64_t rows, rg_op_block_fn fn, const void *ctx)
{
    const int64_t block = RG_OP_BLOCK_ROWS, nblocks = (rows + block - 1) / block;
    int worst = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(max : worst)
    for (int64_t k = 0; k < nblocks; k++) {
        const int64_t r0 = k * block;
        int rc = fn(ctx, r0, rows - r0 < block ? rows - r0 : block);
        if (rc > worst) worst = rc;
    }
    return worst;
}

int rg_op_reference(const rg_tensors *t, double *ref, rg_op_block_fn rows_fn)
{
    rg_tensors c = *t;
    c.out_ref = ref;
    return rg_op_row_blocks(t->batch_size * t->seq_len, rows_fn, &c);
}
