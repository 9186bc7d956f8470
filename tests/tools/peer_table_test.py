#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/figures/peer_table.py, the rows and tables bench/vs_torch_apply.py and
bench/vs_torch_ops.py share, without torch: failures, speedups, geomeans,
cells, and the two scripts' tables on made-up rows (the format each printed
before the tables were shared).

Usage: peer_table_test.py REPO. Exit 0, or 1 with the failing check."""
import contextlib
import io
import math
import os
import sys
import unittest

REPO = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts", "figures"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import peer_table  # noqa: E402
import vs_torch_apply  # noqa: E402
import vs_torch_ops  # noqa: E402


def printed(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        fn(*args)
    return out.getvalue()


class PeerTable(unittest.TestCase):
    def test_geomean_skips_missing_and_nonpositive(self):
        self.assertAlmostEqual(peer_table.geomean([1.0, 4.0, None, 0, -2.0]), 2.0)
        self.assertTrue(math.isnan(peer_table.geomean([None, 0])))

    def test_speedups_only_where_both_ran(self):
        row = dict(ropegrad=dict(median_us=2.0), eager=dict(median_us=5.0), compile=dict(error="E: x"))
        peer_table.add_speedups(row, ("eager", "compile", "liger"))
        self.assertEqual(row["speedup_vs_eager"], 2.5)
        self.assertNotIn("speedup_vs_compile", row)
        self.assertNotIn("speedup_vs_liger", row)
        failed = dict(ropegrad=dict(error="E: x"), eager=dict(median_us=5.0))
        peer_table.add_speedups(failed, ("eager",))
        self.assertNotIn("speedup_vs_eager", failed)

    def test_geomeans_and_cells(self):
        rows = [dict(ropegrad=dict(median_us=1.0), eager=dict(error="E: x")),
                dict(ropegrad=dict(median_us=9.0), eager=dict(median_us=3.0))]
        gm = peer_table.geomeans(rows, ("ropegrad", "eager", "compile"))
        self.assertAlmostEqual(gm["ropegrad"], 3.0)
        self.assertAlmostEqual(gm["eager"], 3.0)
        self.assertTrue(math.isnan(gm["compile"]))
        self.assertEqual(peer_table.median_cell(rows[1], "ropegrad"), "9.00")
        self.assertEqual(peer_table.median_cell(rows[0], "eager"), "-")
        self.assertEqual(peer_table.median_cell(rows[0], "compile"), "-")

    def test_failure_recorded_and_printed(self):
        row = {}
        try:
            raise ValueError("bad shape")
        except ValueError as e:
            text = printed(peer_table.record_failure, row, "088", 3, "eager", e)
        self.assertEqual(row, dict(eager=dict(error="ValueError: bad shape")))
        self.assertEqual(text, "op 088 workload 3 eager: ValueError: bad shape\n")

    def test_markdown(self):
        self.assertEqual(peer_table.markdown_row(["geomean", "", "1.00", ""]), "| geomean | | 1.00 | |")
        text = printed(peer_table.print_op_table, "011", ["#", "x"], [["0", "a"], ["1", "b"]], ["geomean", ""])
        self.assertEqual(text, "op 011\n| # | x |\n|---|---|\n| 0 | a |\n| 1 | b |\n| geomean | |\n")

    def test_apply_table(self):
        row = dict(index=0, batch_size=2, num_heads=32, num_kv_heads=8, seq_len=128,
                   ropegrad=dict(median_us=4.0, passed=True), eager=dict(median_us=10.0), liger=dict(error="E: x"))
        peer_table.add_speedups(row, vs_torch_apply.NAMES[1:])
        gm = peer_table.geomeans([row], vs_torch_apply.NAMES)
        self.assertEqual(printed(vs_torch_apply.print_table, "068", [row], gm).splitlines(), [
            "op 068",
            "| # | B | H | Hkv | S | ropegrad us | eager | compile | liger | vs eager | vs compile | vs liger | pass |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
            "| 0 | 2 | 32 | 8 | 128 | 4.00 | 10.00 | - | - | 2.50x | - | - | yes |",
            "| geomean | | | | | 4.00 | 10.00 | nan | nan |"])

    def test_ops_table(self):
        row = dict(index=5, batch_size=4, seq_len=64, ropegrad=dict(median_us=2.0, passed=False),
                   eager=dict(median_us=5.0), compile=dict(median_us=3.0))
        peer_table.add_speedups(row, vs_torch_ops.NAMES[1:])
        gm = peer_table.geomeans([row], vs_torch_ops.NAMES)
        self.assertEqual(printed(vs_torch_ops.print_table, "012", [row], gm).splitlines(), [
            "op 012",
            "| # | B | S | ropegrad | eager | compile | vs eager | vs compile | pass |",
            "|---|---|---|---|---|---|---|---|---|",
            "| 5 | 4 | 64 | 2.00 | 5.00 | 3.00 | 2.5x | 1.5x | NO |",
            "| geomean | | | 2.00 | 5.00 | 3.00 | 2.5x | 1.5x | |"])


if __name__ == "__main__":
    unittest.main()
