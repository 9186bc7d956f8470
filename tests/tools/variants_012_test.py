#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dev/official/variants_012.py, the split files of 012's fast kernel and its
public CUDA peer: every edit of ropegrad's side applies exactly once to the
shipped src/op/cos_sin/kernels.cuh (so a change there that breaks a probe fails
here, not on the GPU machine), changes only what it names, and the tool
refuses an edit that matches 0 or 2 times and an unknown name, writing nothing.
The peer's edits are checked on the public peer file where the checkout has
../shared (said otherwise, not skipped: the rest still runs).

Usage: variants_012_test.py REPO [PEER.json]. Exit 0, or 1 with the failing check."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

REPO = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(REPO, "..", "shared", "official-evaluator", "peers",
                                                               "012-peer.json")
sys.path.insert(0, os.path.join(REPO, "dev", "official"))
import variants_012 as v  # noqa: E402


def read(rel):
    with open(os.path.join(REPO, rel)) as f:
        return f.read()


def fast_solution():
    """ropegrad's fast solution as export-solution lays it out: the shipped headers under their solution names."""
    return {"name": "ropegrad_cuda_fast", "definition": "012_fused_cos_sin_embedding_generation",
            "description": "test", "author": "ropegrad",
            "spec": {"languages": ["cuda_cpp"], "target_hardware": ["LOCAL"], "entry_point": "kernel.cu::run",
                     "compile_options": {"cflags": ["-O3"], "cuda_cflags": ["-O3"], "ld_flags": []}},
            "sources": [{"path": "kernel.cu", "content": '#include "ropegrad_cos_sin_kernels.cuh"\n'},
                        {"path": "ropegrad_cos_sin_kernels.cuh", "content": read("src/op/cos_sin/kernels.cuh")},
                        {"path": "rope_math.cuh", "content": read("src/op/rope_math.cuh")}]}


def peer_solution():
    with open(PEER) as f:
        return json.load(f)


def by_path(sol):
    return {s["path"]: s["content"] for s in sol["sources"]}


FAST_EDITS = {  # name: the (old, new) pairs its kernels.cuh must show
    "fastmufu": [(v.FAST_CALL, v.MUFU_CALL)],
    "nofar": [(v.FAR_TEST, v.NO_FAR_TEST)],
    "vpt2big": [(v.FAST_VPT, v.VPT2BIG)],
    "nofar-vpt2big": [(v.FAR_TEST, v.NO_FAR_TEST), (v.FAST_VPT, v.VPT2BIG)],
    "farinline": [(v.FAR_NOINLINE, v.FAR_INLINE)],
}


class FastSide(unittest.TestCase):
    def test_each_edit_applies_once_to_the_shipped_kernels(self):
        base = fast_solution()
        kernels = by_path(base)["ropegrad_cos_sin_kernels.cuh"]
        for name, edits in FAST_EDITS.items():
            for old, _ in edits:
                self.assertEqual(kernels.count(old), 1, f"{name}: {old!r} in src/op/cos_sin/kernels.cuh")
            made = v.VARIANTS[name](None, base)
            got = by_path(made)["ropegrad_cos_sin_kernels.cuh"]
            want = kernels
            for old, new in edits:
                want = want.replace(old, new)
            self.assertEqual(got, want, name)
            self.assertNotEqual(got, kernels, name)
            self.assertEqual(made["name"], f"ropegrad_cuda_fast-{name}")
            self.assertEqual(made["spec"], base["spec"], name)
            others = {p: c for p, c in by_path(made).items() if p != "ropegrad_cos_sin_kernels.cuh"}
            self.assertEqual(others, {p: c for p, c in by_path(base).items() if p != "ropegrad_cos_sin_kernels.cuh"})
        self.assertEqual(fast_solution(), base, "the input solution was modified")

    def test_fast_flags_takes_the_peer_spec(self):
        peer = {"spec": {"languages": ["cuda_cpp"], "target_hardware": ["B200", "LOCAL"], "entry_point": "x.cu::run",
                         "destination_passing_style": False}}
        made = v.fast_flags(peer, fast_solution())
        self.assertEqual(made["spec"]["target_hardware"], ["B200", "LOCAL"])
        self.assertNotIn("compile_options", made["spec"])
        self.assertEqual(made["spec"]["entry_point"], "kernel.cu::run")
        self.assertEqual(made["sources"], fast_solution()["sources"])

    def test_an_edit_matching_zero_or_two_times_is_refused(self):
        with self.assertRaises(v.EditError):
            v.replace_once("abc", "x", "y", "t")
        with self.assertRaises(v.EditError):
            v.replace_once("xax", "x", "y", "t")
        broken = fast_solution()
        broken["sources"][1]["content"] = broken["sources"][1]["content"].replace(v.FAR_TEST, "    if (far) {")
        with self.assertRaises(v.EditError):
            v.no_far(None, broken)


