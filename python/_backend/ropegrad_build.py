# SPDX-License-Identifier: Apache-2.0
"""A PEP 517 build backend for ropegrad's Python package, standard library
only. `pip install ./python` builds a wheel holding the package's .py files
and libropegrad itself:

  * by default it builds the library from the checkout around python/ with
    CMake (the library alone: -DROPEGRAD_BUILD_CLI=OFF, CPU path only unless
    asked for CUDA), in <checkout>/build-wheel, kept so that a second install
    rebuilds nothing;
  * the shared libraries it needs that a bare machine may lack (SLEEF, the
    OpenMP runtime) go beside it in the package, where its RUNPATH ($ORIGIN)
    finds them;
  * ropegrad._lib loads that copy first ($ROPEGRAD_LIB still overrides).

Settings (pip's --config-settings KEY=VALUE, or the environment):
  cuda  / ROPEGRAD_WHEEL_CUDA   OFF (default), AUTO (when nvcc is found) or ON:
                                the library's CUDA path too (minutes to build)
  lib   / ROPEGRAD_WHEEL_LIB    an already built libropegrad.so to bundle
                                instead of building one
  build / ROPEGRAD_WHEEL_BUILD  the CMake build folder (default <checkout>/build-wheel)

Why not setuptools or scikit-build: pip would first download them from an
index; with this backend (pyproject.toml: requires = [], backend-path =
["_backend"]) pip needs nothing beyond itself, CMake and a C compiler."""

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

NAME = "ropegrad"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # python/
CHECKOUT = os.path.dirname(HERE)
# Libraries every Linux has (glibc's and the compiler's C runtime): never bundled.
SYSTEM_LIBS = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so",
               "libgcc_s.so", "libcuda.so")


def _version():
    # The one version of the project: include/ropegrad.h's, repeated in pyproject.toml.
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("version"):
                return line.split("=", 1)[1].strip().strip('"')
    raise RuntimeError("pyproject.toml: no version")


def _metadata():
    v = _version()
    return ("Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: RoPE kernels (forward, cos/sin, backward, apply) over ctypes, with torch bindings\n"
            "License: Apache-2.0\n"
            "Requires-Python: >=3.8\n"
            "Provides-Extra: torch\n"
            "Requires-Dist: torch; extra == \"torch\"\n" % (NAME, v))


def _setting(config_settings, key, env, default):
    value = (config_settings or {}).get(key)
    return value if value else os.environ.get(env, default)


def _log(msg):
    sys.stderr.write("ropegrad_build: %s\n" % msg)
    sys.stderr.flush()


def _run(cmd):
    _log(" ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout)
        raise RuntimeError("ropegrad_build: %s failed (exit %d); its output is above" % (cmd[0], p.returncode))


def _build_library(config_settings):
    """Builds libropegrad with CMake; returns the path of the built file."""
    if not os.path.isfile(os.path.join(CHECKOUT, "CMakeLists.txt")) or \
            not os.path.isfile(os.path.join(CHECKOUT, "include", "ropegrad.h")):
        raise RuntimeError("ropegrad_build: %s is not a ropegrad checkout (no CMakeLists.txt, include/ropegrad.h); "
                           "install from a checkout (pip install ./python) or give an already built library "
                           "(ROPEGRAD_WHEEL_LIB=.../libropegrad.so)" % CHECKOUT)
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("ropegrad_build: cmake is not on PATH (building libropegrad needs CMake, a C compiler, "
                           "SLEEF and OpenMP: bash scripts/deps.sh installs them)")
    cuda = _setting(config_settings, "cuda", "ROPEGRAD_WHEEL_CUDA", "OFF").upper()
    if cuda not in ("OFF", "AUTO", "ON"):
        raise RuntimeError("ropegrad_build: cuda=%s: OFF, AUTO or ON" % cuda)
    build = os.path.abspath(_setting(config_settings, "build", "ROPEGRAD_WHEEL_BUILD",
                                     os.path.join(CHECKOUT, "build-wheel")))
    cfg = [cmake, "-S", CHECKOUT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DROPEGRAD_BUILD_CLI=OFF",
           "-DBUILD_TESTING=OFF", "-DROPEGRAD_CUDA=%s" % cuda]
    if shutil.which("ninja") and not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        cfg += ["-G", "Ninja"]
    _log("building libropegrad (CUDA %s) in %s" % (cuda, build))
    _run(cfg)
    _run([cmake, "--build", build, "--target", "libropegrad", "--parallel",
          os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)])
    return os.path.join(build, "libropegrad.so")


def _needed(lib):
    """(soname, path) of each shared library lib loads that is not a system one (ldd)."""
    try:
        out = subprocess.run(["ldd", lib], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    except OSError:
        return []
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if m and not m.group(1).startswith(SYSTEM_LIBS) and not m.group(1).startswith("libropegrad"):
            found.append((m.group(1), m.group(2)))
    return found


def _library_files(config_settings):
    """[(name in the package, bytes)]: libropegrad.so and what it needs beside it."""
    lib = _setting(config_settings, "lib", "ROPEGRAD_WHEEL_LIB", "") or _build_library(config_settings)
    if not os.path.isfile(lib):
        raise RuntimeError("ropegrad_build: %s: no such library" % lib)
    files = [("libropegrad.so", lib)] + _needed(lib)
    _log("bundling %s" % ", ".join("%s (%s)" % (n, os.path.realpath(p)) for n, p in files))
    out = []
    for name, path in files:
        with open(os.path.realpath(path), "rb") as f:
            out.append(("%s/%s" % (NAME, name), f.read()))
    return out


def _package_files():
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            yield "%s/%s" % (NAME, name), os.path.join(pkg, name)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (arcname, digest, len(data))


def _platform_tag():
    return re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    v = _version()
    dist_info = "%s-%s.dist-info" % (NAME, v)
    tag = "py3-none-%s" % _platform_tag()
    wheel_name = "%s-%s-%s.whl" % (NAME, v, tag)
    entries = []
    for arcname, path in _package_files():
        with open(path, "rb") as f:
            entries.append((arcname, f.read(), 0o644))
    entries += [(arcname, data, 0o755) for arcname, data in _library_files(config_settings)]
    entries.append(("%s/METADATA" % dist_info, _metadata().encode(), 0o644))
    entries.append(("%s/WHEEL" % dist_info, ("Wheel-Version: 1.0\nGenerator: ropegrad_build\n"
                                             "Root-Is-Purelib: false\nTag: %s\n" % tag).encode(), 0o644))
    with open(os.path.join(CHECKOUT, "LICENSE"), "rb") as f:
        entries.append(("%s/LICENSE" % dist_info, f.read(), 0o644))
    record = "".join(_record_line(a, d) for a, d, _ in entries) + "%s/RECORD,,\n" % dist_info
    entries.append(("%s/RECORD" % dist_info, record.encode(), 0o644))
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data, mode in entries:
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    """The Python files only: a wheel built from it needs ROPEGRAD_WHEEL_LIB
    (an already built library), the C sources being the checkout's."""
    v = _version()
    base = "%s-%s" % (NAME, v)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "_backend/ropegrad_build.py"] + [a for a, _ in _package_files()]:
            t.add(os.path.join(HERE, rel), arcname="%s/%s" % (base, rel))
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        data = _metadata().encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name
