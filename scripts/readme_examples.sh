#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the examples of the README and of the docs pages as written, top to
# bottom, the way a new user would in a fresh clone: every fenced ```sh block
# right after a line `<!-- example -->` is run, in the page's order, by one
# bash (set -e) in a scratch folder laid out like a clone (build/, suites/,
# python/, scripts/, tests/, examples/, results/ and a ../shared beside it),
# so state carries from one block of a page to the next (the runs a block
# records are the runs the next one names). Each page runs in a scratch folder
# of its own: a page's examples assume nothing another page made.
#
# Every other ```sh block must say why it is not run here, on the line
# before it: `<!-- example: not run: REASON -->` (a GPU, an install into
# /usr/local, a build of minutes...). An unmarked block fails the check, so
# a new example cannot dodge it by accident.
#
#   bash scripts/readme_examples.sh BUILD_DIR [PAGE...]   (default: README.md, then docs/**/*.md, sorted)
#   bash scripts/readme_examples.sh --extract PAGE        print the script PAGE's examples make; run nothing
#
# Exit 0 when every marked block ran and exited 0; 1 otherwise (the failing
# page and command are shown); 2 on bad arguments; 77 (skipped) with no
# ../shared.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)

# extract PAGE OUT: the marked blocks of PAGE, in order, into OUT. Exit 1 (and
# a line naming the page and line) on a sh block that is neither marked to run
# nor marked not run.
extract() {
    awk -v out="$2" -v name="$3" '
        /^<!-- example -->$/ { want = 1; next }
        /^<!-- example: not run: .+ -->$/ { skip = 1; next }
        /^```sh$/ {
            if (!want && !skip) { printf "%s:%d: a sh block without <!-- example --> or <!-- example: not run: REASON -->\n", name, NR; bad = 1 }
            inblock = want ? 1 : 2; want = skip = 0; next
        }
        /^```/ && inblock { inblock = 0; next }
        inblock == 1 { print >> out; next }
        { want = skip = 0 }
        END { if (bad) exit 1 }
    ' "$1"
    touch "$2"
}

if [ "${1:-}" = --extract ]; then
    page=${2:?usage: readme_examples.sh --extract PAGE}
    out=$(mktemp)
    trap 'rm -f "$out"' EXIT
    extract "$page" "$out" "$page" || exit 1
    cat "$out"
    exit 0
fi

build=${1:?usage: readme_examples.sh BUILD_DIR [PAGE...]}
shift
if [ $# -gt 0 ]; then
    pages=("$@")
else
    pages=("$src/README.md")
    while IFS= read -r p; do pages+=("$p"); done < <(find "$src/docs" -name '*.md' -type f 2>/dev/null | LC_ALL=C sort)
fi
build=$(cd "$build" && pwd)
shared=$(cd "$src/.." && pwd)/shared
[ -x "$build/ropegrad" ] || { echo "readme_examples: $build/ropegrad: not built" >&2; exit 2; }
[ -d "$shared/kernelindex" ] || { echo "SKIP: readme_examples: no ../shared beside the clone (the public record the examples import)"; exit 77; }

work=$(mktemp -d /tmp/rg-readme.XXXXXX)
cleanup() {
    # Whatever an example left running in the background (a server) ends here.
    [ -f "$work/pids" ] && while read -r p; do kill "$p" 2>/dev/null || true; done <"$work/pids"
    rm -rf "$work"
}
trap cleanup EXIT

# run_page PAGE: its examples in a scratch clone of their own.
run_page() {
    local page=$1 name script clone
    name=${page#"$src"/}
    script=$work/examples.sh
    rm -rf "$work/clone" "$work/home" "$script"
    extract "$page" "$script" "$name" || return 1
    if ! grep -qv '^ *\(#\|$\)' "$script"; then
        if [ "$name" = README.md ]; then
            echo "readme_examples: README.md: no <!-- example --> blocks" >&2
            return 1
        fi
        echo "readme_examples: $name: no examples to run"
        return 0
    fi
    clone=$work/clone
    mkdir -p "$clone"
    ln -sfn "$shared" "$work/shared"
    ln -s "$build" "$clone/build"
    for d in suites python scripts tests examples results; do
        [ -e "$src/$d" ] && ln -s "$src/$d" "$clone/$d"
    done
    # The examples' own registry and defaults, never the user's: HOME and the
    # XDG folders point into the scratch folder.
    mkdir -p "$work/home"
    # A background job an example starts (`serve ... &`) is remembered so the
    # trap ends it even when the example forgets to; it ends with its page.
    local rc=0
    (cd "$clone" && export HOME=$work/home XDG_DATA_HOME=$work/home/.local/share && unset ROPEGRAD_DB &&
        PS4='+ ' timeout 600 bash -x -e -o pipefail -c "trap 'jobs -p >>\"$work/pids\"' EXIT; source \"$script\"") || rc=$?
    if [ -f "$work/pids" ]; then
        while read -r p; do kill "$p" 2>/dev/null || true; done <"$work/pids"
        rm -f "$work/pids"
    fi
    if [ "$rc" != 0 ]; then
        echo "readme_examples: $name: FAILED (exit $rc) at the last command shown above" >&2
        return 1
    fi
    echo "readme_examples: $name: every example ran ($(grep -cv '^ *\(#\|$\)' "$script") lines)"
}

status=0
ran=0
for page in "${pages[@]}"; do
    page=$(cd "$(dirname "$page")" && pwd)/$(basename "$page")
    [ -f "$page" ] || { echo "readme_examples: $page: no such page" >&2; exit 2; }
    run_page "$page" || status=1
    ran=$((ran + 1))
done
[ "$status" = 0 ] && echo "readme_examples: $ran page(s), every example ran"
exit "$status"
