/* SPDX-License-Identifier: Apache-2.0 */
/* test_overlap.c -- the C API refuses an output that overlaps an input
 * (ROPEGRAD_ERR_OVERLAP, issue 12): every entry point, every input, a one-byte
 * overlap at either end, and nothing written when refused; an output right
 * next to an input (no shared byte) is accepted and correct. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ropegrad.h"

enum { B = 2, S = 4, D = 8, H = D / 2, ROWS = B * S };

/* One arena holding every tensor, so that outputs can be placed anywhere in it. */
typedef struct arena {
    _Alignas(16) float first;
    float gc_pad[3];   /* gc at a 16-byte offset */
    float gc[ROWS * D], gs[ROWS * D], emb[ROWS * D], inv[B * H], out[ROWS];
    float pad[ROWS * 2];
} arena;

static void fill(arena *a)
{
    for (int i = 0; i < ROWS * D; i++) {
        a->gc[i] = (float)((i % 7) - 3) / 4;
        a->gs[i] = (float)((i % 5) - 2) / 3;
        a->emb[i] = (float)i / 16;
    }
    for (int i = 0; i < B * H; i++) a->inv[i] = 1.0f / (float)(1 + i);
}

static ropegrad_rope_backward_problem problem(arena *a, float *out)
{
    ropegrad_rope_backward_problem p = {.batch_size = B, .seq_len = S, .head_dim = D, .grad_dtype = ROPEGRAD_F32,
                          .grad_cos = a->gc, .grad_sin = a->gs, .emb = a->emb, .inv_freq = a->inv,
                          .inv_freq_batch_stride = H, .attention_scaling = 0.5f, .grad_position_ids = out};
    return p;
}

/* Every entry point that writes p->grad_position_ids refuses, and the arena
 * (inputs and all) is left exactly as it was. */
static void expect_refused(arena *a, float *out)
{
    arena before;
    memcpy(&before, a, sizeof before);
    ropegrad_rope_backward_problem p = problem(a, out);
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_OVERLAP);
    assert_int_equal(ropegrad_rope_backward_cpu(&p, 1), ROPEGRAD_ERR_OVERLAP);
    assert_int_equal(ropegrad_rope_backward_cuda(&p, NULL), ROPEGRAD_ERR_OVERLAP);
    assert_memory_equal(&before, a, sizeof before);
}

static void test_output_inside_each_input(void **state)
{
    static arena a;
    fill(&a);
    expect_refused(&a, a.gc);
    expect_refused(&a, a.gs + 5);
    expect_refused(&a, a.emb + ROWS * D / 2);
    expect_refused(&a, a.inv);
    /* Overlapping by one element at the end of emb / the start of inv_freq. */
    expect_refused(&a, a.emb + ROWS * D - 1);
    expect_refused(&a, a.inv + B * H - 1);
    /* The output starting before an input and reaching into its first element. */
    expect_refused(&a, a.gs + ROWS * D - ROWS + 1);   /* ends one float into emb */
}

/* The boundary is exact: an output that ends right where an input starts,
 * or starts right where one ends, shares no byte and is fine. */
static void test_adjacent_is_not_overlap(void **state)
{
    static arena a;
    fill(&a);
    ropegrad_rope_backward_problem p = problem(&a, a.out);
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    float *after_inv = a.inv + B * H;   /* == a.out: right after inv_freq */
    assert_ptr_equal(after_inv, a.out);
    p = problem(&a, after_inv);
    assert_int_equal(ropegrad_rope_backward_cpu(&p, 1), ROPEGRAD_OK);
    double ref[ROWS];
    assert_int_equal(ropegrad_rope_backward_reference(&p, ref), ROPEGRAD_OK);
    for (int i = 0; i < ROWS; i++) {
        double d = ref[i] - (double)a.out[i];
        assert_true(d < 1e-4 && d > -1e-4);
    }
    /* An output ending exactly where emb starts (the last ROWS floats of gs)
     * overlaps gs, not emb: refused because of gs only. */
    p = problem(&a, a.gs + ROWS * D - ROWS);
    p.grad_sin = a.gc;   /* now nothing but emb is next to it */
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
}

/* inv_freq shared by every batch (stride 0) covers head_dim/2 floats only:
 * an output right after them is fine, one on them is not. */
static void test_shared_inv_freq_range(void **state)
{
    static arena a;
    fill(&a);
    ropegrad_rope_backward_problem p = problem(&a, a.inv + H);
    p.inv_freq_batch_stride = 0;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    p.grad_position_ids = a.inv + H - 1;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_OVERLAP);
    p.inv_freq_batch_stride = H;   /* per batch: the second vector is an input too */
    p.grad_position_ids = a.inv + H;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_OVERLAP);
}

/* The reference writes doubles: B*S*8 bytes, checked the same way. */
static void test_reference_output_overlap(void **state)
{
    static arena a;
    fill(&a);
    ropegrad_rope_backward_problem p = problem(&a, a.out);
    double *in_emb = (double *)(void *)(a.emb + 2);   /* 8-byte aligned: emb is at an even float offset */
    assert_int_equal(ropegrad_rope_backward_reference(&p, in_emb), ROPEGRAD_ERR_OVERLAP);
    /* ROWS doubles starting ROWS floats before emb reach ROWS floats into it. */
    assert_int_equal(ropegrad_rope_backward_reference(&p, (double *)(void *)(a.gs + ROWS * D - ROWS)), ROPEGRAD_ERR_OVERLAP);
    double ref[ROWS];
    assert_int_equal(ropegrad_rope_backward_reference(&p, ref), ROPEGRAD_OK);
}

static void test_message(void **state)
{
    const char *m = ropegrad_strerror(ROPEGRAD_ERR_OVERLAP);
    assert_non_null(strstr(m, "overlaps"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_inside_each_input),
        cmocka_unit_test(test_adjacent_is_not_overlap),
        cmocka_unit_test(test_shared_inv_freq_range),
        cmocka_unit_test(test_reference_output_overlap),
        cmocka_unit_test(test_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
