#!/usr/bin/env bash
# Imports, optimizes and equivalence-checks the shader pairs of Debian's glmark2-data
# and piglit packages, and reports counts and failures grouped by cause. Slow (all
# ~44k pairs take hours); not part of CI. Third-party shaders stay in /usr/share and
# are never copied into the repository.
#
# usage: scripts/third_party_corpus.sh [MAX_PAIRS] [--docs]
#   MAX_PAIRS  cap: every k-th pair is taken so the sample spans the whole corpus
#              (default: all pairs)
#   --docs     also replace the generated block of docs/testing.md with the result
#              (the summary is scripts/corpus_summary.py RUN_DIR, which can be run
#              on a kept run directory at any time, also while the run goes on)
# Environment:
#   JOBS=N     pairs run in parallel (default: nproc)
#   NICE=N     niceness of the per-pair processes (default: 10)
#   RUN_DIR=D  a directory that keeps the run (default: a temporary one): the pair
#              list, the split piglit sections, a copy of the varysat binary, the
#              compiled-stage cache (`varysat import --glsl-cache`) and `results`,
#              one line a pair (`PRODUCER CONSUMER<TAB>outcome`), appended as each
#              pair finishes. Running again with the same RUN_DIR resumes: pairs
#              already in `results` are skipped, and the binary copied at the first
#              start is used again (FRESH_BINARY=1 copies the current build).
#   SHARD=I/N  run only the pairs whose index in the list is I modulo N (several
#              shards may share one RUN_DIR, e.g. on several machines or cores).
# The summary counts every pair of the selection that has a result so far, and says
# how many are done.
set -uo pipefail
cd "$(dirname "$0")/.."
MAX=100000000; DOCS=0
for a in "$@"; do
    case "$a" in
        --docs) DOCS=1 ;;
        *) MAX=$a ;;
    esac
done
JOBS=${JOBS:-$(nproc)}
NICE=${NICE:-10}
SHARD=${SHARD:-0/1}
shard_i=${SHARD%/*}; shard_n=${SHARD#*/}

bash scripts/setup.sh
source scripts/corpus_packages.sh

if [ -n "${RUN_DIR:-}" ]; then
    work=$RUN_DIR; mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)

if [ ! -x "$work/varysat" ] || [ "${FRESH_BINARY:-0}" = 1 ]; then
    cargo build -q --release --bin varysat || exit 1
    cp target/release/varysat "$work/varysat.new" && mv "$work/varysat.new" "$work/varysat"
    git rev-parse --short HEAD > "$work/commit" 2>/dev/null || echo unknown > "$work/commit"
    git diff --quiet HEAD 2>/dev/null || echo "$(cat "$work/commit") + uncommitted changes" > "$work/commit"
fi
BIN=$work/varysat

