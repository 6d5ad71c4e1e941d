#!/usr/bin/env python3
"""Prints the `varysat equiv --uniform WORD=VALUE` arguments that bind a piglit
program's default-block uniforms to the values its `.shader_test` sets.

Usage: piglit_uniforms.py SHADER_TEST WORDS

WORDS is what `varysat import --uniform-words` wrote for the pair (`NAME WORD
WORDS` lines). The `[test]` section's `uniform TYPE NAME VALUE...` commands are
read in order and the first value set for each name is kept (a test that draws
several times with other values is checked with its first). Scalars and vectors
of int, uint, float and bool are bound, one word a component; matrices, arrays
elements (`name[2]`) and uniforms the pair does not read are left to the
interpreter's seeded values. Prints nothing when there is nothing to bind.
"""

import sys

COMPONENTS = {"int": 1, "uint": 1, "float": 1, "bool": 1}
for n in (2, 3, 4):
    for prefix, base in (("i", "int"), ("u", "uint"), ("", "float"), ("b", "bool")):
        COMPONENTS[f"{prefix}vec{n}"] = n


def value(base, text):
    """The VALUE text varysat parses for one component, or None."""
    try:
        if base == "float":
            # varysat reads a VALUE with a `.` as a float.
            x = float(text)
            if x != x or x in (float("inf"), float("-inf")):
                return None
            mantissa, _, exp = ("%.9g" % x).partition("e")
            mantissa += "" if "." in mantissa else ".0"
            return mantissa + ("e" + exp if exp else "")
        if base == "bool":
            return "1" if text.lower() in ("1", "true") else "0"
        return str(int(text, 0))
    except ValueError:
        return None


def settings(text):
    """(name, type, values) of the [test] section's uniform commands, first per name."""
    found, section = {}, None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[] ").lower()
            continue
        words = line.split()
        if section != "test" or len(words) < 4 or words[0] != "uniform":
            continue
        found.setdefault(words[2], (words[1], words[3:]))
    return found


def main():
    test, words_file = sys.argv[1], sys.argv[2]
    words = {}
    for line in open(words_file):
        parts = line.split()
        if len(parts) == 3:
            words[parts[0]] = (int(parts[1]), int(parts[2]))
    args = []
    for name, (ty, vals) in settings(open(test, errors="replace").read()).items():
        n = COMPONENTS.get(ty)
        if n is None or name not in words or words[name][1] != n or len(vals) < n:
            continue
        base = ty if n == 1 else {"i": "int", "u": "uint", "b": "bool"}.get(ty[0], "float")
        parsed = [value(base, v) for v in vals[:n]]
        if None in parsed:
            continue
        first = words[name][0]
        args += [f"--uniform={first + i}={v}" for i, v in enumerate(parsed)]
    print(" ".join(args))


main()
