#!/usr/bin/env python3
"""Measures, on Mesa's RADV (null device, see scripts/radv_env.sh), what varyings and
ALU work cost in AMD ISA instructions, and fits the per-item figures behind the
`amd-gfx10` / `amd-gfx11` cost profiles (docs/cost-profiles.md).

Probe families, each a VS/FS pair generated here (GLSL, compiled by glslang inside the
chroot, linked by radv_link with RADV's own varying optimisation on):

  interp-K  the VS stores K distinct attribute components, each in its own float
            varying; the FS multiplies gl_FragCoord.x by each in turn (K fmuls that
            RADV's varying pass cannot move into the VS).
  flat-K    the same with `flat` varyings.
  fsadd-N   one interpolated varying; the FS adds N push constants to it.
  fsmul-N   one interpolated varying times gl_FragCoord.x times N push constants.
  vsadd-N   one varying; the VS adds N push constants to it before storing it.
  slots-S   S full vec4 varyings (4*S components); gl_FragCoord times each in the FS.
  wmul-fs / wmul-vs  the case of issue 12: `color.w * u.xyzw` computed in the FS from
            one interpolated component, or in the VS and sent as four.

Per family the instruction counts (RADV's `Instructions` statistic of the FS and of the
last pre-raster stage, and counts of `v_interp*`, `v_add_f32`, `exp param`
lines in the assembly) are fitted by least squares against the family's parameter; the
slopes are the marginal costs. Output: one table per GPU family on stdout, and the
per-probe rows as TSV with --tsv.

With --width the probes are instead chains of one ALU op (fadd, fmul, ffma, fcmp,
fdiv, fsqrt, inversesqrt, mod, floor, f32<->f64 conversion, iadd, imul, integer
division and remainder, icmp, ishl) at 16, 32 and 64 bits in the FS and in the VS; the
fitted slope is the op's marginal instruction count, and the 64-bit / 32-bit ratio is
what the profiles' `wide-op` factor prices (the ops far above it, fp64 division and
square roots and int64 division, get their own `(wide-op NAME N)` price).

usage: scripts/radv_calibrate.py [--family navi21] [--family navi31] [--tsv FILE]
                                 [--width [--op OP]...]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_K = 8  # components from two vec4 attributes
MAX_N = 8  # push-constant operands


def attr(i):
    return f"{'ab'[i // 4]}.{'xyzw'[i % 4]}"


def pcs(n):
    return " + ".join(f"pc.u[{i // 4}].{'xyzw'[i % 4]}" for i in range(n))


HEAD = "#version 450\n"
PUSH = "layout(push_constant) uniform P { vec4 u[2]; } pc;\n"
VS_IN = "layout(location=0) in vec4 a;\nlayout(location=1) in vec4 b;\n"
FS_OUT = "layout(location=0) out vec4 o;\n"


def scalar_probe(k, qual):
    """K float varyings, one attribute component each; the FS multiplies
    gl_FragCoord.x by each in turn (K fmuls the VS cannot take over: the chain starts
    from an FS-only value, so RADV's varying pass can neither move nor merge them)."""
    outs = "".join(f"layout(location={i}) {qual}out float v{i};\n" for i in range(k))
    stores = "".join(f"  v{i} = {attr(i)};\n" for i in range(k))
    vert = HEAD + VS_IN + outs + "void main() {\n  gl_Position = a;\n" + stores + "}\n"
    ins = outs.replace("out float", "in float")
    chain = "".join(f" * v{i}" for i in range(k))
    frag = HEAD + ins + FS_OUT + f"void main() {{ o = vec4(gl_FragCoord.x{chain}); }}\n"
    return vert, frag


def add_probe(n, side):
    """One varying; N push constants added in the FS (side 'fs') or in the VS, or
    (side 'fsmul') N push constants multiplied into gl_FragCoord.x in the FS."""
    extra = (" + " + pcs(n)) if n else ""
    vs_val = "a.x" + (extra if side == "vs" else "")
    fs_val = "v0" + (extra if side == "fs" else "")
    if side == "fsmul":
        fs_val = "v0 * (gl_FragCoord.x" + "".join(f" * pc.u[{i // 4}].{'xyzw'[i % 4]}" for i in range(n)) + ")"
    vert = HEAD + PUSH + VS_IN + "layout(location=0) out float v0;\n"
    vert += f"void main() {{\n  gl_Position = a;\n  v0 = {vs_val};\n}}\n"
    frag = HEAD + PUSH + "layout(location=0) in float v0;\n" + FS_OUT
    frag += f"void main() {{ o = vec4({fs_val}); }}\n"
    return vert, frag


def slots_probe(s):
    """S full vec4 varyings from S distinct attributes; the FS multiplies gl_FragCoord
    by each (4*S fmuls)."""
    ins = "".join(f"layout(location={i}) in vec4 a{i};\n" for i in range(s))
    outs = "".join(f"layout(location={i}) out vec4 v{i};\n" for i in range(s))
    stores = "".join(f"  v{i} = a{i};\n" for i in range(s))
    vert = HEAD + ins + outs + "void main() {\n  gl_Position = a0;\n" + stores + "}\n"
    chain = "".join(f" * v{i}" for i in range(s))
    frag = HEAD + outs.replace(" out ", " in ") + FS_OUT
    frag += f"void main() {{ o = gl_FragCoord{chain}; }}\n"
    return vert, frag


def wmul_probe(side):
    """Issue 12's example: color.w * u.xyzw in the FS (one component) or the VS (four)."""
    if side == "fs":
        vert = HEAD + VS_IN + "layout(location=0) out vec4 c;\n"
        vert += "void main() { gl_Position = a; c = b; }\n"
        frag = HEAD + PUSH + "layout(location=0) in vec4 c;\n" + FS_OUT
        frag += "void main() { o = c.w * pc.u[0]; }\n"
    else:
        vert = HEAD + PUSH + VS_IN + "layout(location=0) out vec4 c;\n"
        vert += "void main() { gl_Position = a; c = b.w * pc.u[0]; }\n"
        frag = HEAD + "layout(location=0) in vec4 c;\n" + FS_OUT + "void main() { o = c; }\n"
    return vert, frag


# Width probes (--width): one ALU op in a chain of N (0..WIDTH_N), in the FS or the
# VS, at 16, 32 and 64 bits. The chain starts from a per-invocation value (the
# interpolated varying times gl_FragCoord.x in the FS, an attribute in the VS) so
# nothing folds or moves; operands are push constants (uniform, as in a propagated
# uniform expression's neighbours). Per op the slope over N is its marginal cost; the
# 64-bit slope against the 32-bit one is what the profiles' width factors price.
WIDTH_N = 6
WIDTH_TYPES = {  # bits: (float type, int type)
    16: ("float16_t", "int16_t"),
    32: ("float", "int"),
    64: ("double", "int64_t"),
}
# op: (int?, chain step with x the running value, u[] the uniform operands,
# c a float accumulator, s[] 32-bit shift amounts, f[] float factors)
WIDTH_OPS = {
    "fadd": (False, "x = x + pc.u[{i}];"),
    "fmul": (False, "x = x * pc.u[{i}];"),
    "ffma": (False, "x = fma(x, pc.u[{i}], pc.u[{j}]);"),
    "fcmp": (False, "c += (x <= pc.u[{i}]) ? 1.0 : 0.0;"),
    "fdiv": (False, "x = x / pc.u[{i}];"),
    "fsqrt": (False, "x = sqrt(x) + pc.u[{i}];"),
    "frsq": (False, "x = inversesqrt(x) + pc.u[{i}];"),
    "fmod": (False, "x = mod(x, pc.u[{i}]);"),
    "ffloor": (False, "x = floor(x) + pc.u[{i}];"),
    "idiv": (True, "x = x / pc.u[{i}];"),
    "irem": (True, "x = x % pc.u[{i}];"),
    # f32 <-> f64 round trip with an fmul and an add of the width in between (without
    # the add, NIR folds the round trip away): two conversions more than at 32 bits.
    "fcvt": (False, "x = {T}(float(x) * pc.f[{i}]) + pc.u[{i}];"),
    "iadd": (True, "x = x + pc.u[{i}];"),
    "imul": (True, "x = x * pc.u[{i}];"),
    "icmp": (True, "c += (x < pc.u[{i}]) ? 1.0 : 0.0;"),
    "ishl": (True, "x = x << pc.s[{i}];"),
}
WIDTH_STAGES = ("fs", "fsu", "vs")
# Ops measured at 32 and 64 bits only (no 16-bit opaque op of theirs to price).
WIDE_ONLY = ("fsqrt", "frsq", "fmod", "ffloor", "fdiv", "fcvt", "idiv", "irem")
WIDTH_EXT = ("#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
             "#extension GL_EXT_shader_16bit_storage : require\n")


def width_chain(op, bits, n):
    """The GLSL statements of an N-step chain of `op` at `bits` over x."""
    is_int, step = WIDTH_OPS[op]
    t = WIDTH_TYPES[bits][is_int]
    return t, "".join("  " + step.format(i=i, j=(i + 1) % 8, T=t) + "\n" for i in range(n))


def width_probe(op, bits, n, stage):
    """A VS/FS pair with the N-step chain of `op` in `stage` ('fs', 'fsu' or 'vs')."""
    t, chain = width_chain(op, bits, n)
    push = f"layout(push_constant) uniform P {{ {t} u[8]; float f[8]; uint s[8]; }} pc;\n"
    # Integers start from the value's bits, floats from the value itself; the result
    # goes back to float through the same path, so only the chain depends on N.
    to_t = (lambda v: f"{t}(floatBitsToInt({v}))") if WIDTH_OPS[op][0] else (lambda v: f"{t}({v})")
    out = "float(x) + c"
    head = HEAD + WIDTH_EXT + push
    if stage in ("fs", "fsu"):
        # `fsu`: the chain starts from a push constant, so all of it is uniform (what
        # a propagated uniform expression is); `fs`: from a per-fragment value.
        start = "pc.u[7]" if stage == "fsu" else to_t("v0 * gl_FragCoord.x")
        vert = HEAD + VS_IN + "layout(location=0) out float v0;\nvoid main() { gl_Position = a; v0 = a.x; }\n"
        frag = head + "layout(location=0) in float v0;\n" + FS_OUT
        frag += f"void main() {{\n  {t} x = {start};\n  float c = 0.0;\n{chain}"
        frag += f"  o = vec4({out});\n}}\n"
    else:
        vert = head + VS_IN + "layout(location=0) out float v0;\n"
        vert += f"void main() {{\n  gl_Position = a;\n  {t} x = {to_t('a.x')};\n  float c = 0.0;\n{chain}"
        vert += f"  v0 = {out};\n}}\n"
        frag = HEAD + "layout(location=0) in float v0;\n" + FS_OUT + "void main() { o = vec4(v0); }\n"
    return vert, frag


def width_probes(ops=None):
    """(family, parameter, vert, frag) for every width probe (of `ops`, default all):
    family `OP.BITS.STAGE`."""
    out = []
    for op in ops or WIDTH_OPS:
        for bits in WIDTH_TYPES:
            if op in WIDE_ONLY and bits == 16:
                continue  # not needed for the profiles: no 16-bit opaque division
            for stage in WIDTH_STAGES:
                for n in range(0, WIDTH_N + 1):
                    out.append((f"{op}.{bits}.{stage}", n) + width_probe(op, bits, n, stage))
    return out


def probes():
    """(family, parameter, vert, frag) for every probe."""
    out = []
    for k in range(1, MAX_K + 1):
        out.append(("interp", k) + scalar_probe(k, ""))
        out.append(("flat", k) + scalar_probe(k, "flat "))
    for n in range(0, MAX_N + 1):
        out.append(("fsadd", n) + add_probe(n, "fs"))
        out.append(("vsadd", n) + add_probe(n, "vs"))
        out.append(("fsmul", n) + add_probe(n, "fsmul"))
    for s in range(1, 5):
        out.append(("slots", s) + slots_probe(s))
    out.append(("wmul-fs", 0) + wmul_probe("fs"))
    out.append(("wmul-vs", 0) + wmul_probe("vs"))
    return out


ASM_COUNTS = {
    "interp": re.compile(r"^\s*v_interp_\w+"),
    "lds_param": re.compile(r"^\s*lds_param_load\b|^\s*ds_param_load\b"),
    "fadd": re.compile(r"^\s*v_add_f32\w*"),
    "fmul": re.compile(r"^\s*v_mul_f32\w*"),
    "exp_param": re.compile(r"^\s*exp param\d+"),
}


def count_asm(path):
    counts = dict.fromkeys(ASM_COUNTS, 0)
    if not os.path.exists(path):
        return counts
    for line in open(path):
        for key, pat in ASM_COUNTS.items():
            if pat.match(line):
                counts[key] += 1
    return counts


def run_family(root, family, items):
    """Compiles every probe on RADV_FORCE_FAMILY=family; one dict per probe."""
    data = os.path.join(root, "data", "varysat-calibrate")
    shutil.rmtree(data, ignore_errors=True)
    for fam, param, vert, frag in items:
        d = os.path.join(data, "src", f"{fam}-{param}")
        os.makedirs(d)
        open(os.path.join(d, "p.vert"), "w").write(vert)
        open(os.path.join(d, "p.frag"), "w").write(frag)
    inner = "/data/varysat-calibrate"
    cmd = (f". /radv/env.sh; python3 /radv/run_pairs.py --src {inner}/src "
           f"--out {inner}/rows.tsv --work {inner}/work")
    env = dict(os.environ, RADV_FORCE_FAMILY=family)
    subprocess.run(["chroot", root, "bash", "-c", cmd], env=env, check=True,
                   stderr=subprocess.DEVNULL)
    lines = open(os.path.join(data, "rows.tsv")).read().splitlines()
    cols = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        row = dict(zip(cols, line.split("\t")))
        fam, param = row["pair"].rsplit("_", 1)[0].rsplit("-", 1)
        row["family"], row["param"] = fam, int(param)
        work = os.path.join(data, "work", row["pair"])
        fs_asm, vs_asm = pick_assembly(work)
        row["fs"] = count_asm(fs_asm)
        row["vs"] = count_asm(vs_asm)
        stats = exec_stats(os.path.join(work, "radv_link.out"))
        row["fs_stat"] = stats.get(exec_index(fs_asm), {})
        row["vs_stat"] = stats.get(exec_index(vs_asm), {})
        rows.append(row)
    return rows


def exec_stats(path):
    """{executable index: {statistic: int}} from radv_link's STAT lines."""
    stats = {}
    if os.path.exists(path):
        for line in open(path):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 4 and parts[0] == "STAT" and parts[3].lstrip("-").isdigit():
                stats.setdefault(parts[1], {})[parts[2]] = int(parts[3])
    return stats


def exec_index(asm):
    """The executable index of an `execN_Assembly.txt` path ('' for none)."""
    m = re.search(r"exec(\d+)_Assembly\.txt$", asm)
    return m.group(1) if m else ""


def pick_assembly(work):
    """The FS assembly (it holds the interpolation) and the other executable's."""
    asms = sorted(f for f in os.listdir(work) if f.endswith("_Assembly.txt"))
    fs, vs = None, None
    for f in asms:
        text = open(os.path.join(work, f)).read()
        if "exp mrt" in text:
            fs = os.path.join(work, f)
        else:
            vs = os.path.join(work, f)
    return fs or "", vs or ""


def slope(points):
    """Least-squares slope and intercept of (x, y) points."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    b = sxy / sxx
    return b, my - b * mx


def lstsq(samples):
    """Least squares for y = c0 + c1*x1 + ... : samples are (xs, y); normal equations
    solved by Gauss-Jordan elimination (a handful of unknowns, no numpy needed)."""
    n = len(samples[0][0]) + 1
    a = [[0.0] * (n + 1) for _ in range(n)]
    for xs, y in samples:
        v = [1.0] + list(xs)
        for i in range(n):
            for j in range(n):
                a[i][j] += v[i] * v[j]
            a[i][n] += v[i] * y
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[p] = a[p], a[c]
        for r in range(n):
            if r != c and a[c][c]:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [a[i][n] / a[i][i] for i in range(n)]


def fit(rows):
    """Marginal instruction costs per family: {figure: value}."""
    def pts(family, getter):
        return [(r["param"], getter(r)) for r in rows if r["family"] == family and r["status"] == "ok"]

    fs_instr = lambda r: int(r["fs_instrs"])
    vs_instr = lambda r: int(r["last_instrs"])
    res = {}
    fadd = slope(pts("fsadd", fs_instr))[0]
    fmul = slope(pts("fsmul", fs_instr))[0]
    res["FS fadd (push constant)"] = fadd
    res["FS fmul"] = fmul
    res["VS fadd (push constant)"] = slope(pts("vsadd", vs_instr))[0]
    res["interp component: FS instrs (minus its fmul)"] = slope(pts("interp", fs_instr))[0] - fmul
    res["interp component: FS v_interp*"] = slope(pts("interp", lambda r: r["fs"]["interp"]))[0]
    res["interp component: FS lds_param_load"] = slope(pts("interp", lambda r: r["fs"]["lds_param"]))[0]
    res["flat component: FS instrs (minus its fmul)"] = slope(pts("flat", fs_instr))[0] - fmul
    res["flat component: FS v_interp*"] = slope(pts("flat", lambda r: r["fs"]["interp"]))[0]
    # The last pre-raster stage pays per exported slot and per component: fitted on the
    # interp and flat families together (same two attributes, 1..8 components).
    vs = [((r["param"], (r["param"] + 3) // 4), vs_instr(r))
          for r in rows if r["family"] in ("interp", "flat") and r["status"] == "ok"]
    _, per_comp, per_slot = lstsq(vs)
    res["varying component: VS instrs (joint fit)"] = per_comp
    res["vec4 slot: VS instrs (joint fit)"] = per_slot
    res["vec4 slot: VS instrs (slots-S, includes an attribute fetch)"] = slope(pts("slots", vs_instr))[0]
    res["vec4 slot: VS exp param"] = slope(pts("slots", lambda r: r["vs"]["exp_param"]))[0]
    res["vec4 slot: FS instrs (minus 4 comps and 4 fmuls)"] = (
        slope(pts("slots", fs_instr))[0] - 4 * (fmul + res["interp component: FS instrs (minus its fmul)"]))
    return res


def report(family, rows):
    print(f"## {family}\n")
    print("| probe | FS instrs | VS instrs | FS v_interp | FS lds_param_load | VS exp param | param comps | FS var comps |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['family']}-{r['param']} | {r['fs_instrs']} | {r['last_instrs']} | {r['fs']['interp']} "
              f"| {r['fs']['lds_param']} | {r['vs']['exp_param']} | {r['radv_param_comps']} | {r['radv_fs_var_comps']} |")
    print("\n| fitted marginal cost | instructions |\n|---|---|")
    for k, v in fit(rows).items():
        print(f"| {k} | {v:.2f} |")
    print()


def width_fit(rows):
    """{(op, bits, stage): (instrs per op, inverse throughput per op)} by least squares."""
    groups = {}
    for r in rows:
        if r["status"] == "ok":
            groups.setdefault(r["family"], []).append(r)
    res = {}
    for fam, rs in sorted(groups.items()):
        op, bits, stage = fam.split(".")
        instr = "last_instrs" if stage == "vs" else "fs_instrs"
        stat = "vs_stat" if stage == "vs" else "fs_stat"
        per = slope([(r["param"], int(r[instr])) for r in rs])[0] if len(rs) > 1 else float("nan")
        thr = [(r["param"], r[stat].get("Inverse Throughput", 0)) for r in rs]
        res[(op, int(bits), stage)] = (per, slope(thr)[0] if len(thr) > 1 else float("nan"))
    return res


def width_report(family, rows):
    """Per op: marginal ISA instructions (and ACO's inverse-throughput estimate) at
    16/32/64 bits in the FS and VS, and the 64-bit (16-bit) cost over the 32-bit one."""
    fit = width_fit(rows)
    print(f"## {family}: ALU width\n")
    print("| op | stage | instrs 16 / 32 / 64 bit | 64 / 32 | 16 / 32 | inv. throughput 16 / 32 / 64 |")
    print("|---|---|---|---|---|---|")
    fmt = lambda v: "-" if v is None or v != v else f"{v:.2f}"
    for op in sorted({k[0] for k in fit}, key=list(WIDTH_OPS).index):
        for stage in WIDTH_STAGES:
            get = lambda b, k: fit.get((op, b, stage), (None, None))[k]
            ratio = lambda b: (get(b, 0) / get(32, 0)) if get(b, 0) is not None and get(32, 0) else None
            print(f"| {op} | {stage} | {' / '.join(fmt(get(b, 0)) for b in (16, 32, 64))} "
                  f"| {fmt(ratio(64))} | {fmt(ratio(16))} | {' / '.join(fmt(get(b, 1)) for b in (16, 32, 64))} |")
    failed = sorted(r["pair"] for r in rows if r["status"] != "ok")
    if failed:
        print(f"\nnot compiled: {', '.join(failed)}")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", action="append", help="RADV_FORCE_FAMILY (default navi21, navi31)")
    ap.add_argument("--tsv", help="write every probe row here")
    ap.add_argument("--width", action="store_true",
                    help="the ALU width probes (16/32/64-bit ops) instead of the varying ones")
    ap.add_argument("--op", action="append", choices=list(WIDTH_OPS),
                    help="with --width: only this op's probes (repeatable)")
    a = ap.parse_args()
    env = subprocess.run(["bash", os.path.join(HERE, "radv_env.sh")], capture_output=True, text=True)
    if env.returncode != 0:
        sys.exit("radv_calibrate.py: " + env.stderr.strip())
    root = env.stdout.strip()
    items = width_probes(a.op) if a.width else probes()
    tsv = open(a.tsv, "w") if a.tsv else None
    for family in a.family or ["navi21", "navi31"]:
        rows = run_family(root, family, items)
        (width_report if a.width else report)(family, rows)
        if tsv:
            for r in rows:
                tsv.write("\t".join([family, r["family"], str(r["param"]), r["fs_instrs"], r["last_instrs"],
                                     str(r["fs"]["interp"]), str(r["vs"]["exp_param"])]) + "\n")


if __name__ == "__main__":
    main()
