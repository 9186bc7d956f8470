# SPDX-License-Identifier: Apache-2.0
"""Solution files that split 012's gap to its public CUDA peer into its parts.

    python3 dev/official/variants_012.py --peer PEER.json --fast FAST.json --out DIR

PEER.json: the public peer (../shared/official-evaluator/peers/012-peer.json).
FAST.json: ropegrad's fast kernel as a solution (`ropegrad export-solution
--suite suites/012-cos_sin --kernel 1`). Writes DIR/012-saved-NAME.json
for scripts/gpu-official.sh's SOLUTIONS entries saved-NAME:

  peerflags  the peer's file with ropegrad's spec (compile options -O3 and no
             --use_fast_math, target LOCAL): the same kernel source, so against
             the peer itself an A/A of the flags and of the round-to-round spread.
  peercore   the peer's file (its spec, its indexing, grid and host code) with
             its arithmetic (fp32 Cody-Waite modulo 2 pi, __sincosf) replaced by
             rg_sincos_core (rope_math.cuh shipped beside it): the peer's frame
             with ropegrad's arithmetic.
  fastmufu   ropegrad's fast solution with rg_sincos_core replaced by
             rg_sincos_mufu (the peer's arithmetic, rope_math.cuh's copy of it):
             ropegrad's frame with the peer's arithmetic.
  fastflags  ropegrad's fast solution with the peer's spec (no compile options:
             the evaluator's default -O3 --use_fast_math; target B200 and LOCAL).
  nofar      ropegrad's fast solution without its far-argument check and path
             (no call, no stack frame; wrong beyond 4e6 rad: a timing probe).
  vpt2big    ropegrad's fast solution at 2 values a thread on every size but
             1025-2048 rows (4 there, as shipped).
  nofar-vpt2big  both.
  farinline  ropegrad's fast solution with its far path inlined (no call).

Each edit must match exactly once, or nothing is written and the exit is 1.
None of these is a ropegrad kernel: the files exist to be timed beside the
peer and the fast kernel in one official call (dev/cos_sin/NOTES.md says what each
split showed).
"""

import argparse
import copy
import json
import os
import sys

PEER_MATH = """    float r0 = cw_reduce(f.x);
    float r1 = cw_reduce(f.y);

    float s0, c0, s1, c1;
    __sincosf(r0, &s0, &c0);
    __sincosf(r1, &s1, &c1);
"""
CORE_MATH = """    float s0, c0, s1, c1;
    rg_sincos_core(f.x, &s0, &c0);
    rg_sincos_core(f.y, &s1, &c1);
"""
PEER_INCLUDE = "#include <cuda_bf16.h>\n"
FAST_CALL = "        rg_sincos_core(f[i], &vs[i], &vc[i]);\n"
MUFU_CALL = "        rg_sincos_mufu(f[i], &vs[i], &vc[i]);\n"
FAR_TEST = "    if (far) {   // beyond the core's range"
NO_FAR_TEST = "    if (false && far) {   // beyond the core's range"
FAR_NOINLINE = "static __device__ __noinline__ void rg_cos_sin_far"
FAR_INLINE = "static __device__ __forceinline__ void rg_cos_sin_far"
FAST_VPT = "return rows <= 1024 ? 2 : 4; }"
VPT2BIG = "return rows > 1024 && rows <= 2048 ? 4 : 2; }"


class EditError(Exception):
    pass


def replace_once(text, old, new, where):
    n = text.count(old)
    if n != 1:
        raise EditError(f"{where}: expected one match of {old.strip()[:60]!r}, found {n}")
    return text.replace(old, new)


def source(sol, path):
    for s in sol["sources"]:
        if s["path"] == path:
            return s
    raise EditError(f"{sol.get('name', '?')}: no source {path}")


def variant(base, name, description):
    v = copy.deepcopy(base)
    v["name"] = f"{base['name']}-{name}"
    v["description"] = description
    return v


def peer_flags(peer, fast):
    v = variant(peer, "peerflags", "The public peer's kernel with ropegrad's spec (-O3, no fast math, LOCAL).")
    v["spec"] = copy.deepcopy(fast["spec"])
    return v


def edited(base, name, description, path, edits):
    """A variant of base whose source path has each (old, new) of edits replaced, each matching once."""
    v = variant(base, name, description)
    k = source(v, path)
    for old, new in edits:
        k["content"] = replace_once(k["content"], old, new, path)
    return v


KERNELS = "ropegrad_cos_sin_kernels.cuh"   # the fast solution's copy of src/op/cos_sin/kernels.cuh


def peer_core(peer, fast):
    v = edited(peer, "peercore", "The public peer's kernel and host code with ropegrad's rg_sincos_core arithmetic.",
               "kernel.cu", [(PEER_MATH, CORE_MATH), (PEER_INCLUDE, PEER_INCLUDE + '#include "rope_math.cuh"\n')])
    v["sources"].append(copy.deepcopy(source(fast, "rope_math.cuh")))
    return v


def fast_mufu(peer, fast):
    return edited(fast, "fastmufu", "ropegrad's fast kernel with the peer's arithmetic (rg_sincos_mufu).", KERNELS,
                  [(FAST_CALL, MUFU_CALL)])


def fast_flags(peer, fast):
    v = variant(fast, "fastflags", "ropegrad's fast kernel with the peer's spec (default flags, B200 and LOCAL).")
    v["spec"] = copy.deepcopy(peer["spec"])
    v["spec"]["entry_point"] = fast["spec"]["entry_point"]
    return v


def fast_edit(fast, name, description, edits):
    return edited(fast, name, description, KERNELS, edits)


def no_far(peer, fast):
    return fast_edit(fast, "nofar", "ropegrad's fast kernel without its far path (a timing probe).",
                     [(FAR_TEST, NO_FAR_TEST)])


def vpt2_big(peer, fast):
    return fast_edit(fast, "vpt2big", "ropegrad's fast kernel at 2 values a thread but on 1025-2048 rows.",
                     [(FAST_VPT, VPT2BIG)])


def no_far_vpt2_big(peer, fast):
    return fast_edit(fast, "nofar-vpt2big", "nofar and vpt2big together (a timing probe).",
                     [(FAR_TEST, NO_FAR_TEST), (FAST_VPT, VPT2BIG)])


def far_inline(peer, fast):
    return fast_edit(fast, "farinline", "ropegrad's fast kernel with its far path inlined (no call).",
                     [(FAR_NOINLINE, FAR_INLINE)])


VARIANTS = {"peerflags": peer_flags, "peercore": peer_core, "fastmufu": fast_mufu, "fastflags": fast_flags,
            "nofar": no_far, "vpt2big": vpt2_big, "nofar-vpt2big": no_far_vpt2_big, "farinline": far_inline}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", required=True)
    ap.add_argument("--fast", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=",".join(VARIANTS), help="comma-separated names (default: all)")
    a = ap.parse_args()
    try:
        with open(a.peer) as f:
            peer = json.load(f)
        with open(a.fast) as f:
            fast = json.load(f)
        names = [n for n in a.only.split(",") if n]
        for n in names:
            if n not in VARIANTS:
                raise EditError(f"unknown variant {n!r} (known: {', '.join(VARIANTS)})")
        made = {n: VARIANTS[n](peer, fast) for n in names}
    except (OSError, ValueError, KeyError, EditError) as e:
        print(f"variants_012: {e}", file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    for n, v in made.items():
        path = os.path.join(a.out, f"012-saved-{n}.json")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(v, f, indent=1)
        os.replace(tmp, path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
