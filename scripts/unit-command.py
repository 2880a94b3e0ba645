#!/usr/bin/env python3
"""What systemd would run for an instance of a template unit, for a test that has no systemd.

    unit-command.py ROOT UNIT-PATH INSTANCE HOSTNAME

ROOT is the file system the unit lives in (its EnvironmentFile= paths are read under it). Prints,
NUL-separated: User=, Group=, RuntimeDirectory= (space-separated), the number N of variables the
environment files set, those N as KEY=value (the command's environment), then the ExecStart= words, with
the specifiers %i, %I, %H and %% replaced and the environment files' variables expanded as
systemd.service(5) says: "${NAME}" inside a word is the value; "$NAME" as a whole word is the value
split at whitespace (zero or more words). Anything else this does not model (quotes in ExecStart=,
several ExecStart= lines, a prefix such as "-" or "+", a missing required environment file) is an
error, so the test cannot silently run something other than the unit's command.
"""
import os
import re
import sys


def fail(message):
    sys.exit(f"unit-command: {message}")


def main():
    if len(sys.argv) != 5:
        fail("usage: unit-command.py ROOT UNIT-PATH INSTANCE HOSTNAME")
    root, unit_path, instance, hostname = sys.argv[1:]
    specifiers = {"i": instance, "I": instance, "H": hostname, "%": "%"}

    def specify(text):
        def one(match):
            if match.group(1) not in specifiers:
                fail(f"specifier %{match.group(1)} is not modelled")
            return specifiers[match.group(1)]
        return re.sub(r"%(.)", one, text)

    section, service = None, {}
    with open(os.path.join(root, unit_path.lstrip("/"))) as unit:
        for line in unit:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            key, _, value = line.partition("=")
            if section == "[Service]":
                service.setdefault(key, []).append(specify(value))
    environment = {}
    for entry in service.get("EnvironmentFile", []):
        optional = entry.startswith("-")
        path = os.path.join(root, entry.lstrip("-").lstrip("/"))
        if not os.path.exists(path):
            if optional:
                continue
            fail(f"EnvironmentFile {entry} is missing: systemd would not start the unit")
        with open(path) as conf:
            for line in conf:
                line = line.strip()
                if not line or line[0] in "#;":
                    continue
                key, sep, value = line.partition("=")
                if not sep:
                    fail(f"{entry}: '{line}' is not KEY=value")
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                    value = value[1:-1]
                environment[key.strip()] = value
    starts = service.get("ExecStart", [])
    if len(starts) != 1:
        fail(f"{len(starts)} ExecStart= lines, one is modelled")
    command = starts[0]
    if any(c in command for c in "\"'\\") or command[:1] in "-+!@:":
        fail(f"ExecStart={command}: quotes, escapes and prefixes are not modelled")
    words = []
    for word in command.split():
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            words += environment.get(whole.group(1), "").split()
        else:
            words.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: environment.get(m.group(1), ""), word))
    fields = [
        service.get("User", ["root"])[-1],
        service.get("Group", [""])[-1],
        " ".join(service.get("RuntimeDirectory", [])),
        str(len(environment)),
    ]
    pairs = [f"{key}={value}" for key, value in environment.items()]
    sys.stdout.write("\0".join(fields + pairs + words))


main()