class Cli(unittest.TestCase):
    def run_main(self, args):
        old = sys.argv
        sys.argv = ["variants_012.py"] + args
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                rc = v.main()
        finally:
            sys.argv = old
        return rc, err.getvalue()

    def test_writes_the_named_files_and_refuses_unknown_names(self):
        with tempfile.TemporaryDirectory() as tmp:
            fast = os.path.join(tmp, "fast.json")
            peer = os.path.join(tmp, "peer.json")
            with open(fast, "w") as f:
                json.dump(fast_solution(), f)
            with open(peer, "w") as f:
                json.dump({"name": "p", "spec": {}, "sources": []}, f)
            out = os.path.join(tmp, "out")
            rc, err = self.run_main(["--peer", peer, "--fast", fast, "--out", out, "--only", "nofar,bogus"])
            self.assertEqual(rc, 1)
            self.assertIn("unknown variant 'bogus'", err)
            self.assertFalse(os.path.exists(out), "a refused call wrote files")
            rc, err = self.run_main(["--peer", peer, "--fast", fast, "--out", out, "--only", "nofar,farinline"])
            self.assertEqual(rc, 0, err)
            self.assertEqual(sorted(os.listdir(out)), ["012-saved-farinline.json", "012-saved-nofar.json"])
            with open(os.path.join(out, "012-saved-nofar.json")) as f:
                self.assertEqual(json.load(f)["name"], "ropegrad_cuda_fast-nofar")
            # a peer file without the peer's arithmetic: peercore refuses, and nothing is written
            rc, err = self.run_main(["--peer", peer, "--fast", fast, "--out", os.path.join(tmp, "o2"),
                                     "--only", "peercore"])
            self.assertEqual(rc, 1)
            self.assertFalse(os.path.exists(os.path.join(tmp, "o2")))


@unittest.skipUnless(os.path.exists(PEER), f"no public peer file at {PEER} (the checkout has no ../shared)")
class PeerSide(unittest.TestCase):
    def test_peer_core_and_flags(self):
        peer, fast = peer_solution(), fast_solution()
        core = v.peer_core(peer, fast)
        k = by_path(core)["kernel.cu"]
        self.assertNotIn("__sincosf", k)
        self.assertEqual(k.count("rg_sincos_core("), 2)
        self.assertIn('#include "rope_math.cuh"', k)
        self.assertEqual(by_path(core)["rope_math.cuh"], read("src/op/rope_math.cuh"))
        self.assertEqual(core["spec"], peer["spec"])
        flags = v.peer_flags(peer, fast)
        self.assertEqual(flags["spec"], fast["spec"])
        self.assertEqual(flags["sources"], peer["sources"])
        self.assertEqual(peer_solution(), peer, "the peer solution was modified")


if __name__ == "__main__":
    if not os.path.exists(PEER):
        print(f"note: no public peer file at {PEER}: the peer's edits are not checked here")
    sys.exit(0 if unittest.main(argv=[sys.argv[0]], exit=False).result.wasSuccessful() else 1)
