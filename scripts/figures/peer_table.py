# SPDX-License-Identifier: Apache-2.0
"""What bench/vs_torch_apply.py and bench/vs_torch_ops.py share: a workload row's
failures and speedups, the geomeans of the implementations' medians, and the
Markdown table printed per op. A row is a dict with the workload's fields and,
for each implementation that ran, row[name] = {"median_us": ...} or
{"error": "..."}; "ropegrad" is always one of them. Standard library only
(tests/peer_table_test.py runs it without torch)."""

import math
import traceback


def geomean(xs):
    """The geometric mean of the positive values in xs (None, 0 and negatives
    left out); nan when there are none."""
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def record_failure(row, op, index, name, exc):
    """Implementation name failed on workload index: its error in the row,
    one line and the traceback on stdout."""
    row[name] = dict(error="%s: %s" % (type(exc).__name__, exc))
    print("op %s workload %d %s: %s" % (op, index, name, row[name]["error"][:300]))
    traceback.print_exc()


def add_speedups(row, others):
    """row["speedup_vs_X"]: X's median over ropegrad's, for each X in others
    that ran without error, when ropegrad did too."""
    rg = row["ropegrad"]
    for other in others:
        if other in row and "error" not in row[other] and "error" not in rg:
            row["speedup_vs_" + other] = row[other]["median_us"] / rg["median_us"]


def geomeans(rows, names):
    """Each implementation's geomean median over the rows where it ran."""
    return {n: geomean([r[n]["median_us"] for r in rows if n in r and "error" not in r[n]]) for n in names}


def median_cell(row, name):
    """An implementation's median in microseconds, "-" where it did not run or failed."""
    return "%.2f" % row[name]["median_us"] if name in row and "error" not in row[name] else "-"


def markdown_row(cells):
    """| a | b | c |, an empty cell as | |."""
    return "|" + "".join(" %s |" % c if c != "" else " |" for c in cells)


def print_op_table(op, header, body, footer):
    """The table for one op: "op OP", the header, its rule, one line per
    list of cells in body, then the footer's cells (the geomeans)."""
    print("op %s" % op)
    print(markdown_row(header))
    print("|" + "---|" * len(header))
    for cells in body:
        print(markdown_row(cells))
    print(markdown_row(footer))
