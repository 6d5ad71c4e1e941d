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
