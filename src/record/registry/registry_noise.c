/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_noise.c -- the run-to-run noise `runs calibrate` measured on each
 * machine (table machine_noise, schema 6; gate.h says how `runs check` uses it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "gate.h"
#include "record.h"

#include "registry_internal.h"

#define NOISE_COLUMNS "machine, created_at, sigma, df, sigma_w, df_w, runs, detail"

static void read_noise(sqlite3_stmt *st, rg_gate_noise *o)
{
    memset(o, 0, sizeof *o);
    reg_copy_col(st, 0, o->machine, sizeof o->machine);
    reg_copy_col(st, 1, o->created_at, sizeof o->created_at);
    o->sigma = reg_col_num(st, 2);
    o->df = sqlite3_column_int(st, 3);
    o->sigma_w = reg_col_num(st, 4);
    o->df_w = sqlite3_column_int(st, 5);
    o->n = sqlite3_column_int(st, 6);
    reg_copy_col(st, 7, o->detail, sizeof o->detail);
    snprintf(o->source, sizeof o->source, "calibration");
}

int rg_registry_noise_get(rg_registry *g, const char *machine, rg_gate_noise *out, char *err, size_t errlen)
{
    if (!g || !machine || !out) {
        snprintf(err, errlen, "noise: no registry, machine or output");
        return 2;
    }
    sqlite3_stmt *st;
    if (prep(g, "SELECT " NOISE_COLUMNS " FROM machine_noise WHERE machine = ?", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot read the machine's noise");
    sqlite3_bind_text(st, 1, machine, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) read_noise(st, out);
    release(g, st);
    if (rc == SQLITE_ROW) return 0;
    if (rc == SQLITE_DONE) return 1;
    return reg_fail(g, err, errlen, "cannot read the machine's noise");
}

int rg_registry_noise_list(rg_registry *g, rg_gate_noise **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT " NOISE_COLUMNS " FROM machine_noise ORDER BY machine", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot list the machines' noise");
    size_t cap = 0;
    int rc;
    rg_gate_noise *more;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && (more = reg_grow(*out, *n, &cap, sizeof **out)))
        read_noise(st, &(*out = more)[(*n)++]);
    release(g, st);
    if (!reg_end_steps(g, rc, *out, err, errlen, "cannot list the machines' noise")) return 0;
    *out = NULL;
    *n = 0;
    return 2;
}

int rg_registry_noise_put(rg_registry *g, const rg_gate_noise *n, char *err, size_t errlen)
{
    if (!g || !n || !n->machine[0] || !(isfinite(n->sigma) && n->sigma >= 0) ||
        !(isfinite(n->sigma_w) && n->sigma_w >= 0) || n->df < 1 || n->df_w < 1) {
        snprintf(err, errlen, "noise: a machine, finite sigmas and degrees of freedom >= 1 are required");
        return 2;
    }
    char now[32];
    reg_now_utc(now);
    if (reg_begin_write(g, err, errlen, "cannot store the machine's noise")) return 2;
    sqlite3_stmt *st;
    if (prep(g, "INSERT OR REPLACE INTO machine_noise (" NOISE_COLUMNS ") VALUES (?,?,?,?,?,?,?,?)", &st) !=
        SQLITE_OK) {
        reg_fail(g, err, errlen, "cannot store the machine's noise");
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    sqlite3_bind_text(st, 1, n->machine, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, n->created_at[0] ? n->created_at : now, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 3, n->sigma);
    sqlite3_bind_int(st, 4, n->df);
    sqlite3_bind_double(st, 5, n->sigma_w);
    sqlite3_bind_int(st, 6, n->df_w);
    sqlite3_bind_int(st, 7, n->n);
    sqlite3_bind_text(st, 8, n->detail, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    release(g, st);
    if (rc != SQLITE_DONE) {
        reg_fail(g, err, errlen, "cannot store the machine's noise");
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    if (reg_exec(g, "COMMIT", err, errlen, "cannot store the machine's noise")) {
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    return 0;
}
