#!/usr/bin/env python3
"""Before/after optimize time and quality of two varysat binaries on an imported corpus.

usage: scripts/compare_real.py BASE_BIN NEW_BIN [CORPUS_DIR]   (default target/real-corpus)

Each `.pair` of the corpus (scripts/real_corpus.sh imports it) is optimized 3 times by
each binary, interleaved, with `opt --report json`; per pair the median of the
reported `time_ms` is kept. Prints median / p90 / p99 / max / sum per binary, the
per-pair speed-up, components and slots after (summed), budget-stopped pairs, pairs
whose optimized text differs, and every pair whose components or slots differ.
CLI times include no process start-up but are single runs: use the same load for both.
"""


import sys, json, subprocess, glob, statistics, os
base, new = sys.argv[1], sys.argv[2]
corpus = sys.argv[3] if len(sys.argv) > 3 else 'target/real-corpus'
files = sorted(glob.glob(os.path.join(corpus, '*.pair')))
def run(b, f):
    r = subprocess.run([b, 'opt', '--report', 'json', f], capture_output=True, text=True)
    try: d = json.loads(r.stderr)
    except Exception: return None
    return d, r.stdout
rows = []
for f in files:
    ts = {base: [], new: []}; res = {}
    for i in range(3):
        for b in (base, new):
            x = run(b, f)
            if x is None: continue
            ts[b].append(x[0]['time_ms']); res[b] = x
    if base not in res or new not in res: continue
    db, dn = res[base][0], res[new][0]
    rows.append(dict(name=os.path.basename(f), tb=statistics.median(ts[base]), tn=statistics.median(ts[new]),
        cb=db['after']['components'], cn=dn['after']['components'], sb=db['after']['slots'], sn=dn['after']['slots'],
        c0=db['before']['components'], s0=db['before']['slots'], same=res[base][1]==res[new][1],
        stopb=db['stop_reason'], stopn=dn['stop_reason'], nb=db['egraph']['nodes'], nn=dn['egraph']['nodes']))
def q(xs, p): xs = sorted(xs); return xs[min(len(xs)-1, int(p*len(xs)))]
for key, lab in (('tb','base'),('tn','new')):
    xs = [r[key] for r in rows]
    print(f"{lab}: pairs {len(xs)} median {q(xs,.5):.2f} ms p90 {q(xs,.9):.2f} p99 {q(xs,.99):.2f} max {max(xs):.2f} sum {sum(xs):.0f}")
ratios = sorted(r['tb']/max(r['tn'],1e-9) for r in rows)
print(f"speedup per pair: median {q(ratios,.5):.2f}x, min {ratios[0]:.2f}x, max {ratios[-1]:.2f}x")
print("components before/base/new", sum(r['c0'] for r in rows), sum(r['cb'] for r in rows), sum(r['cn'] for r in rows))
print("slots before/base/new", sum(r['s0'] for r in rows), sum(r['sb'] for r in rows), sum(r['sn'] for r in rows))
print("identical outputs", sum(r['same'] for r in rows), "of", len(rows))
print("budget-stopped base/new", sum(r['stopb']!='saturated' for r in rows), sum(r['stopn']!='saturated' for r in rows))
for r in rows:
    if r['cn'] != r['cb'] or r['sn'] != r['sb']:
        print("QUALITY", r['name'], 'comps', r['cb'], '->', r['cn'], 'slots', r['sb'], '->', r['sn'], r['stopb'], '->', r['stopn'])
for r in sorted(rows, key=lambda r: -r['tn'])[:8]:
    print("SLOW", r['name'], f"{r['tb']:.1f} -> {r['tn']:.1f} ms", r['nb'], '->', r['nn'], 'nodes', r['stopn'])
