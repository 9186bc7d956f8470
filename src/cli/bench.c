/* bench.c -- placeholder until implemented. */
#include <stdio.h>
#include "commands.h"
int rg_cmd_bench(int argc, char **argv) { fprintf(stderr, "ropegrad: %s: not implemented yet\n", argv[0]); return 2; }
int rg_cmd_check(int argc, char **argv) { fprintf(stderr, "ropegrad: %s: not implemented yet\n", argv[0]); return 2; }
