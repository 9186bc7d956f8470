/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ident.c -- the identifiers that form comparison groups and implementation
 * lines (definition, family, device, implementation, backend, kernel) may
 * not hold bidi controls or invisible characters: two names that look the
 * same must be the same name. Checked when a manifest is verified (verify,
 * runs import, runs push and the index's POST /api/runs).
 */
#include <stdio.h>

#include "record.h"
#include "rg_term.h"

typedef struct ident_field {
    const char *name;    /* where the manifest holds it */
    const char *value;
} ident_field;

int rg_manifest_check_identifiers(const rg_manifest *m, char *err, size_t errlen)
{
    if (!m) {
        snprintf(err, errlen, "no manifest given");
        return 2;
    }
    const ident_field fields[] = {
        {"run.spec.sourceNative.benchmark", m->benchmark},
        {"run.spec.sourceNative.source", m->source},
        {"protocol.spec.comparability.family", m->family},
        {"protocol.spec.measurement.timer", m->timer},
        {"protocol.spec.measurement.primaryStatistic", m->measurement_statistic},
        {"environment.spec.hardware.vendor", m->vendor},
        {"environment.spec.hardware.product", m->product},
        {"environment.spec.hardware.architecture", m->architecture},
        {"implementation.spec.name", m->impl_name},
        {"implementation.spec.version", m->impl_version},
        {"implementation.spec.backend", m->backend},
        {"implementation.spec.kernelName", m->kernel_name},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        size_t at;
        unsigned cp;
        if (rg_text_find_spoofing(fields[i].value, &at, &cp)) {
            snprintf(err, errlen,
                     "%s: U+%04X at byte %zu is a bidi control or an invisible character, refused in a name that "
                     "forms comparison groups",
                     fields[i].name, cp, at);
            return 2;
        }
    }
    return 0;
}
