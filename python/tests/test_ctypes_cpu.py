# SPDX-License-Identifier: Apache-2.0
"""The ctypes halves of the op modules (rope_backward, rope_forward, cos_sin)
against libropegrad's CPU path, with plain ctypes arrays: no torch, no numpy. Runs anywhere the C library is built:

    ROPEGRAD_LIB=build/libropegrad.so python3 python/tests/test_ctypes_cpu.py   (or pytest)

What it proves: the Problem structure's layout matches the C struct (a wrong
offset would make the library read the wrong pointers or sizes: validation
errors or wrong numbers), argtypes/restypes are right (the float scale and
int64 sizes arrive intact), errors come back as RopegradError with the
library's message, and the CPU path agrees with the library's float64
reference and with an independent pure-Python float64 evaluation.
"""

import ctypes
import math
import os
import random
import struct
import sys

# The source tree's package, unless the installed one is under test (test_pip_install.py).
if not os.environ.get("ROPEGRAD_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ropegrad  # noqa: E402
from ropegrad import _lib, cos_sin, rope_backward, rope_forward  # noqa: E402

U = 2.0 ** -24


def _bf16_bits(x):
    """Round-to-nearest-even float -> bfloat16 bits, and the value it represents."""
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return b, struct.unpack("<f", struct.pack("<I", b << 16))[0]


def _f16_bits(x):
    h = struct.pack("<e", x)
    return struct.unpack("<H", h)[0], struct.unpack("<e", h)[0]


def make_case(B, S, D, dtype, shared_inv, seed, scale=0.0883883):
    """Random normal inputs in ctypes arrays, plus their exact values as Python floats."""
    rng = random.Random(seed)
    H = D // 2
    n = B * S * D
    if dtype == ropegrad.F32:
        gc_arr, gs_arr = (ctypes.c_float * n)(), (ctypes.c_float * n)()
    else:
        gc_arr, gs_arr = (ctypes.c_uint16 * n)(), (ctypes.c_uint16 * n)()
    gc, gs = [0.0] * n, [0.0] * n
    for arr, vals in ((gc_arr, gc), (gs_arr, gs)):
        for i in range(n):
            x = rng.gauss(0.0, 1.0)
            if dtype == ropegrad.F32:
                arr[i] = x
                vals[i] = arr[i]  # the float32-rounded value
            else:
                bits, v = _bf16_bits(x) if dtype == ropegrad.BF16 else _f16_bits(x)
                arr[i] = bits
                vals[i] = v
    emb_arr = (ctypes.c_float * n)(*[rng.gauss(0.0, 1.0) for _ in range(n)])
    ninv = H if shared_inv else B * H
    inv_arr = (ctypes.c_float * ninv)(*[rng.gauss(0.0, 1.0) for _ in range(ninv)])
    out_arr = (ctypes.c_float * (B * S))(*([float("nan")] * (B * S)))
    p = rope_backward.Problem()
    p.batch_size, p.seq_len, p.head_dim = B, S, D
    p.grad_dtype = dtype
    p.grad_cos = ctypes.addressof(gc_arr)
    p.grad_sin = ctypes.addressof(gs_arr)
    p.emb = ctypes.addressof(emb_arr)
    p.inv_freq = ctypes.addressof(inv_arr)
    p.inv_freq_batch_stride = 0 if shared_inv else H
    p.attention_scaling = scale
    p.grad_position_ids = ctypes.addressof(out_arr)
    case = dict(B=B, S=S, D=D, H=H, gc=gc, gs=gs, emb=list(emb_arr), inv=list(inv_arr), shared=shared_inv,
                scale=p.attention_scaling, keep=(gc_arr, gs_arr, emb_arr, inv_arr), out=out_arr)
    return p, case


def python_reference(c):
    """float64 evaluation of the formula, row by row, plus each row's error
    bound (the derivation is in tests/test_cpu.c: |scale|*(H+12)*u*M)."""
    B, S, D, H = c["B"], c["S"], c["D"], c["H"]
    ref, bound = [], []
    for b in range(B):
        inv = c["inv"][0:H] if c["shared"] else c["inv"][b * H:(b + 1) * H]
        for s in range(S):
            base = (b * S + s) * D
            acc, mag = 0.0, 0.0
            for d in range(H):
                GS = c["gs"][base + d] + c["gs"][base + d + H]
                GC = c["gc"][base + d] + c["gc"][base + d + H]
                e = c["emb"][base + d]
                acc += inv[d] * (GS * math.cos(e) - GC * math.sin(e))
                mag += abs(inv[d]) * (abs(GS) + abs(GC))
            ref.append(c["scale"] * acc)
            bound.append(abs(c["scale"]) * (H + 12) * U * mag * 1.01 + 1e-30)
    return ref, bound


def test_layout_and_version():
    assert ctypes.sizeof(rope_backward.Problem) == 88
    v = ropegrad.version()
    assert v.count(".") == 2, v
    assert ropegrad.cpu_isa() in ("avx512", "avx2", "portable"), ropegrad.cpu_isa()
    assert os.path.exists(ropegrad.library_path())


def test_cpu_matches_float64():
    cases = [(2, 5, 128, ropegrad.BF16, False), (1, 3, 128, ropegrad.F16, True), (3, 2, 64, ropegrad.F32, False),
             (1, 7, 2, ropegrad.BF16, True), (2, 2, 36, ropegrad.F32, True)]
    for i, (B, S, D, dt, shared) in enumerate(cases):
        p, c = make_case(B, S, D, dt, shared, seed=100 + i)
        rope_backward.cpu(p, 2)
        out = list(c["out"])
        ref, bound = python_reference(c)
        lib_ref = (ctypes.c_double * (B * S))()
        rope_backward.reference(p, lib_ref)
        for r in range(B * S):
            assert math.isfinite(out[r]), "row %d not written" % r
            err = abs(out[r] - ref[r])
            assert err <= bound[r], "case %d row %d: cpu %r ref %r err %.3g > bound %.3g" % (
                i, r, out[r], ref[r], err, bound[r])
            # the library's float64 reference and ours agree to float64 rounding
            assert abs(lib_ref[r] - ref[r]) <= 1e-6 * bound[r], (
                "case %d row %d: library reference %r vs python %r" % (i, r, lib_ref[r], ref[r]))
        assert any(abs(x) > 0 for x in out)


def test_errors_raise():
    p, c = make_case(1, 2, 8, ropegrad.F32, True, seed=7)
    rope_backward.validate(p)  # fine as built
    checks = [
        ("head_dim", 7, _lib.RopegradError),
        ("batch_size", 0, _lib.RopegradError),
        ("grad_dtype", 9, _lib.RopegradError),
        ("inv_freq_batch_stride", -1, _lib.RopegradError),
        ("attention_scaling", float("inf"), _lib.RopegradError),
    ]
    for field, bad, exc in checks:
        q, _ = make_case(1, 2, 8, ropegrad.F32, True, seed=7)
        setattr(q, field, bad)
        try:
            rope_backward.cpu(q, 1)
        except exc as e:
            assert e.code != 0 and e.message == ropegrad.strerror(e.code) and e.message, (field, e)
            assert "ropegrad_rope_backward_cpu" in str(e)
        else:
            raise AssertionError("%s=%r was accepted" % (field, bad))
    q, _ = make_case(1, 2, 8, ropegrad.F32, True, seed=7)
    q.grad_position_ids = None
    try:
        rope_backward.cpu(q, 1)
    except _lib.RopegradError as e:
        assert e.code == 11, e  # ROPEGRAD_ERR_NULL_OUTPUT
    else:
        raise AssertionError("NULL output accepted")
    # CPU memory on the CUDA path: refused (no GPU here: NO_CUDA; with one: NOT_DEVICE_POINTER)
    q, _ = make_case(1, 2, 8, ropegrad.F32, True, seed=7)
    try:
        rope_backward.cuda(q, 0)
    except _lib.RopegradError as e:
        assert e.code in (_lib.ERR_NO_CUDA, _lib.ERR_NOT_DEVICE_POINTER), e
    else:
        raise AssertionError("host memory accepted by the CUDA path")


def _bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def _half_ulp_bf16(v):
    return 2.0 ** (math.floor(math.log2(abs(v))) - 8) if v else 0.0


def test_forward_ops_cpu():
    """011 and 012 through ctypes: the structs' layouts, and every output the
    bf16 nearest to the float64 formula (pure Python), per batch positions."""
    B, S, D, H = 2, 5, 8, 4
    pos = (ctypes.c_int64 * (B * S))(*[100000 + 3 * i if i < S else 7 * i for i in range(B * S)])
    inv = (ctypes.c_float * H)(1.0, 0.1, 0.01, 0.001)
    out = (ctypes.c_uint16 * (B * S * D * 2))()
    p = rope_forward.Problem(B, S, D, ctypes.addressof(pos), ctypes.addressof(inv), 0.5, ctypes.addressof(out))
    rope_forward.cpu(p)
    f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]  # noqa: E731
    for r in range(B * S):
        for j in range(D):
            x = f32(f32(float(pos[r])) * inv[j % H])   # the float32 product
            for k, ref in enumerate((0.5 * math.cos(x), 0.5 * math.sin(x))):
                got = _bf16_value(out[(r * D + j) * 2 + k])
                assert abs(got - ref) <= _half_ulp_bf16(ref) * (1 + 1e-9) + 1e-30, (r, j, k, got, ref)
    freqs = (ctypes.c_float * (B * S * H))(*[f32((i - 20) * 0.37) for i in range(B * S * H)])
    cos = (ctypes.c_uint16 * (B * S * D))()
    sin = (ctypes.c_uint16 * (B * S * D))()
    q = cos_sin.Problem(B, S, D, ctypes.addressof(freqs), 2.0, ctypes.addressof(cos), ctypes.addressof(sin))
    cos_sin.cpu(q, 1)
    for r in range(B * S):
        for j in range(D):
            x = freqs[r * H + j % H]
            for arr, ref in ((cos, 2.0 * math.cos(x)), (sin, 2.0 * math.sin(x))):
                got = _bf16_value(arr[r * D + j])
                assert abs(got - ref) <= _half_ulp_bf16(ref) * (1 + 1e-9) + 1e-30, (r, j, got, ref)
    bad = rope_forward.Problem(B, S, 7, ctypes.addressof(pos), ctypes.addressof(inv), 0.5, ctypes.addressof(out))
    try:
        rope_forward.cpu(bad)
    except ropegrad.RopegradError as e:
        assert e.code == 4, e   # ROPEGRAD_ERR_BAD_HEAD_DIM
    else:
        raise AssertionError("odd head_dim accepted")


def test_missing_library_message():
    import subprocess
    env = dict(os.environ, ROPEGRAD_LIB="/nonexistent/libropegrad.so")
    code = ("import sys; sys.path.insert(0, %r); import ropegrad\n"
            "try:\n    ropegrad.version()\nexcept OSError as e:\n    print('OSError', e)\n"
            % os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "OSError" in r.stdout and "/nonexistent/libropegrad.so" in r.stdout, r.stdout


if __name__ == "__main__":
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    for t in tests:
        t()
        print("ok", t.__name__)
    print("all %d passed" % len(tests))
