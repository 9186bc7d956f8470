# SPDX-License-Identifier: Apache-2.0
"""`pip install ./python` and the installed package finding the C library
(issue 12). Standalone (CTest runs it; exit 77 = skipped, with the reason):

    ROPEGRAD_LIB=build/libropegrad.so python3 python/tests/test_pip_install.py

1. pip installs the package into a fresh --target folder, offline (no index:
   the in-tree build backend needs nothing but pip);
2. from /, with only that folder on PYTHONPATH and no $ROPEGRAD_LIB, the
   installed package (not the source tree's) loads the library installed
   beside it (<target>/lib/libropegrad.so.0), then, with none there, the one
   the dynamic loader finds by its SONAME (LD_LIBRARY_PATH); never a decoy
   copy at the --target folder's grandparent (a <prefix>/lib only in a
   lib/pythonX.Y/site-packages layout);
3. the ctypes tests (test_ctypes_cpu.py) pass against the installed package;
4. $ROPEGRAD_LIB, when set, is the only place looked at.
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)


def run(cmd, env=None, cwd="/"):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    lib = os.environ.get("ROPEGRAD_LIB")
    if not lib or not os.path.exists(lib):
        print("FAIL: set ROPEGRAD_LIB to the built libropegrad.so")
        return 1
    rc, out = run([sys.executable, "-m", "pip", "--version"])
    if rc != 0:
        print("SKIP: pip is not available for %s (%s)" % (sys.executable, out.strip().splitlines()[-1:]))
        return 77
    tmp = tempfile.mkdtemp(prefix="rg_pip_")
    try:
        # The --target two levels down, and a decoy library at its grandparent
        # (tmp/): that is <prefix>/lib only in a lib/pythonX.Y/site-packages
        # layout, so the package must never take it.
        site = os.path.join(tmp, "t", "site")
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
        rc, out = run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--target", site, PYDIR],
                      env=env)
        if rc != 0:
            print("FAIL: pip install ./python:\n" + out)
            return 1
        if not os.path.exists(os.path.join(site, "ropegrad", "_lib.py")) or \
                not any(d.startswith("ropegrad-0.1.0.dist-info") for d in os.listdir(site)):
            print("FAIL: the installed package is incomplete: %s" % os.listdir(site))
            return 1

        clean = {k: v for k, v in os.environ.items() if k not in ("ROPEGRAD_LIB", "PYTHONPATH", "LD_LIBRARY_PATH")}
        clean["PYTHONPATH"] = site
        # A build made to run on another machine (ROPEGRAD_BUNDLE_RUNTIME, as
        # scripts/gpu-build.sh does) keeps its non-system dependencies in lib/
        # beside the library: the copies below need them on the loader's path.
        bundled = os.path.join(os.path.dirname(os.path.realpath(lib)), "lib")
        if os.path.isdir(bundled) and not os.path.exists(os.path.join(bundled, "libropegrad.so.0")):
            clean["LD_LIBRARY_PATH"] = bundled
        probe = ("import ropegrad, ropegrad._lib as L; "
                 "print(ropegrad.__file__); print(L.library_path()); print(ropegrad.version())")
        shutil.copy(os.path.realpath(lib), os.path.join(tmp, "libropegrad.so.0"))
        # (a) the library installed beside the package.
        os.makedirs(os.path.join(site, "lib"))
        shutil.copy(os.path.realpath(lib), os.path.join(site, "lib", "libropegrad.so.0"))
        rc, out = run([sys.executable, "-c", probe], env=clean)
        lines = out.split("\n")
        if rc != 0 or not lines[0].startswith(site) or lines[1] != os.path.join(site, "lib", "libropegrad.so.0") \
                or lines[2] != "0.1.0":
            print("FAIL: installed package / library beside it:\n" + out)
            return 1
        # (b) none beside it: the dynamic loader's, by SONAME.
        shutil.rmtree(os.path.join(site, "lib"))
        rc, out = run([sys.executable, "-c", probe], env=dict(clean, LD_LIBRARY_PATH=os.pathsep.join(
            filter(None, [os.path.dirname(lib), clean.get("LD_LIBRARY_PATH")]))))
        lines = out.split("\n")
        if rc != 0 or os.path.dirname(lines[1]) != os.path.dirname(lib) or not os.path.basename(lines[1]).startswith("libropegrad.so.0"):
            print("FAIL: library through the dynamic loader:\n" + out)
            return 1
        # (c) the ctypes tests against the installed package.
        rc, out = run([sys.executable, os.path.join(HERE, "test_ctypes_cpu.py")],
                      env=dict(clean, LD_LIBRARY_PATH=os.pathsep.join(filter(None, [os.path.dirname(lib), clean.get("LD_LIBRARY_PATH")])),
                               ROPEGRAD_TEST_INSTALLED="1"))
        if rc != 0:
            print("FAIL: test_ctypes_cpu.py against the installed package:\n" + out)
            return 1
        # (d) $ROPEGRAD_LIB is an explicit choice: a wrong one is an error, not a fallback.
        rc, out = run([sys.executable, "-c", probe],
                      env=dict(clean, LD_LIBRARY_PATH=os.path.dirname(lib), ROPEGRAD_LIB="/nonexistent/libropegrad.so"))
        if rc == 0 or "/nonexistent/libropegrad.so" not in out:
            print("FAIL: a wrong $ROPEGRAD_LIB was not reported:\n" + out)
            return 1
        print("ok: pip install ./python; the installed package finds libropegrad beside it and by SONAME")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
