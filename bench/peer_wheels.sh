#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sizes of the RoPE peers' packages that bench/hf_rope.py would need on the GPU machine
# (FlashInfer, TransformerEngine), measured by downloading them (pip download --no-deps, into a
# temporary folder, deleted afterwards), with what each one requires besides (Requires-Dist of
# its metadata) and whether it is a built wheel or a source package that must be compiled there.
# Writes $OUT (default results/ops/peer-wheels.txt); needs network access to PyPI.
#
#   bash bench/peer_wheels.sh
#   PACKAGES="flashinfer-python" OUT=/tmp/pw.txt bash bench/peer_wheels.sh
#
# PACKAGES: the distributions (default below: FlashInfer's Python package and its prebuilt
# kernels, TransformerEngine's meta package, its core library for CUDA 12 and 13, and its PyTorch
# extension). LIMIT_MIB (default 64): the files a GPU run can take there besides the repository's
# tracked files, in MiB; the GPU machine has no network access, so a package it lacks must come that way.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/ops/peer-wheels.txt}
LIMIT_MIB=${LIMIT_MIB:-64}
PACKAGES=${PACKAGES:-"flashinfer-python flashinfer-cubin transformer-engine transformer-engine-cu12 transformer-engine-cu13 transformer-engine-torch"}
PY=${PYTHON:-python3}
case $LIMIT_MIB in ''|*[!0-9]*) echo "peer_wheels: LIMIT_MIB must be a whole number of MiB, got '$LIMIT_MIB'" >&2; exit 2 ;; esac
tmp=$(mktemp -d /tmp/rg-peer-wheels.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for p in $PACKAGES; do
  mkdir -p "$tmp/$p"
  if ! "$PY" -m pip download -q --no-deps -d "$tmp/$p" "$p" > "$tmp/$p.log" 2>&1; then
    echo "peer_wheels: pip download $p failed: $(tail -n 1 "$tmp/$p.log")" >&2
    exit 1
  fi
done
"$PY" - "$tmp" "$LIMIT_MIB" "$PY -m pip $("$PY" -m pip --version | cut -d' ' -f2)" $PACKAGES > "$tmp/out.txt" <<'EOF'
import email.parser, os, sys, tarfile, zipfile

tmp, limit, pip = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def metadata(path):
    """The package's metadata (a wheel's METADATA, a source package's PKG-INFO) as a Message."""
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            text = z.read(name).decode("utf-8", "replace")
    else:
        with tarfile.open(path) as t:
            member = min((m for m in t.getmembers() if m.name.endswith("/PKG-INFO")), key=lambda m: m.name.count("/"))
            text = t.extractfile(member).read().decode("utf-8", "replace")
    return email.parser.Parser().parsestr(text, headersonly=True)


rows, total = [], 0
for p in sys.argv[4:]:
    files = sorted(os.listdir(os.path.join(tmp, p)))
    if len(files) != 1:
        sys.exit("peer_wheels: %s: expected one file, got %s" % (p, files))
    f = files[0]
    size = os.path.getsize(os.path.join(tmp, p, f))
    total += size
    meta = metadata(os.path.join(tmp, p, f))
    kind = "wheel" if f.endswith(".whl") else "source package (compiled on install)"
    reqs = [r.split(";")[0].strip() for r in (meta.get_all("Requires-Dist") or []) if "extra ==" not in r]
    rows.append((p, meta["Version"], f, size, kind, reqs))
print("# The RoPE peers' packages (bench/peer_wheels.sh: pip download --no-deps, %s)" % pip)
print("# The GPU machine has no network access; the files a run takes there besides the repository's tracked")
print("# files are limited to %d MiB in all, so a package it lacks must fit in that, with what it requires." % limit)
print()
print("| package | version | file | MiB | kind | fits in %d MiB alone | requires besides (no extras) |" % limit)
print("|---|---|---|---|---|---|---|")
for p, v, f, size, kind, reqs in rows:
    print("| %s | %s | %s | %.1f | %s | %s | %s |" % (p, v, f, size / 2**20, kind, "yes" if size <= limit * 2**20
                                                    else "no", ", ".join(reqs) or "-"))
print()
print("total: %.1f MiB in %d files" % (total / 2**20, len(rows)))
EOF
mkdir -p "$(dirname "$OUT")"
mv -f "$tmp/out.txt" "$OUT"
cat "$OUT"
