/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_worker_channel.c -- the parent's reader of the supervised worker's
 * channel (src/harness/worker.h, rg_worker_msg_parse): whatever bytes a
 * worker sends, the reader answers with one line or a message whose
 * members are all in range, and a result it accepts crosses the channel
 * again unchanged in shape (written, read back, the same counts). */
#include <math.h>

#include "fuzz_common.h"
#include "worker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A result the reader accepted: its counts and samples as promised. */
static void check_result(const rg_run_result *r)
{
    FZ_CHECK(r->n_workloads >= 1 && r->workloads);
    FZ_CHECK(r->total == (int)r->n_workloads && r->passed >= 0 && r->passed <= r->total);
    for (size_t i = 0; i < r->n_workloads; i++) {
        const rg_workload_result *w = &r->workloads[i];
        FZ_CHECK(w->n_samples >= 0 && (w->n_samples == 0 || w->samples_ns));
        FZ_CHECK(!w->timed || w->n_samples > 0);
        FZ_CHECK(w->check.pass == 0 || w->check.pass == 1);
    }
}

/* Written again and read back: accepted, with the same workloads and samples. */
static void round_trip(const rg_worker_msg *m)
{
    rg_run_impl impl;
    memset(&impl, 0, sizeof impl);
    memcpy(impl.name, m->name, sizeof impl.name);
    memcpy(impl.version, m->version, sizeof impl.version);
    impl.meta_json = m->meta_json;
    char err[RG_ERRLEN] = "";
    size_t len = 0;
    unsigned char *buf = rg_worker_frame_result(&m->result, &impl, &len, err, sizeof err);
    FZ_CHECK(buf && len >= RG_WORKER_HEADER);
    rg_worker_msg again;
    FZ_CHECK(rg_worker_msg_parse(buf, len, &again, err, sizeof err) == 0);
    free(buf);
    FZ_CHECK(!again.refused && again.result.n_workloads == m->result.n_workloads);
    FZ_CHECK(!strcmp(again.name, m->name) && !strcmp(again.version, m->version));
    FZ_CHECK((again.meta_json == NULL) == (m->meta_json == NULL));
    for (size_t i = 0; i < m->result.n_workloads; i++)
        FZ_CHECK(again.result.workloads[i].n_samples == m->result.workloads[i].n_samples);
    rg_worker_msg_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rg_worker_msg m;
    char err[RG_ERRLEN] = "";
    if (rg_worker_msg_parse(data, size, &m, err, sizeof err)) {
        size_t n = strnlen(err, sizeof err);
        FZ_CHECK(n > 0 && n < sizeof err && !memchr(err, '\n', n));
        FZ_CHECK(!m.refused && !m.meta_json && !m.result.workloads && m.result.n_workloads == 0);
        return 0;
    }
    if (m.refused) {
        FZ_CHECK(m.refusal[0] && !strpbrk(m.refusal, "\r\n"));
        FZ_CHECK(!m.result.workloads);
    } else {
        check_result(&m.result);
        round_trip(&m);
    }
    rg_worker_msg_free(&m);
    return 0;
}
