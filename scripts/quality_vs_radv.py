#!/usr/bin/env python3
"""Quality report: the varyings of real shader pairs before and after varysat, and
after Mesa's RADV driver alone (its `nir_opt_varyings`), per pair and in total.

Corpus: `tests/corpus/glsl` (its pairs.txt), Debian's glmark2-data shaders and piglit's
`.shader_test` files (installed with apt when missing; third-party shaders are read
where Debian puts them and never copied into the repository). A stage set is a .vert
with the .frag of the same stem (plus .tesc/.tese/.geom between them); the compared
pair is the last pre-raster stage and the FS, since both tools are measured on what
the FS receives.

Both tools see the same SPIR-V: each stage is compiled once by glslang for Vulkan
(desktop GLSL 1.x rewritten to 4.50 as `varysat import` does, loose uniforms allowed
with -R, locations assigned by glslang and then matched by variable name across the
stages, as a GL linker would) and optimized by `spirv-opt -O`, then
- varysat: `varysat import` (by location) and `varysat stats --json`: declared, live
  and optimized components and vec4 slots of the pair;
- RADV (when its chroot is installed, see scripts/radv_env.sh; --no-radv skips it):
  the whole stage set through `run_pairs.py`; `radv_fs_var_comps/slots` are the generic
  varying components and slots RADV's final FS reads.

usage: scripts/quality_vs_radv.py [--max N] [--no-radv] [--tsv FILE] [--only-corpus] [--reuse-radv]
Prints a markdown summary (totals, per source, every pair where varysat ends with more
components or slots than RADV); --tsv writes one row per pair.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGES = ["vert", "tesc", "tese", "geom", "frag"]
SECTIONS = {"vertex shader": "vert", "tessellation control shader": "tesc",
            "tessellation evaluation shader": "tese", "geometry shader": "geom",
            "fragment shader": "frag"}


# ---------------------------------------------------------------- corpus

def corpus_sets(split_dir, only_corpus):
    """(source, name, {stage: path}) for every VS..FS stage set of the corpus."""
    sets = []
    glsl = os.path.join(ROOT, "tests", "corpus", "glsl")
    stems = {}
    for line in open(os.path.join(glsl, "pairs.txt")):
        line = line.split("#")[0].split()
        for f in line:
            stem, ext = os.path.splitext(f)
            stems.setdefault(stem, {})[ext[1:]] = os.path.join(glsl, f)
    for stem in sorted(stems):
        sets.append(("corpus", stem, stems[stem]))
    if only_corpus:
        return [s for s in sets if "vert" in s[2] and "frag" in s[2]]
    for base in ["/usr/share/glmark2"]:
        groups = {}
        for d, _, files in os.walk(base):
            for f in files:
                stem, ext = os.path.splitext(f)
                if ext[1:] in STAGES:
                    groups.setdefault(os.path.join(d, stem), {})[ext[1:]] = os.path.join(d, f)
        for stem in sorted(groups):
            sets.append(("glmark2", os.path.relpath(stem, base), groups[stem]))
    n = 0
    for base in ["/usr/lib/piglit", "/usr/share/piglit"] + [
            os.path.join("/usr/lib", d, "piglit") for d in sorted(os.listdir("/usr/lib"))]:
        if not os.path.isdir(base):
            continue
        for d, _, files in sorted(os.walk(base)):
            for f in sorted(files):
                if f.endswith(".shader_test"):
                    path = os.path.join(d, f)
                    found = split_shader_test(path, os.path.join(split_dir, f"t{n}"))
                    n += 1
                    if found:
                        sets.append(("piglit", os.path.relpath(path, base), found))
    return [s for s in sets if "vert" in s[2] and "frag" in s[2]]


def split_shader_test(path, stem):
    """The stage sections of a piglit .shader_test, written as stem.EXT files."""
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return None
    current, found = None, {}
    for line in text.splitlines():
        if line.startswith("["):
            current = SECTIONS.get(line.strip("[] \t").lower())
            if current:
                found[current] = []
            continue
        if current:
            found[current].append(line)
    if "vert" not in found or "frag" not in found:
        return None
    out = {}
    for ext, lines in found.items():
        out[ext] = f"{stem}.{ext}"
        with open(out[ext], "w") as f:
            f.write("\n".join(lines) + "\n")
    return out


# ---------------------------------------------------------------- GLSL to SPIR-V

# `[ \t]`, not `\s`: the profile word is on the #version line, and `\s` would reach
# across the line end and take (and, substituting, delete) the next line's first word.
VERSION = re.compile(r"^[ \t]*#[ \t]*version[ \t]+(\d+)([ \t]+\w+)?", re.M)


def rewrite_desktop(text, stage):
    """Desktop GLSL below 3.30 (or without #version) as 4.50, the way varysat's importer
    rewrites it (src/import/glsl.rs): attribute/varying, texture2D & co, gl_FragColor."""
    m = VERSION.search(text)
    if m and (int(m.group(1)) >= 330 or (m.group(2) or "").strip() == "es"):
        return text
    body = VERSION.sub("", text, count=1) if m else text
    if stage == "vert":
        body = re.sub(r"\battribute\b", "in", body)
        body = re.sub(r"\bvarying\b", "out", body)
    elif stage == "frag":
        body = re.sub(r"\bvarying\b", "in", body)
    else:
        return text
    body = re.sub(r"\b(texture2D|textureCube|texture3D|shadow2D)(Proj|Lod)\b", r"texture\2", body)
    body = re.sub(r"\b(texture2D|textureCube|texture3D|shadow2D)\b", "texture", body)
    # glmark2 compiles its shaders with these precision macros defined.
    head = "#version 450\n#define HIGHP_OR_DEFAULT highp\n#define MEDIUMP_OR_DEFAULT mediump\n"
    if stage == "frag":
        if "gl_FragData" in body:
            head += "layout(location=0) out vec4 varysat_FragData[8];\n"
            body = body.replace("gl_FragData", "varysat_FragData")
        elif "gl_FragColor" in body:
            head += "layout(location=0) out vec4 varysat_FragColor;\n"
            body = body.replace("gl_FragColor", "varysat_FragColor")
    return head + "#line 1\n" + body


def glslang(src, stage, dst):
    cmd = ["glslangValidator", "-V", "-R", "--aml", "--amb", "-S", stage, "-o", dst, src]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0


# SPIR-V: locations matched by name along the stage chain.
OP_NAME, OP_DECORATE, OP_VARIABLE = 5, 71, 59
LOCATION, STORAGE_INPUT, STORAGE_OUTPUT = 30, 1, 3


def spv_words(path):
    data = open(path, "rb").read()
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def instructions(words):
    """(word index, word count, opcode) of each instruction after the header."""
    i = 5
    while i < len(words):
        n, op = words[i] >> 16, words[i] & 0xFFFF
        if n == 0:
            return
        yield i, n, op
        i += n


def spv_io(words):
    """{name: (location word index, location)} of Input and Output variables."""
    names, locs, storage = {}, {}, {}
    for i, n, op in instructions(words):
        if op == OP_NAME:
            raw = struct.pack(f"<{n - 2}I", *words[i + 2:i + n])
            names[words[i + 1]] = raw.split(b"\0")[0].decode(errors="replace")
        elif op == OP_DECORATE and n >= 4 and words[i + 2] == LOCATION:
            locs[words[i + 1]] = i + 3
        elif op == OP_VARIABLE:
            storage[words[i + 2]] = words[i + 3]
    io = {STORAGE_INPUT: {}, STORAGE_OUTPUT: {}}
    for vid, at in locs.items():
        st = storage.get(vid)
        if st in io and vid in names:
            io[st][names[vid]] = (at, words[at])
    return io[STORAGE_INPUT], io[STORAGE_OUTPUT]


OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_TYPE_MATRIX = 21, 22, 23, 24
OP_TYPE_ARRAY, OP_TYPE_POINTER, OP_CONSTANT = 28, 32, 43


def input_slot_counts(words):
    """{variable id: locations it occupies} of the module's Input variables: a 64-bit
    3- or 4-component vector takes two, matrices and arrays one per column/element."""
    types, consts, inputs = {}, {}, {}
    for i, n, op in instructions(words):
        w = words[i + 1:i + n]
        if op in (OP_TYPE_INT, OP_TYPE_FLOAT):
            types[w[0]] = ("scalar", w[1])
        elif op == OP_TYPE_VECTOR:
            types[w[0]] = ("vector", w[1], w[2])
        elif op in (OP_TYPE_MATRIX, OP_TYPE_ARRAY):
            types[w[0]] = ("many", w[1], w[2], op == OP_TYPE_ARRAY)
        elif op == OP_TYPE_POINTER:
            types[w[0]] = ("pointer", w[2])
        elif op == OP_CONSTANT and len(w) >= 3:
            consts[w[1]] = w[2]
        elif op == OP_VARIABLE and w[2] == STORAGE_INPUT:
            inputs[w[1]] = w[0]

    def count(t):
        kind = types.get(t, ("scalar", 32))
        if kind[0] == "pointer":
            return count(kind[1])
        if kind[0] == "vector":
            wide = types.get(kind[1], ("scalar", 32))[1] == 64
            return 2 if wide and kind[2] > 2 else 1
        if kind[0] == "many":
            length = consts.get(kind[2], 1) if kind[3] else kind[2]
            return length * count(kind[1])
        return 1

    return {v: count(t) for v, t in inputs.items()}


def repack_vertex_inputs(path):
    """Re-locates the VS inputs in location order so that none overlaps: glslang's
    --aml gives a dvec3/dvec4 one location where Vulkan counts two, and RADV then
    reads the overlapped attributes as undefined (and folds them away)."""
    words = spv_words(path)
    counts = input_slot_counts(words)
    locs = {}
    for i, n, op in instructions(words):
        if op == OP_DECORATE and n >= 4 and words[i + 2] == LOCATION and words[i + 1] in counts:
            locs[words[i + 1]] = i + 3
    next_free = 0
    for vid, at in sorted(locs.items(), key=lambda kv: (words[kv[1]], kv[0])):
        words[at] = next_free
        next_free += counts[vid]
    open(path, "wb").write(struct.pack(f"<{len(words)}I", *words))


def match_locations(producer, consumer):
    """Rewrites the consumer's input locations to the producer's output locations of
    the same name (inputs without a producer output go past the producer's last)."""
    outs = spv_io(spv_words(producer))[1]
    words = spv_words(consumer)
    ins = spv_io(words)[0]
    spare = max([loc for _, loc in outs.values()] + [-1]) + 8
    for name, (at, _) in sorted(ins.items()):
        if name in outs:
            words[at] = outs[name][1]
        else:
            words[at] = spare
            spare += 4
    open(consumer, "wb").write(struct.pack(f"<{len(words)}I", *words))


def compile_set(files, out_dir, reuse=False):
    """SPIR-V per stage with matched locations, or None when a stage fails. With
    `reuse`, the modules an earlier run left in out_dir are taken as they are."""
    os.makedirs(out_dir, exist_ok=True)
    chain = [s for s in STAGES if s in files]
    if reuse:
        spv = {s: os.path.join(out_dir, f"{s}.spv") for s in chain}
        done = all(os.path.exists(p) and not os.path.exists(p + ".opt") for p in spv.values())
        return spv if done else None
    spv = {}
    for s in chain:
        try:
            text = open(files[s], errors="replace").read()
        except OSError:
            return None
        # Not named .vert/.frag: run_pairs.py --src would take them for GLSL samples.
        src = os.path.join(out_dir, f"{s}.glsl")
        open(src, "w").write(rewrite_desktop(text, s))
        spv[s] = os.path.join(out_dir, f"{s}.spv")
        if not glslang(src, s, spv[s]):
            return None
    if "vert" in spv:
        repack_vertex_inputs(spv["vert"])
    for a, b in zip(chain, chain[1:]):
        match_locations(spv[a], spv[b])
    # `spirv-opt -O`, as `varysat import` does for GLSL (it merges early returns, which
    # the importer needs); both tools then read the same optimized modules.
    for s in chain:
        opt = spv[s] + ".opt"
        if subprocess.run(["spirv-opt", "-O", spv[s], "-o", opt], capture_output=True).returncode != 0:
            return None
        os.replace(opt, spv[s])
    return spv


# ---------------------------------------------------------------- the two tools

def varysat_stats(binary, producer, consumer, work):
    pair = os.path.join(work, "p.pair")
    r = subprocess.run([binary, "import", producer, consumer, "-o", pair],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return None, "import: " + first_line(r.stderr)
    r = subprocess.run([binary, "stats", "--json", pair], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None, "stats: " + first_line(r.stderr)
    return json.loads(r.stdout)["pairs"][0], None


def first_line(text):
    line = (text.strip().splitlines() or [""])[0]
    return re.sub(r"\d+", "N", re.sub(r"^\S+: error: ", "", line))[:100]


def radv_rows(root, combos, reuse):
    """run_pairs.py over every combo (name -> {stage: spv path under root/data})."""
    if not combos:
        return {}
    data = os.path.join(root, "data")
    base = os.path.join(data, "varysat-quality")
    args = ["--src", "/data/varysat-quality", "--out", "/data/varysat-quality/radv.tsv",
            "--work", "/data/varysat-quality/radv-work"]
    for name, spv in combos.items():
        parts = [os.path.relpath(spv[s], base) if s in spv else "-" for s in STAGES]
        args += ["--combo", f"{name}={','.join(parts)}"]
    script = '. /radv/env.sh; exec python3 /radv/run_pairs.py "$@"'
    if not (reuse and os.path.exists(os.path.join(base, "radv.tsv"))):
        subprocess.run(["chroot", root, "bash", "-c", script, "bash"] + args,
                       stderr=subprocess.DEVNULL, check=False)
    rows = {}
    path = os.path.join(base, "radv.tsv")
    if os.path.exists(path):
        lines = open(path).read().splitlines()
        cols = lines[0].split("\t")
        for line in lines[1:]:
            row = dict(zip(cols, line.split("\t")))
            rows[row["pair"]] = row
    return rows


# ---------------------------------------------------------------- report

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=0, help="at most N stage sets (every k-th)")
    ap.add_argument("--no-radv", action="store_true")
    ap.add_argument("--only-corpus", action="store_true", help="tests/corpus/glsl only")
    ap.add_argument("--tsv")
    ap.add_argument("--reuse-radv", action="store_true",
                    help="keep the SPIR-V and RADV's figures of the previous run (same corpus and --max)")
    ap.add_argument("--varysat", default=os.path.join(ROOT, "target", "release", "varysat"))
    a = ap.parse_args()

    subprocess.run(["bash", os.path.join(ROOT, "scripts", "setup.sh")], check=True)
    if not a.only_corpus:
        for pkg in ("glmark2-data", "piglit"):
            if subprocess.run(["dpkg", "-s", pkg], capture_output=True).returncode != 0:
                env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
                if subprocess.run(["apt-get", "install", "-y", "-qq", pkg], env=env,
                                  capture_output=True).returncode != 0:
                    subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
                    subprocess.run(["apt-get", "install", "-y", "-qq", pkg], env=env, capture_output=True)
    if a.varysat == os.path.join(ROOT, "target", "release", "varysat"):
        subprocess.run(["cargo", "build", "--release", "-q", "--bin", "varysat"], cwd=ROOT, check=True)

    root = None
    if not a.no_radv:
        env = subprocess.run(["bash", os.path.join(ROOT, "scripts", "radv_env.sh")],
                             capture_output=True, text=True)
        root = env.stdout.strip() if env.returncode == 0 else None
        if root is None:
            print("note: RADV harness not available, its columns stay empty", file=sys.stderr)

    scratch = tempfile.mkdtemp(prefix="varysat-quality-")
    work = os.path.join(root, "data", "varysat-quality") if root else scratch
    if root and not a.reuse_radv:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    try:
        sets = corpus_sets(scratch, a.only_corpus)
        if a.max and len(sets) > a.max:
            step = -(-len(sets) // a.max)
            sets = sets[::step]
        rows, combos, failures = [], {}, {}
        for i, (source, name, files) in enumerate(sets):
            d = os.path.join(work, f"p{i}")
            spv = compile_set(files, d, a.reuse_radv)
            if spv is None:
                failures["glslang (Vulkan)"] = failures.get("glslang (Vulkan)", 0) + 1
                continue
            last = [s for s in ("geom", "tese", "vert") if s in spv][0]
            stats, err = varysat_stats(a.varysat, spv[last], spv["frag"], d)
            if err:
                failures[err] = failures.get(err, 0) + 1
                continue
            rows.append({"id": f"p{i}", "source": source, "name": name,
                         "stages": "+".join(s for s in STAGES if s in spv), **stats})
            combos[f"p{i}"] = spv
        radv = radv_rows(root, combos, a.reuse_radv) if root else {}
        for r in rows:
            x = radv.get(r["id"], {})
            ok = x.get("status") == "ok"
            r["radv_comps"] = int(x["radv_fs_var_comps"]) if ok else None
            r["radv_slots"] = int(x["radv_fs_var_slots"]) if ok else None
            r["radv_status"] = x.get("status", "not run")
        report(rows, failures, len(sets))
        if a.tsv:
            write_tsv(a.tsv, rows)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


COLS = ["source", "name", "stages", "declared_components", "declared_slots",
        "live_components", "live_slots", "optimized_components", "optimized_slots",
        "radv_comps", "radv_slots", "radv_status"]


def write_tsv(path, rows):
    with open(path, "w") as f:
        f.write("\t".join(COLS) + "\n")
        for r in rows:
            f.write("\t".join("" if r.get(c) is None else str(r.get(c)) for c in COLS) + "\n")


def total(rows, key):
    return sum(r[key] for r in rows if r.get(key) is not None)


def report(rows, failures, found):
    both = [r for r in rows if r["radv_comps"] is not None]
    print(f"stage sets: {found}; measured by varysat: {len(rows)}; also by RADV: {len(both)}\n")
    print("| source | pairs | declared comps / slots | live | varysat | RADV (same pairs) | varysat on them |")
    print("|---|---|---|---|---|---|---|")
    for source in ["corpus", "glmark2", "piglit", None]:
        sel = [r for r in rows if source is None or r["source"] == source]
        if not sel:
            continue
        bs = [r for r in sel if r["radv_comps"] is not None]
        print(f"| {source or 'all'} | {len(sel)} "
              f"| {total(sel, 'declared_components')} / {total(sel, 'declared_slots')} "
              f"| {total(sel, 'live_components')} / {total(sel, 'live_slots')} "
              f"| {total(sel, 'optimized_components')} / {total(sel, 'optimized_slots')} "
              f"| {total(bs, 'radv_comps')} / {total(bs, 'radv_slots')} ({len(bs)}) "
              f"| {total(bs, 'optimized_components')} / {total(bs, 'optimized_slots')} |")
    worse = [r for r in both if r["optimized_components"] > r["radv_comps"]
             or r["optimized_slots"] > r["radv_slots"]]
    better = [r for r in both if (r["optimized_components"], r["optimized_slots"]) < (r["radv_comps"], r["radv_slots"])
              and r not in worse]
    print(f"\nvarysat fewer than RADV on {len(better)} pairs, more on {len(worse)}, "
          f"tied on {len(both) - len(better) - len(worse)}.")
    if worse:
        print("\n| pair | stages | varysat comps / slots | RADV comps / slots |\n|---|---|---|---|")
        for r in worse:
            print(f"| {r['source']}: {r['name']} | {r['stages']} | {r['optimized_components']} / "
                  f"{r['optimized_slots']} | {r['radv_comps']} / {r['radv_slots']} |")
    if failures:
        print("\nnot measured, by cause:")
        for k, v in sorted(failures.items(), key=lambda kv: -kv[1]):
            print(f"  {v:5d}  {k}")


if __name__ == "__main__":
    main()
