#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the README's examples as written, top to bottom, the way a new user
# would in a fresh clone: every fenced ```sh block right after a line
# `<!-- example -->` is run, in README order, by one bash (set -e) in a
# scratch folder laid out like a clone (build/, suites/, python/ and a
# ../shared beside it), so state carries from one block to the next (the
# runs a block records are the runs the next one names).
#
# Every other ```sh block must say why it is not run here, on the line
# before it: `<!-- example: not run: REASON -->` (a GPU, an install into
# /usr/local, a build of minutes...). An unmarked block fails the check, so
# a new example cannot dodge it by accident.
#
#   bash scripts/readme_examples.sh BUILD_DIR [README]
#
# Exit 0 when every marked block ran and exited 0; 1 otherwise (the failing
# command is shown); 2 on bad arguments; 77 (skipped) with no ../shared.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: readme_examples.sh BUILD_DIR [README]}
readme=${2:-$src/README.md}
build=$(cd "$build" && pwd)
shared=$(cd "$src/.." && pwd)/shared
[ -x "$build/ropegrad" ] || { echo "readme_examples: $build/ropegrad: not built" >&2; exit 2; }
[ -d "$shared/kernelindex" ] || { echo "SKIP: readme_examples: no ../shared beside the clone (the public record the examples import)"; exit 77; }

work=$(mktemp -d /tmp/rg-readme.XXXXXX)
script=$work/examples.sh
cleanup() {
    # Whatever an example left running in the background (a server) ends here.
    [ -f "$work/pids" ] && while read -r p; do kill "$p" 2>/dev/null || true; done <"$work/pids"
    rm -rf "$work"
}
trap cleanup EXIT

# Extract: the marked blocks, in order, into one script (bash -x shows each
# command as it runs).
awk -v out="$script" '
    /^<!-- example -->$/ { want = 1; next }
    /^<!-- example: not run: .+ -->$/ { skip = 1; next }
    /^```sh$/ {
        if (!want && !skip) { printf "README.md:%d: a sh block without <!-- example --> or <!-- example: not run: REASON -->\n", NR; bad = 1 }
        inblock = want ? 1 : 2; want = skip = 0; nblock += (inblock == 1); next
    }
    /^```/ && inblock { inblock = 0; next }
    inblock == 1 { print >> out; ncmd++; next }
    { want = skip = 0 }
    END { if (bad) exit 1; if (!nblock) { print "no <!-- example --> blocks in the README"; exit 1 } }
' "$readme" || exit 1

mkdir -p "$work/clone"
ln -s "$shared" "$work/shared"
ln -s "$build" "$work/clone/build"
for d in suites python scripts tests; do ln -s "$src/$d" "$work/clone/$d"; done
cd "$work/clone"
# The examples' own registry and defaults, never the user's: HOME and the XDG
# folders point into the scratch folder.
export HOME=$work/home XDG_DATA_HOME=$work/home/.local/share
unset ROPEGRAD_DB
mkdir -p "$HOME"
# A background job an example starts (`serve ... &`) is remembered so the
# trap ends it even when the example forgets to.
if PS4='+ ' timeout 600 bash -x -e -o pipefail -c "trap 'jobs -p >>\"$work/pids\"' EXIT; source \"$script\""; then
    echo "readme_examples: every example ran ($(grep -cv '^ *\(#\|$\)' "$script") lines)"
else
    rc=$?
    echo "readme_examples: FAILED (exit $rc) at the last command shown above" >&2
    exit 1
fi
