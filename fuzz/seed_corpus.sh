#!/bin/sh
# Seeds the fuzz corpora (run from anywhere): the example pairs for the targets
# that read `.pair` text, the shipped rule files for `rules`. The corpus directories
# are git-ignored; libFuzzer grows them during runs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for target in parse validate interpret optimize; do
    mkdir -p "$here/corpus/$target"
    cp "$here"/../examples/pairs/*.pair "$here/corpus/$target/"
done
mkdir -p "$here/corpus/rules"
cp "$here"/../rules/*.rules "$here/corpus/rules/"
echo "seeded $(ls "$here"/../examples/pairs/*.pair | wc -l) pairs and $(ls "$here"/../rules/*.rules | wc -l) rule files"

# Cost profiles: the built-in names as bases, one key of each kind.
mkdir -p "$here/corpus/profile"
printf '(profile p (base amd-gfx11) (fs-slot 8) (interp-component 3) (flat-component 2)\n  (extra-barycentric 2) (stage-slot-per-vertex 4) (weight fs 2) (limit tcs unlimited))\n' \
    > "$here/corpus/profile/all-keys"
printf '(profile q (base amd-gfx10) (limit gs-lines 20))\n' > "$here/corpus/profile/base"

# SPIR-V pairs: each GLSL pair of the import corpus compiled by glslang, packed as
# producer length (u32 LE), producer, consumer. Skipped without glslangValidator.
if command -v glslangValidator >/dev/null 2>&1; then
    mkdir -p "$here/corpus/import_spirv"
    tmp=$(mktemp -d)
    glsl="$here/../tests/corpus/glsl"
    for f in "$glsl"/*; do
        glslangValidator -V --aml -o "$tmp/$(basename "$f").spv" "$f" >/dev/null 2>&1 || true
    done
    for p in "$tmp"/*.spv; do
        base=${p%.*.spv}
        for c in "$base".*.spv; do
            [ "$p" = "$c" ] && continue
            out="$here/corpus/import_spirv/$(basename "$p" .spv)-$(basename "$c" .spv)"
            python3 -c 'import struct,sys; p=open(sys.argv[1],"rb").read(); c=open(sys.argv[2],"rb").read(); open(sys.argv[3],"wb").write(struct.pack("<I",len(p))+p+c)' "$p" "$c" "$out"
        done
    done
    rm -rf "$tmp"
    echo "seeded $(ls "$here/corpus/import_spirv" | wc -l) SPIR-V pairs"
fi
