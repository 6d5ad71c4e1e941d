#!/bin/sh
# Seeds every fuzz target's corpus with the example pairs (run from anywhere).
# The corpus directories are git-ignored: libFuzzer grows them during runs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for target in parse validate interpret; do
    mkdir -p "$here/corpus/$target"
    cp "$here"/../examples/pairs/*.pair "$here/corpus/$target/"
done
echo "seeded $(ls "$here"/../examples/pairs/*.pair | wc -l) pairs into each of corpus/{parse,validate,interpret}"
