# SPDX-License-Identifier: Apache-2.0
"""`pip install ./python` into a fresh virtual environment, and the installed
package working on its own. Standalone (CTest runs it; exit 77 = skipped, with
the reason):

    ROPEGRAD_LIB=build/libropegrad.so python3 python/tests/test_pip_install.py

1. python3 -m venv, then pip install --no-index ./python: the in-tree build
   backend needs nothing from an index; it builds libropegrad with CMake (CPU
   path, into a scratch build folder) and carries it in the wheel;
2. from /, with no $ROPEGRAD_LIB, PYTHONPATH or LD_LIBRARY_PATH, the venv's
   python imports the installed package, which loads the library bundled in
   it and runs one op on the CPU (rope_forward: cos/sin of position 0 are
   the scale and 0); the ctypes tests (test_ctypes_cpu.py) pass against it;
3. $ROPEGRAD_LIB, when set, is the only place looked at (the build's library
   is taken; a wrong path is an error naming it, not a fallback);
4. without the bundled copy, the library installed in the venv's prefix
   (<venv>/lib/libropegrad.so.N) is found.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)

# One op on the CPU through the installed package, standard library only.
PROBE = r"""
import ctypes, os, ropegrad
from ropegrad import rope_forward
B, S, D = 1, 2, 4
pos = (ctypes.c_int64 * (B * S))(0, 3)
inv = (ctypes.c_float * (D // 2))(1.0, 0.5)
out = (ctypes.c_uint16 * (B * S * D * 2))()
p = rope_forward.Problem(B, S, D, ctypes.addressof(pos), ctypes.addressof(inv), 2.0, ctypes.addressof(out))
rope_forward.cpu(p)
assert list(out[:D * 2]) == [0x4000, 0] * D, list(out[:D * 2])   # position 0: cos = 2.0 (bf16 0x4000), sin = 0
print(ropegrad.__file__)
print(ropegrad.library_path())
print(ropegrad.version())
"""


def run(cmd, env=None, cwd="/"):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    lib = os.environ.get("ROPEGRAD_LIB")
    if not lib or not os.path.exists(lib):
        print("FAIL: set ROPEGRAD_LIB to the built libropegrad.so")
        return 1
    rc, out = run([sys.executable, "-c", "import venv, ensurepip"])
    if rc != 0:
        print("SKIP: %s cannot make a venv with pip (%s)" % (sys.executable, out.strip().splitlines()[-1:]))
        return 77
    if not shutil.which("cmake"):
        print("SKIP: no cmake on PATH (pip install ./python builds libropegrad with it)")
        return 77
    tmp = tempfile.mkdtemp(prefix="rg_pip_")
    try:
        venv = os.path.join(tmp, "venv")
        rc, out = run([sys.executable, "-m", "venv", venv])
        if rc != 0:
            print("FAIL: python3 -m venv:\n" + out)
            return 1
        py = os.path.join(venv, "bin", "python")
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("ROPEGRAD_LIB", "PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME")}
        env = dict(clean, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
                   ROPEGRAD_WHEEL_BUILD=os.path.join(tmp, "build"))
        rc, out = run([py, "-m", "pip", "install", "--no-index", PYDIR], env=env)
        if rc != 0:
            print("FAIL: pip install ./python:\n" + out)
            return 1
        site = glob.glob(os.path.join(venv, "lib", "python*", "site-packages"))[0]
        dist = [d for d in os.listdir(site) if d.startswith("ropegrad-") and d.endswith(".dist-info")]
        bundled = os.path.join(site, "ropegrad", "libropegrad.so")
        if len(dist) != 1 or not os.path.isfile(bundled):
            print("FAIL: the installed package is incomplete: %s, %s" % (os.listdir(site),
                                                                       os.listdir(os.path.join(site, "ropegrad"))))
            return 1
        want_version = dist[0][len("ropegrad-"):-len(".dist-info")]

        # 2. The installed package alone: the bundled library, one op, the ctypes tests.
        rc, out = run([py, "-c", PROBE], env=clean)
        lines = out.split("\n")
        if rc != 0 or not lines[0].startswith(site) or lines[1] != bundled or lines[2] != want_version:
            print("FAIL: the installed package / its bundled library (want %s, version %s):\n%s"
                  % (bundled, want_version, out))
            return 1
        rc, out = run([py, os.path.join(HERE, "test_ctypes_cpu.py")], env=dict(clean, ROPEGRAD_TEST_INSTALLED="1"))
        if rc != 0:
            print("FAIL: test_ctypes_cpu.py against the installed package:\n" + out)
            return 1

        # 3. $ROPEGRAD_LIB overrides; a wrong one is an error, not a fallback.
        rc, out = run([py, "-c", PROBE], env=dict(clean, ROPEGRAD_LIB=lib))
        if rc != 0 or out.split("\n")[1] != lib:
            print("FAIL: $ROPEGRAD_LIB=%s was not the library taken:\n%s" % (lib, out))
            return 1
        rc, out = run([py, "-c", PROBE], env=dict(clean, ROPEGRAD_LIB="/nonexistent/libropegrad.so"))
        if rc == 0 or "/nonexistent/libropegrad.so" not in out:
            print("FAIL: a wrong $ROPEGRAD_LIB was not reported:\n" + out)
            return 1

        # 4. No bundled copy: the one installed in the venv's prefix, by its SONAME.
        os.remove(bundled)
        libdir = os.path.join(venv, "lib")
        for name in os.listdir(os.path.dirname(lib)):
            if name.startswith("libropegrad.so."):
                shutil.copy(os.path.realpath(lib), os.path.join(libdir, name))
        rc, out = run([py, "-c", PROBE], env=clean)
        if rc != 0 or os.path.dirname(out.split("\n")[1]) != libdir:
            print("FAIL: without a bundled copy, the library in %s was not found:\n%s" % (libdir, out))
            return 1
        print("ok: pip install ./python in a fresh venv builds and carries libropegrad; the installed package "
              "runs an op on the CPU; $ROPEGRAD_LIB overrides; the prefix's copy is found without a bundled one")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
