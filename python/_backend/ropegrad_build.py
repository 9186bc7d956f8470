# SPDX-License-Identifier: Apache-2.0
"""A PEP 517 build backend for ropegrad's pure-Python package, standard
library only. The package is a few .py files over ctypes: a wheel is a zip of
them plus the .dist-info metadata (PEP 427), which this writes directly.

Why not setuptools: `pip install ./python` builds in an isolated environment
and would first download setuptools (and wheel) from an index; on the machines
ropegrad is built on there is no index to download from. With this backend
(pyproject.toml: requires = [], backend-path = ["_backend"]) pip needs nothing
beyond itself."""

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "ropegrad"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # python/


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
            "Summary: The backward pass of RoPE cos/sin generation (ctypes over libropegrad; torch bindings)\n"
            "License: Apache-2.0\n"
            "Requires-Python: >=3.8\n"
            "Provides-Extra: torch\n"
            "Requires-Dist: torch; extra == \"torch\"\n" % (NAME, v))


def _package_files():
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            yield "%s/%s" % (NAME, name), os.path.join(pkg, name)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (arcname, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    v = _version()
    dist_info = "%s-%s.dist-info" % (NAME, v)
    wheel_name = "%s-%s-py3-none-any.whl" % (NAME, v)
    entries = []
    for arcname, path in _package_files():
        with open(path, "rb") as f:
            entries.append((arcname, f.read()))
    entries.append(("%s/METADATA" % dist_info, _metadata().encode()))
    entries.append(("%s/WHEEL" % dist_info,
                    b"Wheel-Version: 1.0\nGenerator: ropegrad_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    with open(os.path.join(HERE, "..", "LICENSE"), "rb") as f:
        entries.append(("%s/LICENSE" % dist_info, f.read()))
    record = "".join(_record_line(a, d) for a, d in entries) + "%s/RECORD,,\n" % dist_info
    entries.append(("%s/RECORD" % dist_info, record.encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
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
