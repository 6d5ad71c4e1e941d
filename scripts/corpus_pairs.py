"""Pairs the glmark2 / piglit shader files listed in argv[1] (one path a line):
files with one stem and stage extensions in one directory, producer before
consumer; piglit `.shader_test` files are split into per-stage files under argv[2].
Prints `PRODUCER CONSUMER` lines."""
import os, sys

order = ["vert", "tesc", "tese", "geom", "frag"]
sections = {"vertex shader": "vert", "tessellation control shader": "tesc",
            "tessellation evaluation shader": "tese", "geometry shader": "geom",
            "fragment shader": "frag"}
groups = {}
split = sys.argv[2]
os.makedirs(split, exist_ok=True)
for n, line in enumerate(open(sys.argv[1])):
    p = line.strip()
    if p.endswith(".shader_test"):
        try:
            text = open(p, errors="replace").read()
        except OSError:
            continue
        current, found = None, {}
        for l in text.splitlines():
            if l.startswith("["):
                current = sections.get(l.strip("[] \t").lower())
                if current:
                    found[current] = []
                continue
            if current:
                found[current].append(l)
        if len(found) < 2:
            continue
        stem = os.path.join(split, f"t{n}")
        for ext, lines in found.items():
            with open(f"{stem}.{ext}", "w") as f:
                f.write("\n".join(lines) + "\n")
            groups.setdefault(stem, {})[ext] = f"{stem}.{ext}"
        continue
    stem, ext = os.path.splitext(p)
    groups.setdefault(stem, {})[ext[1:]] = p
for stem in sorted(groups):
    g = groups[stem]
    chain = [g[s] for s in order if s in g]
    for a, b in zip(chain, chain[1:]):
        print(a, b)
