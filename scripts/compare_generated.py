#!/usr/bin/env python3
"""Quality of two varysat binaries on a directory of generated pairs.

usage: scripts/compare_generated.py BASE_BIN NEW_BIN DIR

DIR holds `.pair` files (`cargo run --release --example generated_corpus -- N SEED
KIND DIR` writes them). Each pair is optimized once by each binary (`opt --report
json`, two at a time); prints how many outputs are byte-identical, and of the others
how many end with a higher model cost after (worse), a lower one or fewer components
at the same cost (better), or a tie, then up to 30 of them. Meant for a change that
should not alter results (a pruning of the search): it is faster than
`scripts/compare_real.py` (one run per binary, no timing) and so scales to thousands
of pairs.
"""

import glob
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def run(binary, pair):
    r = subprocess.run([binary, 'opt', '--report', 'json', pair], capture_output=True, text=True)
    try:
        return json.loads(r.stderr), r.stdout
    except ValueError:
        return None, r.stdout


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    base, new, corpus = sys.argv[1:]
    files = sorted(glob.glob(os.path.join(corpus, '*.pair')))
    counts = dict(identical=0, worse=0, better=0, tie=0, errors=0)
    lines = []
    with ThreadPoolExecutor(2) as ex:
        for f, a, b in ex.map(lambda f: (f, run(base, f), run(new, f)), files):
            if a[0] is None or b[0] is None:
                counts['errors'] += 1
                if (a[0] is None) != (b[0] is None):
                    lines.append(f'ERROR in one only {f}')
                continue
            if a[1] == b[1]:
                counts['identical'] += 1
                continue
            ca, cb = a[0]['cost']['after'], b[0]['cost']['after']
            ka = (a[0]['after']['components'], a[0]['after']['slots'])
            kb = (b[0]['after']['components'], b[0]['after']['slots'])
            kind = 'worse' if cb > ca else 'better' if cb < ca or kb < ka else 'tie'
            counts[kind] += 1
            lines.append(f'{kind.upper()} {f} cost {ca} -> {cb}, (components, slots) {ka} -> {kb}')
    print(f'{corpus}: {len(files)} pairs, ' + ', '.join(f'{k} {v}' for k, v in counts.items()))
    for line in lines[:30]:
        print(line)


main()
