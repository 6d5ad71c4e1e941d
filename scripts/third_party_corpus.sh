#!/usr/bin/env bash
# Imports (and, when `varysat opt` exists, optimizes) the shader pairs of Debian's
# glmark2-data and piglit packages and reports counts, varying totals and failures
# grouped by cause. Slow; not part of CI. Third-party shaders stay in /usr/share and
# are never copied into the repository.
#
# usage: scripts/third_party_corpus.sh [MAX_PAIRS]
set -uo pipefail
cd "$(dirname "$0")/.."
MAX=${1:-100000}

bash scripts/setup.sh
export DEBIAN_FRONTEND=noninteractive
for pkg in glmark2-data piglit; do
    dpkg -s "$pkg" >/dev/null 2>&1 || apt-get install -y -qq "$pkg" >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null && apt-get install -y -qq "$pkg" >/dev/null; } \
        || echo "warning: could not install $pkg" >&2
done

cargo build -q --bin varysat || exit 1
BIN=target/debug/varysat
has_opt=0
$BIN opt --help >/dev/null 2>&1 && has_opt=1
has_stats=0
$BIN stats --help >/dev/null 2>&1 && has_stats=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Pairs: files with the same stem and stage extensions in one directory, producer
# before consumer (vert->frag, vert->geom->frag, vert->tesc->tese->frag...).
# piglit keeps most shaders in .shader_test files, one "[vertex shader]" /
# "[fragment shader]" ... section each: those sections are split into files under the
# temporary directory (never into the repository).
find /usr/share/glmark2 /usr/lib/piglit /usr/lib/*/piglit /usr/share/piglit -type f \
    \( -name '*.vert' -o -name '*.tesc' -o -name '*.tese' -o -name '*.geom' -o -name '*.frag' \
       -o -name '*.shader_test' \) \
    2>/dev/null | sort > "$work/files"
python3 - "$work/files" "$work/split" > "$work/pairs" <<'PY'
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
PY

# A capped run takes every k-th pair, so it samples the whole corpus rather than the
# first directories in path order (piglit's early ones are mostly 64-bit tests).
found=$(wc -l < "$work/pairs")
step=$(( (found + MAX - 1) / MAX )); [ "$step" -lt 1 ] && step=1
awk -v k="$step" '(NR - 1) % k == 0' "$work/pairs" > "$work/sample"
echo "pairs found: $found (every ${step}. one taken)"

total=0; imported=0; optimized=0
: > "$work/fail"; : > "$work/stats"
while read -r a b; do
    [ "$total" -ge "$MAX" ] && break
    total=$((total + 1))
    if err=$($BIN import "$a" "$b" -o "$work/p.pair" 2>&1); then
        imported=$((imported + 1))
        if [ $has_stats = 1 ]; then $BIN stats --json "$work/p.pair" >> "$work/stats" 2>/dev/null; fi
        if [ $has_opt = 1 ]; then
            if oerr=$($BIN opt "$work/p.pair" -o "$work/o.pair" 2>&1); then
                optimized=$((optimized + 1))
            else
                echo "opt: $(echo "$oerr" | head -1 | sed -E 's/^[^ ]*: error: //; s/%[0-9]+/%N/g; s/[0-9]+/N/g')" >> "$work/fail"
            fi
        fi
    else
        echo "import: $(echo "$err" | head -1 | sed -E 's/^[^ ]*: error: //; s/%[0-9]+/%N/g; s/[0-9]+/N/g')" >> "$work/fail"
    fi
done < "$work/sample"

echo "pairs: $total"
echo "imported: $imported"
[ $has_opt = 1 ] && echo "optimized: $optimized" || echo "optimized: (varysat opt not available)"
if [ -s "$work/stats" ]; then
    echo "varying totals (stats --json lines):"
    python3 - "$work/stats" <<'PY'
import json, sys
tot = {}
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    row = d.get("total", {}) if isinstance(d, dict) else {}
    for k, v in row.items():
        if isinstance(v, int):
            tot[k] = tot.get(k, 0) + v
for k in sorted(tot):
    print(f"  {k}: {tot[k]}")
PY
fi
echo "failures by cause:"
sort "$work/fail" | uniq -c | sort -rn
