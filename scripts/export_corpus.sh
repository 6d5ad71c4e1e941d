#!/usr/bin/env bash
# Exports the optimized stages of third-party pairs as SPIR-V (`varysat opt --emit
# spirv`) and validates every module with spirv-val, for the target environment its
# SPIR-V version implies (OpenGL 4.5 for modules with loose uniforms; 1.0 -> vulkan1.0, 1.3 -> vulkan1.1, 1.5 -> vulkan1.2,
# 1.6 -> vulkan1.3). Issue #15's first target on the real corpus; not part of CI.
#
# usage: scripts/export_corpus.sh RESULTS [MAX_PAIRS]
#   RESULTS    the `results` file of a scripts/third_party_corpus.sh run (RUN_DIR):
#              the pairs whose outcome is `ok` (imported, optimized, equivalent) are
#              the ones that must export; every k-th of them is taken so that at most
#              MAX_PAIRS (default: all) run and the sample spans the corpus.
# Environment: JOBS (default nproc), NICE (default 10), OUT=FILE keeps the per-pair
# outcomes (`PRODUCER CONSUMER<TAB>ok|export CAUSE|val CAUSE|equiv CAUSE`), BIN=varysat
# binary (default: a release build of this tree), SPIRV_VAL=validator command (default
# spirv-val; SPIRV-Tools before mid-2023 rejects the `bool` loose uniforms glslang
# writes for OpenGL, docs/export.md), EQUIV=1 also imports the two exported modules
# again and checks them against the original pair (`varysat equiv --runs 8`).
set -uo pipefail
cd "$(dirname "$0")/.."
results=${1:?usage: scripts/export_corpus.sh RESULTS [MAX_PAIRS]}
max=${2:-100000000}
JOBS=${JOBS:-$(nproc)}
NICE=${NICE:-10}
if [ -z "${BIN:-}" ]; then
    cargo build -q --release --bin varysat || exit 1
    BIN=$PWD/target/release/varysat
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${OUT:-$work/outcomes}
: > "$out"

awk -F '\t' '$2 == "ok" { print $1 }' "$results" | sort > "$work/ok"
found=$(wc -l < "$work/ok")
step=$(( (found + max - 1) / max )); [ "$step" -lt 1 ] && step=1
awk -v k="$step" '(NR - 1) % k == 0' "$work/ok" > "$work/sample"
echo "pairs ok in $results: $found; exporting $(wc -l < "$work/sample") (every ${step}. one) with $JOBS jobs" >&2

cat > "$work/one.sh" <<'ONE'
#!/usr/bin/env bash
BIN=$1; OUT=$2; a=$3; b=$4; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
VAL=${SPIRV_VAL:-spirv-val}
cause() { head -1 | sed -E 's/^[^ ]*: error: //; s/^error: //; s/%[0-9]+/%N/g; s/[0-9]+/N/g; s/`[^`]*`/`…`/g'; }
env_of() {
    # OpenGL SPIR-V (glslang -G): a data-typed UniformConstant variable (a loose
    # uniform; Vulkan allows only images and samplers there).
    if spirv-dis --raw-id "$1" 2>/dev/null | awk '
        / = OpType(Image|Sampler|SampledImage)/ { opaque[$1] = 1 }
        / = OpTypeArray / && ($3 in opaque) { opaque[$1] = 1 }
        / = OpTypePointer UniformConstant / && !($4 in opaque) { loose[$1] = 1 }
        / = OpVariable / && ($4 in loose) { found = 1 }
        END { exit !found }'; then echo opengl4.5; return; fi
    # An OpenGL fragment shader whose loose uniforms are all gone (unused ones are
    # removed on import) still has glslang -G's origin, which Vulkan forbids.
    if spirv-dis --raw-id "$1" 2>/dev/null | grep -q 'OpExecutionMode .* OriginLowerLeft'; then
        echo opengl4.5; return; fi
    # The version word is the second of the module (bytes 4-7, little-endian).
    case $(od -An -tx1 -j5 -N2 "$1" | tr -d ' ') in
        0001) echo vulkan1.0 ;; 0101|0201|0301) echo vulkan1.1 ;;
        0401|0501) echo vulkan1.2 ;; *) echo vulkan1.3 ;;
    esac
}
outcome() {
    if ! err=$(timeout 120 "$BIN" opt "$a" "$b" --emit spirv -o "$tmp/" 2>&1 >/dev/null); then
        echo "export $(echo "$err" | cause)"; return; fi
    n=0
    for m in "$tmp"/*.spv; do
        [ -e "$m" ] || { echo "export no module written"; return; }
        n=$((n + 1))
        if ! err=$($VAL --target-env "$(env_of "$m")" "$m" 2>&1); then
            # The stage (file extension before .spv), not the file, so causes group.
            stage=${m%.spv}; stage=${stage##*.}
            echo "val $stage: $(echo "$err" | cause)"; return; fi
    done
    [ "$n" = 2 ] || { echo "export $n modules written"; return; }
    if [ "${EQUIV:-0}" = 1 ]; then
        pa=$(basename "$a"); pb=$(basename "$b")
        [ "${pa%.spv}" = "$pa" ] && pa=$pa.spv; [ "${pb%.spv}" = "$pb" ] && pb=$pb.spv
        "$BIN" import "$a" "$b" > "$tmp/orig.pair" 2>/dev/null || { echo "equiv original does not import"; return; }
        if ! err=$("$BIN" import "$tmp/$pa" "$tmp/$pb" 2>&1 > "$tmp/back.pair"); then
            echo "equiv re-import: $(echo "$err" | cause)"; return; fi
        if ! err=$(timeout 300 "$BIN" equiv --runs 8 --loop-limit 100000 "$tmp/orig.pair" "$tmp/back.pair" 2>&1); then
            echo "equiv $(echo "$err" | cause)"; return; fi
    fi
    echo ok
}
printf '%s %s\t%s\n' "$a" "$b" "$(outcome | tr '\t' ' ')" >> "$OUT"
ONE
chmod +x "$work/one.sh"
SPIRV_VAL=${SPIRV_VAL:-} EQUIV=${EQUIV:-0} nice -n "$NICE" xargs -r -P "$JOBS" -L 1 "$work/one.sh" "$BIN" "$out" < "$work/sample"

total=$(wc -l < "$out")
ok=$(awk -F '\t' '$2 == "ok"' "$out" | wc -l)
echo "exported and spirv-val clean${EQUIV:+ (EQUIV=$EQUIV)}: $ok of $total"
awk -F '\t' '$2 != "ok" { print $2 }' "$out" | sort | uniq -c | sort -rn | head -30
