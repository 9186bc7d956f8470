/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_manifest_verify.c -- `ropegrad verify FILE` and the verify step of
 * `runs import`: read the file (rg_json_read_file), verify every digest and
 * derived figure, read the recorded protocol back; as given and resealed. */
#include "fuzz_manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void verify_one(cJSON *m)
{
    char msg[RG_ERRLEN] = "";
    int rc = rg_manifest_verify(m, msg, sizeof msg);
    FZ_CHECK(rc == 0 || rc == 1 || rc == 2);
    if (rc) {
        fz_check_msg(msg, sizeof msg);
    } else {
        fz_check_roundtrip(m);
    }
    rg_manifest tm;
    if (!rg_manifest_read(m, &tm, msg, sizeof msg)) {
        fz_protocol(&tm);
        rg_manifest_free(&tm);
    } else {
        fz_check_msg(msg, sizeof msg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write("input.json", data, size);
    char err[RG_ERRLEN] = "";
    cJSON *m = rg_json_read_file(path, err, sizeof err);
    if (!m) {
        fz_check_msg(err, sizeof err);
        return 0;
    }
    verify_one(m);
    fz_reseal(m);
    verify_one(m);
    cJSON_Delete(m);
    return 0;
}
