#!/usr/bin/env python3
"""RADV on varysat's SPIR-V export: every stage set of tests/corpus/glsl (a .vert
with the .frag of the same stem, plus .tesc/.tese/.geom of that stem) is compiled
on RADV's null device (navi21) twice -- as the application would hand it over
(glslang + `spirv-opt -O`, the SPIR-V varysat imports) and with the last
pre-raster stage and the FS replaced by `varysat opt --emit spirv` -- and the
figures of both pipelines are compared: exported param slots/components of the
last pre-raster stage and ISA instruction counts of it and of the FS.

With --sample N, the stage sets are instead those of scripts/quality_vs_radv.py --max N
that come from Debian's glmark2-data and piglit (desktop GLSL compiled for Vulkan with
relaxed rules and locations matched by name, exactly as that script compiles them, so
the two reports cover the same pairs).

Needs the RADV chroot of ../shared/radv (RADV_ROOT, default /var/tmp/radv-trixie)
and root (chroot). Prints a markdown table per pair and the totals.

usage: scripts/radv_export.py [--tsv FILE] [--keep] [--sample N] [--varysat BIN]
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RADV_ROOT = os.environ.get("RADV_ROOT", "/var/tmp/radv-trixie")
STAGES = ["vert", "tesc", "tese", "geom", "frag"]
FIGS = ["radv_param_slots", "radv_param_comps", "last_instrs", "fs_instrs"]


def stage_sets():
    """(stem, {stage: path}) for each corpus stem with a .vert and a .frag."""
    glsl = os.path.join(ROOT, "tests", "corpus", "glsl")
    stems = {}
    for line in open(os.path.join(glsl, "pairs.txt")):
        for f in line.split("#")[0].split():
            stem, ext = os.path.splitext(f)
            stems.setdefault(stem, {})[ext[1:]] = os.path.join(glsl, f)
    return [(s, st) for s, st in sorted(stems.items()) if "vert" in st and "frag" in st]


def compile_stage(src, dst):
    """SPIR-V as varysat's import compiles it (glslang for Vulkan, then spirv-opt -O)."""
    raw = dst + ".raw"
    r = subprocess.run(["glslangValidator", "-V", "--aml", "--amb", "-o", raw, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return False
    r = subprocess.run(["spirv-opt", "-O", raw, "-o", dst], capture_output=True, text=True)
    os.remove(raw)
    return r.returncode == 0


def radv(name, files):
    """One run_pairs.py row for a stage set of .spv files under RADV_ROOT/data."""
    args = ["chroot", RADV_ROOT, "bash", "-c",
            ". /radv/env.sh; python3 /radv/run_pairs.py --one %s %s --out /data/varysat-export/%s.tsv"
            % (name, " ".join("--%s %s" % (s, p) for s, p in files.items()), name)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    tsv = os.path.join(RADV_ROOT, "data", "varysat-export", name + ".tsv")
    if r.returncode != 0 or not os.path.exists(tsv):
        return None
    rows = list(csv.DictReader(open(tsv), delimiter="\t"))
    return rows[0] if rows and rows[0].get("status", "") in ("", "ok") else None


def num(row, k):
    try:
        return int(row.get(k) or 0)
    except ValueError:
        return 0


def corpus_spv(d):
    """(stem, chain, {stage: spv}) for tests/corpus/glsl, compiled here, or a skip reason."""
    for stem, files in stage_sets():
        spv = {}
        for s, src in files.items():
            spv[s] = os.path.join(d, stem, os.path.basename(src) + ".spv")
            os.makedirs(os.path.dirname(spv[s]), exist_ok=True)
            if not compile_stage(src, spv[s]):
                yield stem, None, "glslang/spirv-opt failed on " + s
                break
        else:
            yield stem, spv, None


def sample_spv(d, n):
    """The glmark2 + piglit stage sets of quality_vs_radv.py --max n, compiled as it does."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import quality_vs_radv as q
    split = os.path.join(d, "split")
    os.makedirs(split, exist_ok=True)
    sets = q.corpus_sets(split, False)
    if n and len(sets) > n:
        sets = sets[::-(-len(sets) // n)]
    for i, (source, name, files) in enumerate(sets):
        if source == "corpus":
            continue
        spv = q.compile_set(files, os.path.join(d, "p%d" % i))
        yield "p%d:%s" % (i, name), spv, None if spv else "glslang (Vulkan) failed"


def measure(binary, stem, spv, d):
    """RADV's figures for the original set and for it with varysat's two stages, or a
    skip reason."""
    chain = [s for s in STAGES if s in spv]
    last = chain[-2]
    out = os.path.join(d, "opt")
    os.makedirs(out, exist_ok=True)
    r = subprocess.run([binary, "opt", spv[last], spv["frag"], "--emit", "spirv", "-o", out],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None, "export: " + (r.stderr.strip().splitlines() or [""])[-1]
    inside = lambda p: "/data/" + os.path.relpath(p, os.path.join(RADV_ROOT, "data"))
    orig = {s: inside(p) for s, p in spv.items()}
    opt = dict(orig)
    for s in (last, "frag"):
        opt[s] = inside(os.path.join(out, os.path.basename(spv[s])))
    name = os.path.basename(d)
    a, b = radv(name + "_orig", orig), radv(name + "_opt", opt)
    if a is None or b is None:
        return None, "RADV pipeline failed (%s)" % ("original" if a is None else "optimized")
    return (stem, "+".join(chain), a, b), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsv")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--sample", type=int, default=0,
                    help="the glmark2 + piglit sets of quality_vs_radv.py --max N instead")
    ap.add_argument("--varysat", help="varysat binary (default: a debug build of this tree)")
    args = ap.parse_args()
    global RADV_ROOT
    # radv_env.sh finds the harness, sets it up (or repairs its mounts) when needed
    # and prints the chroot root.
    env = subprocess.run(["bash", os.path.join(ROOT, "scripts", "radv_env.sh")],
                         capture_output=True, text=True)
    if env.returncode != 0:
        sys.exit("RADV harness not available: %s (see ../shared/radv/README.md)" % env.stderr.strip())
    RADV_ROOT = env.stdout.strip()
    binary = args.varysat
    if binary is None:
        binary = os.path.join(ROOT, "target", "debug", "varysat")
        subprocess.run(["cargo", "build", "-q", "--bin", "varysat"], cwd=ROOT, check=True)
    work = os.path.join(RADV_ROOT, "data", "varysat-export")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    sets = sample_spv(work, args.sample) if args.sample else corpus_spv(work)
    rows, skipped = [], []
    for k, (stem, spv, why) in enumerate(sets):
        if spv is not None:
            row, why = measure(binary, stem, spv, os.path.join(work, "m%d" % k))
        if why is not None:
            skipped.append((stem, why))
        else:
            rows.append(row)
    report(rows, skipped)
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("pair\tstages\t" + "\t".join("%s_radv\t%s_varysat" % (k, k) for k in FIGS) + "\n")
            for stem, chain, a, b in rows:
                f.write("%s\t%s\t%s\n" % (stem, chain, "\t".join("%d\t%d" % (num(a, k), num(b, k)) for k in FIGS)))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


def report(rows, skipped):
    print("| pair | stages | param slots RADV / varysat | param comps | last-stage instrs | FS instrs |")
    print("|---|---|---|---|---|---|")
    tot = {k: [0, 0] for k in FIGS}
    worse = []
    for stem, chain, a, b in rows:
        cells = []
        for k in FIGS:
            x, y = num(a, k), num(b, k)
            tot[k][0] += x
            tot[k][1] += y
            cells.append("%d / %d" % (x, y))
        print("| %s | %s | %s |" % (stem, chain, " | ".join(cells)))
        if num(b, "fs_instrs") > num(a, "fs_instrs"):
            worse.append("%s: FS instructions %d > %d" % (stem, num(b, "fs_instrs"), num(a, "fs_instrs")))
        if num(b, "radv_param_slots") > num(a, "radv_param_slots"):
            worse.append("%s: param slots %d > %d" % (stem, num(b, "radv_param_slots"), num(a, "radv_param_slots")))
    print("| **total** (%d pairs) | | %s |" % (len(rows), " | ".join("%d / %d" % tuple(tot[k]) for k in FIGS)))
    print()
    for w in worse:
        print("- worse than RADV alone: " + w)
    for stem, why in skipped:
        print("- not measured: %s: %s" % (stem, why))


if __name__ == "__main__":
    main()
