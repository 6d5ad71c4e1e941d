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
find /usr/share/glmark2 /usr/lib/piglit /usr/share/piglit -type f \
    \( -name '*.vert' -o -name '*.tesc' -o -name '*.tese' -o -name '*.geom' -o -name '*.frag' \) \
    2>/dev/null | sort > "$work/files"
python3 - "$work/files" > "$work/pairs" <<'PY'
import os, sys
order = ["vert", "tesc", "tese", "geom", "frag"]
groups = {}
for line in open(sys.argv[1]):
    p = line.strip()
    stem, ext = os.path.splitext(p)
    groups.setdefault(stem, {})[ext[1:]] = p
for stem in sorted(groups):
    g = groups[stem]
    chain = [g[s] for s in order if s in g]
    for a, b in zip(chain, chain[1:]):
        print(a, b)
PY

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
done < "$work/pairs"

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
    for k, v in (d.items() if isinstance(d, dict) else []):
        if isinstance(v, int):
            tot[k] = tot.get(k, 0) + v
for k in sorted(tot):
    print(f"  {k}: {tot[k]}")
PY
fi
echo "failures by cause:"
sort "$work/fail" | uniq -c | sort -rn
