#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every Markdown link of the README and of docs/ resolves: a relative link
names a file or folder of the tree, and a link to a heading of a Markdown page
(`page.md#anchor`, `#anchor`) names a heading that page has (GitHub's anchors:
lower case, punctuation dropped, spaces as hyphens). Web links are not followed.

Usage: doc_links.py REPO. Prints each broken link as PAGE:LINE: TARGET (why);
exit 1 when there is one."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # run from CTest: leave the source tree as it is
from findings import finish, repo_arg  # noqa: E402

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```")


def anchors(path):
    """The anchors of a Markdown page's headings, as GitHub makes them."""
    seen, out = {}, set()
    infence = False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            infence = not infence
            continue
        m = None if infence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower().replace("`", "")).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path):
    infence = False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            infence = not infence
            continue
        if infence:
            continue
        for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            yield n, m.group(1)


def main(repo):
    pages = [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "**", "*.md"), recursive=True))
    bad = []
    for page in pages:
        rel = os.path.relpath(page, repo)
        for n, target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):   # http:, https:, mailto:
                continue
            path, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(dest):
                bad.append(f"{rel}:{n}: {target} (no {os.path.relpath(dest, repo)})")
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                bad.append(f"{rel}:{n}: {target} (no heading #{frag} in {os.path.relpath(dest, repo)})")
    finish("doc_links", bad, f"broken link(s) in {len(pages)} pages")


if __name__ == "__main__":
    main(repo_arg("doc_links.py REPO"))
