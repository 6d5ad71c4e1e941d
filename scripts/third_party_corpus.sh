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
# JOBS (default: nproc) pairs run in parallel, under nice.
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

bash scripts/setup.sh
source scripts/corpus_packages.sh

cargo build -q --release --bin varysat || exit 1
BIN=$PWD/target/release/varysat

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
python3 scripts/corpus_pairs.py "$work/files" "$work/split" > "$work/pairs"

found=$(wc -l < "$work/pairs")
step=$(( (found + MAX - 1) / MAX )); [ "$step" -lt 1 ] && step=1
awk -v k="$step" '(NR - 1) % k == 0' "$work/pairs" > "$work/sample"
total=$(wc -l < "$work/sample")
echo "pairs found: $found; running $total (every ${step}. one) with $JOBS jobs" >&2

# One pair: prints `import|opt|equiv|ok <cause>` (the first stage that failed).
cat > "$work/one.sh" <<'ONE'
#!/usr/bin/env bash
BIN=$1; a=$2; b=$3; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cause() { head -1 | sed -E 's/^[^ ]*: error: //; s/^error: //; s/%[0-9]+/%N/g; s/[0-9]+/N/g; s/`[^`]*`/`…`/g'; }
if ! err=$(timeout 60 "$BIN" import "$a" "$b" -o "$tmp/p.pair" 2>&1); then
    echo "import $(echo "$err" | cause)"; exit 0; fi
if ! err=$(timeout 120 "$BIN" opt "$tmp/p.pair" -o "$tmp/o.pair" 2>&1); then
    echo "opt $(echo "$err" | cause)"; exit 0; fi
if ! err=$(timeout 120 "$BIN" equiv "$tmp/p.pair" "$tmp/o.pair" --runs 4 2>&1); then
    echo "equiv $(echo "$err" | cause) [$a $b]"; exit 0; fi
echo "ok"
ONE
chmod +x "$work/one.sh"
nice -n 10 xargs -P "$JOBS" -L 1 "$work/one.sh" "$BIN" < "$work/sample" > "$work/results"

python3 - "$work/results" "$found" "$step" "$DOCS" <<'PY'
import collections, datetime, re, sys
rows = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
found, step, docs = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
n = len(rows)
failed = collections.Counter(r.split(" ", 1)[0] for r in rows if r != "ok")
imported = n - failed["import"]
optimized = imported - failed["opt"]
equivalent = optimized - failed["equiv"]
causes = collections.Counter(r for r in rows if r != "ok")
pct = lambda k: f"{100.0 * k / n:.1f} %" if n else "-"
out = [f"Run of {datetime.date.today()} (release build, `JOBS` parallel): {found} pairs found, "
       f"{n} run (every {step}. one).",
       "",
       "| stage | pairs | share of run |", "|---|---|---|",
       f"| imported | {imported} | {pct(imported)} |",
       f"| optimized | {optimized} | {pct(optimized)} |",
       f"| interpreter-equivalent | {equivalent} | {pct(equivalent)} |",
       "", "Failures by first failing stage and cause:", "",
       "| count | stage | cause |", "|---|---|---|"]
for cause, k in causes.most_common():
    stage, _, text = cause.partition(" ")
    out.append(f"| {k} | {stage} | {text.replace('|', '/')} |")
block = "\n".join(out)
print(block)
if docs:
    path = "docs/testing.md"
    text = open(path).read()
    begin, end = "<!-- corpus-run:begin -->", "<!-- corpus-run:end -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + begin + "\n" + block + "\n" + end + tail
    else:
        text = text.rstrip("\n") + "\n\n" + begin + "\n" + block + "\n" + end + "\n"
    open(path, "w").write(text)
PY