# Pairs: files with the same stem and stage extensions in one directory, producer
# before consumer (vert->frag, vert->geom->frag, vert->tesc->tese->frag...).
# piglit keeps most shaders in .shader_test files, one "[vertex shader]" /
# "[fragment shader]" ... section each: those sections are split into files under the
# run directory (never into the repository). A kept run reuses its list, so its
# results stay keyed by the same names.
if [ ! -s "$work/pairs" ]; then
    find /usr/share/glmark2 /usr/lib/piglit /usr/lib/*/piglit /usr/share/piglit -type f \
        \( -name '*.vert' -o -name '*.tesc' -o -name '*.tese' -o -name '*.geom' -o -name '*.frag' \
           -o -name '*.shader_test' \) \
        2>/dev/null | sort > "$work/files"
    python3 scripts/corpus_pairs.py "$work/files" "$work/split" > "$work/pairs.new" \
        && mv "$work/pairs.new" "$work/pairs"
fi

found=$(wc -l < "$work/pairs")
step=$(( (found + MAX - 1) / MAX )); [ "$step" -lt 1 ] && step=1
awk -v k="$step" '(NR - 1) % k == 0' "$work/pairs" > "$work/sample"
total=$(wc -l < "$work/sample")
touch "$work/results"
# This shard's pairs without a result yet.
awk -v i="$shard_i" -v n="$shard_n" -F '\t' '
    FILENAME == ARGV[1] { done[$1] = 1; next }
    (FNR - 1) % n == i && !($0 in done)' "$work/results" "$work/sample" > "$work/todo.$shard_i"
todo=$(wc -l < "$work/todo.$shard_i")
echo "pairs found: $found; selected $total (every ${step}. one); shard $SHARD: $todo to run with $JOBS jobs at nice $NICE (binary $(cat "$work/commit"))" >&2

# One pair: appends `PRODUCER CONSUMER<TAB>import|opt|equiv|ok <cause>` (the first
# stage that failed) to the results, in one write so parallel jobs do not interleave.
# The loop budget is raised (piglit's loop tests run hundreds of iterations a vertex),
# and a piglit program's default-block uniforms are bound to the values its
# `.shader_test` sets (`uniform int iters 300`; scripts/piglit_uniforms.py, by the
# names `import --uniform-words` lists; split file tN.STAGE is line N+1 of `files`),
# so loops over them run as the test runs them.
cat > "$work/one.sh" <<'ONE'
#!/usr/bin/env bash
BIN=$1; CACHE=$2; RESULTS=$3; a=$4; b=$5; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
UNIFORMS=@UNIFORMS@
cause() { head -1 | sed -E 's/^[^ ]*: error: //; s/^error: //; s/%[0-9]+/%N/g; s/[0-9]+/N/g; s/`[^`]*`/`…`/g'; }
piglit_values() {
    case "$a" in */split/t[0-9]*) ;; *) return 0 ;; esac
    n=$(basename "$a" | sed -E 's/^t([0-9]+)\..*/\1/')
    test=$(sed -n "$((n + 1))p" "$(dirname "$CACHE")/files")
    case "$test" in *.shader_test) python3 "$UNIFORMS" "$test" "$tmp/u.txt" ;; esac
}
outcome() {
    if ! err=$(timeout 60 "$BIN" import "$a" "$b" --glsl-cache "$CACHE" -o "$tmp/p.pair" \
            --uniform-words "$tmp/u.txt" 2>&1); then
        echo "import $(echo "$err" | cause)"; return; fi
    if ! err=$(timeout 120 "$BIN" opt "$tmp/p.pair" -o "$tmp/o.pair" 2>&1); then
        echo "opt $(echo "$err" | cause)"; return; fi
    # shellcheck disable=SC2046 # one argument a word
    if ! err=$(timeout 120 "$BIN" equiv "$tmp/p.pair" "$tmp/o.pair" --runs 4 --loop-limit 100000 \
            $(piglit_values) 2>&1); then
        echo "equiv $(echo "$err" | cause) [$a $b]"; return; fi
    echo "ok"
}
line=$(printf '%s %s\t%s\n' "$a" "$b" "$(outcome | tr '\t' ' ')")
echo "$line" >> "$RESULTS"
ONE
sed -i "s|@UNIFORMS@|$(cd "$(dirname "$0")" && pwd)/piglit_uniforms.py|" "$work/one.sh"
chmod +x "$work/one.sh"
nice -n "$NICE" xargs -r -P "$JOBS" -L 1 "$work/one.sh" "$BIN" "$work/glsl-cache" "$work/results" \
    < "$work/todo.$shard_i"

# The summary by class of pair (scripts/corpus_summary.py: linked programs apart
# from compile tests paired by file stem), with every class's failure causes.
docs_args=(); [ "$DOCS" = 1 ] && docs_args=(--docs docs/testing.md)
CORPUS_FOUND=$found CORPUS_STEP=$step python3 scripts/corpus_summary.py "$work" "${docs_args[@]}"
