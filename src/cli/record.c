/* record.c -- placeholder until implemented. */
#include <stdio.h>
#include "commands.h"
int rg_cmd_verify(int argc, char **argv) { fprintf(stderr, "ropegrad: %s: not implemented yet\n", argv[0]); return 2; }
int rg_cmd_runs(int argc, char **argv) { fprintf(stderr, "ropegrad: %s: not implemented yet\n", argv[0]); return 2; }
int rg_cmd_report(int argc, char **argv) { fprintf(stderr, "ropegrad: %s: not implemented yet\n", argv[0]); return 2; }
