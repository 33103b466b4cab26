#!/usr/bin/python3
"""Checks the relative links of README.md and docs/*.md: each names a file of the source tree
and, for a markdown file, a heading or an <a id> it has (GitHub's anchors: lowercase, spaces
to '-', punctuation but '-' and '_' dropped). Links inside fenced blocks are not links.
Prints FILE: broken link 'TARGET' for each and exits 1; exits 0 when every link resolves.
Usage: scripts/check_doc_links.py [SOURCE_DIR]   (default: the repository holding this script)
"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")


def anchors(path, cache={}):
    if path not in cache:
        found = set()
        text = re.sub(r"```.*?```", "", open(path).read(), flags=re.S)
        for line in text.split("\n"):
            m = re.match(r"#+ (.*)", line)
            if m:
                found.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
            found.update(re.findall(r'<a id="([^"]+)"', line))
        cache[path] = found
    return cache[path]


broken = 0
for doc in sorted(glob.glob(os.path.join(root, "docs", "*.md"))) + [os.path.join(root, "README.md")]:
    text = re.sub(r"```.*?```", "", open(doc).read(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        name, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(os.path.dirname(doc), name)) if name else doc
        if not os.path.exists(path) or (anchor and path.endswith(".md") and
                                         anchor not in anchors(path)):
            print("%s: broken link '%s'" % (os.path.relpath(doc, root), target))
            broken += 1
sys.exit(1 if broken else 0)
