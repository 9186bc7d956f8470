/* record.c -- placeholder until implemented. */
#include <stdio.h>

#include "record.h"

int rg_record_bench(const rg_run_result *r, const rg_suite *s, const rg_record_options *o,
                    int64_t *run_id, char *err, size_t errlen)
{
    snprintf(err, errlen, "recording runs is not implemented yet");
    return 1;
}
