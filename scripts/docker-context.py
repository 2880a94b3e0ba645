#!/usr/bin/env python3
"""The build context `docker build` sends: a folder's files less what its .dockerignore leaves out.

    scripts/docker-context.py SRC           lists the files sent, one a line, relative to SRC
    scripts/docker-context.py SRC DEST      copies them into DEST (modes and links kept), as
                                            `COPY . DEST` gets them

No Docker engine runs where vmerge is tested, so this applies .dockerignore's rules as Docker's own
reader and matcher do (moby's patternmatcher, BuildKit's dockerignore reader): a line starting with
# is a comment; blanks around a pattern are dropped; a pattern is cleaned as a path (a leading /,
./ and // go; .. is resolved); `*` and `?` match within one name, `**` any number of folders,
[...] a class, and \\ escapes; a pattern matches a path or any folder above it; `!` takes a match
back, and the last pattern that matches decides. A folder that is left out is not entered unless an
exception (`!`) could match inside it. (Docker also sends a Dockerfile or .dockerignore the file
leaves out, for the builder to read, but COPY does not copy them: they are left out here too.)
"""
import os
import posixpath
import re
import shutil
import sys


def read_patterns(src):
    try:
        with open(os.path.join(src, ".dockerignore"), encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    patterns = []
    for line in lines:
        if line.startswith("#"):
            continue
        line = line.strip()
        if not line:
            continue
        invert = line.startswith("!")
        if invert:
            line = line[1:].strip()
        if line:
            line = posixpath.normpath(line)
            if line.startswith("//"):
                line = "/" + line.lstrip("/")   # normpath keeps a leading //; Go's Clean does not
            if len(line) > 1 and line.startswith("/"):
                line = line[1:]
        patterns.append((invert, compile_pattern(line)))
    return patterns


def compile_pattern(pattern):
    """The regular expression moby's patternmatcher makes of one pattern."""
    out, i = "^", 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            if pattern[i + 1:i + 2] == "*":
                i += 1
                if pattern[i + 1:i + 2] == "/":   # **/ : any folders, none included
                    i += 1
                    out += "(.*/)?"
                else:
                    out += ".*"
            else:
                out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out += re.escape(pattern[i])
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out += re.escape(c)
            else:
                body = pattern[i + 1:end]
                out += "[" + ("^" + body[1:] if body.startswith("^") else body) + "]"
                i = end
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out + "$")


def excluded(path, patterns):
    """Whether PATH (relative, /-separated) is left out: the last pattern matching it or a folder above it."""
    parents = [path]
    while "/" in parents[-1]:
        parents.append(parents[-1].rsplit("/", 1)[0])
    result = False
    for invert, regex in patterns:
        if any(regex.match(p) for p in parents):
            result = not invert
    return result


def context_files(src):
    patterns = read_patterns(src)
    has_exceptions = any(invert for invert, _ in patterns)
    sent = []
    for folder, dirs, files in os.walk(src):
        rel = os.path.relpath(folder, src)
        rel = "" if rel == "." else rel + "/"
        kept = []
        for d in sorted(dirs):
            path = rel + d
            if os.path.islink(os.path.join(folder, d)):
                files.append(d)   # a link to a folder is sent as a link
            elif not excluded(path, patterns):
                kept.append(d)
                sent.append(path + "/")
            elif has_exceptions:
                kept.append(d)   # entered: an exception may take back something inside it
        dirs[:] = kept
        for name in sorted(files):
            path = rel + name
            if not excluded(path, patterns):
                sent.append(path)
    return sent


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit("usage: docker-context.py SRC [DEST]")
    src = argv[1]
    sent = context_files(src)
    if len(argv) == 2:
        for path in sent:
            if not path.endswith("/"):
                print(path)
        return
    dest = argv[2]
    os.makedirs(dest, exist_ok=True)
    for path in sent:
        source, target = os.path.join(src, path), os.path.join(dest, path)
        if path.endswith("/"):
            os.makedirs(target, exist_ok=True)
            shutil.copystat(source, target)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)


if __name__ == "__main__":
    main(sys.argv)
