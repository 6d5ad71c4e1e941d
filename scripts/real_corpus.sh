#!/usr/bin/env bash
# Imports the real shader pairs the project can install by itself into a directory of
# `.pair` files, the input of `benches/real.rs`: tests/corpus/glsl (pairs.txt) and the
# GLSL of Debian's glmark2-data and piglit (installed here if missing). Importing shells
# out to glslangValidator and spirv-opt (about 0.5 s a pair), so the result is a cache:
# pairs already imported are not imported again. Pairs the importer rejects are listed
# in DIR/rejected.txt with the first line of the error. Slow; not part of CI.
#
# usage: scripts/real_corpus.sh [DIR [MAX_THIRD_PARTY_PAIRS]]
#   DIR defaults to target/real-corpus; MAX (default: all, about 44,000 pairs, hours)
#   takes every k-th third-party pair, so a capped run samples the whole corpus.
set -uo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-target/real-corpus}
MAX=${2:-1000000}

bash scripts/setup.sh
source scripts/corpus_packages.sh

cargo build -q --release --bin varysat || exit 1
BIN=target/release/varysat
mkdir -p "$DIR"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

find /usr/share/glmark2 /usr/lib/piglit /usr/lib/*/piglit /usr/share/piglit -type f \
    \( -name '*.vert' -o -name '*.tesc' -o -name '*.tese' -o -name '*.geom' -o -name '*.frag' \
       -o -name '*.shader_test' \) 2>/dev/null | sort > "$work/files"
python3 scripts/corpus_pairs.py "$work/files" "$work/split" > "$work/third"
found=$(wc -l < "$work/third")
step=$(( (found + MAX - 1) / MAX )); [ "$step" -lt 1 ] && step=1
# Names: corpus-<stems> for the project's own pairs, tp-<line number> for third-party
# ones (stable while the installed packages are).
grep -v '^#' tests/corpus/glsl/pairs.txt | while read -r a b; do
    [ -n "$a" ] && echo "corpus-${a%.*}-${a##*.}-${b##*.} tests/corpus/glsl/$a tests/corpus/glsl/$b"
done > "$work/todo"
awk -v k="$step" '(NR - 1) % k == 0 { printf "tp-%05d %s %s\n", NR, $1, $2 }' "$work/third" >> "$work/todo"
echo "third-party pairs found: $found (every ${step}. one taken)"

imported=0; rejected=0; cached=0
touch "$DIR/rejected.txt"
while read -r name a b; do
    if [ -e "$DIR/$name.pair" ] || grep -q "^$name " "$DIR/rejected.txt"; then
        cached=$((cached + 1)); continue
    fi
    if err=$($BIN import "$a" "$b" -o "$DIR/$name.pair" 2>&1); then
        imported=$((imported + 1))
    else
        rejected=$((rejected + 1))
        rm -f "$DIR/$name.pair"
        echo "$name $(echo "$err" | head -1)" >> "$DIR/rejected.txt"
    fi
done < "$work/todo"
echo "imported: $imported, rejected: $rejected, already done: $cached; in $DIR: $(ls "$DIR" | grep -c '\.pair$') pairs"
