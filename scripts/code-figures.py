#!/usr/bin/env python3
"""code-figures.py [ROOT]: the figures issue 25 tracks, for Sources under ROOT (default .):
files, the biggest file, the longest functions, and lines per target."""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
sources = os.path.join(root, "Sources")
decl = re.compile(r"^(\s*)(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:package|public|private|fileprivate|internal|static|final|override|mutating|nonisolated|convenience|required)\s+)*(func\s+[^\s(<]+|init[?!]?|deinit)\b")
files, functions, targets = [], [], {}
for folder, _, names in os.walk(sources):
    for name in names:
        if not name.endswith((".swift", ".c", ".h")):
            continue
        path = os.path.join(folder, name)
        lines = open(path, encoding="utf-8").read().split("\n")
        rel = os.path.relpath(path, sources)
        files.append((len(lines), rel))
        target = rel.split(os.sep)[0]
        targets[target] = targets.get(target, 0) + len(lines)
        if not name.endswith(".swift"):
            continue
        for i, line in enumerate(lines):
            m = decl.match(line)
            if not m or "{" not in line and not (i + 1 < len(lines) and "{" in "".join(lines[i:i + 8])):
                continue
            indent = len(m.group(1))
            end = i
            if line.rstrip().endswith("}") and line.count("{") == line.count("}"):
                continue
            for j in range(i + 1, len(lines)):
                if lines[j].startswith(" " * indent + "}") and len(lines[j]) - len(lines[j].lstrip()) == indent:
                    end = j
                    break
            functions.append((end - i + 1, f"{rel}:{i + 1} {m.group(2)}"))
files.sort(reverse=True)
functions.sort(reverse=True)
print(f"files: {len(files)}; lines: {sum(n for n, _ in files)}")
print("biggest files: " + ", ".join(f"{p} {n}" for n, p in files[:5]))
print("longest functions: " + ", ".join(f"{p} {n}" for n, p in functions[:8]))
print(f"files over 400 lines: {sum(1 for n, _ in files if n > 400)}; functions over 60 lines: {sum(1 for n, _ in functions if n > 60)}")
print("lines per target: " + ", ".join(f"{t} {n}" for t, n in sorted(targets.items())))
