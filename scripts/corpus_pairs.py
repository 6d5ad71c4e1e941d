"""Pairs the glmark2 / piglit shader files listed in argv[1] (one path a line):
files with one stem and stage extensions in one directory, producer before
consumer; piglit `.shader_test` files are split into per-stage files under argv[2]
(`tN.STAGE`, N the `.shader_test`'s line in argv[1]). glmark2's template shaders are
instantiated under argv[2]/glmark2 as glmark2 builds them at run time (`GLMARK2`).
Prints `PRODUCER CONSUMER` lines."""
import math, os, sys

GLMARK2_SHADERS = "/usr/share/glmark2/shaders"


def vec(*xs):
    """A glmark2 constant's value as its `ShaderSource::add_const` prints it
    (`std::fixed`: six decimals)."""
    if len(xs) == 1:
        return "float", f"{xs[0]:f}"
    return f"vec{len(xs)}", f"vec{len(xs)}({', '.join(f'{x:f}' for x in xs)})"


def half_vector(x, y, z):
    """normalize(normalize(light.xyz) + (0, 0, 1)), as the bump and shading scenes
    compute LightSourceHalfVector."""
    n = math.sqrt(x * x + y * y + z * z)
    h = (x / n, y / n, z / n + 1.0)
    m = math.sqrt(sum(c * c for c in h))
    return tuple(c / m for c in h)


LIGHT = (20.0, 20.0, 10.0, 1.0)  # the bump and shading scenes' light position
HALF = half_vector(*LIGHT[:3])


def step_file(name):
    with open(os.path.join(GLMARK2_SHADERS, name)) as f:
        return f.read()


# The template programs of glmark2 2023.01 (Debian's glmark2-data), each with the
# scene's default options, as its scene-*.cpp fills them in: per stage, the
# `$NAME$` placeholders replaced (a function of the shaders directory, read at run
# time) and the constants `add_const` adds, in call order. Values are the scenes'.
GLMARK2 = {
    # shading, shading=gouraud
    "light-basic": {"vert": ([], [("LightSourcePosition", vec(*LIGHT)),
                                  ("MaterialDiffuse", vec(0.0, 0.0, 1.0, 1.0))])},
    # shading=blinn-phong-inf
    "light-advanced": {"frag": ([], [("LightSourcePosition", vec(*LIGHT)),
                                     ("LightSourceHalfVector", vec(*HALF))])},
    # shading=phong, num-lights=1: light 0 at angle 0
    "light-phong": {"frag": ([("$DO_LIGHTS$", lambda: "    gl_FragColor += compute_color("
                               "LightSourcePosition0, LightColor0);\n")],
                             [("LightSourcePosition0", vec(0.0, 1.0, 0.0, 1.0)),
                              ("LightColor0", vec(0.8, 0.8, 0.8, 1.0)),
                              ("MaterialDiffuse", vec(0.0, 0.0, 1.0, 1.0))])},
    # bump, bump-render=off / normals / normals-tangent / height
    "bump-poly": {"frag": ([], [("LightSourcePosition", vec(*LIGHT)),
                                ("LightSourceHalfVector", vec(*HALF))])},
    "bump-normals": {"frag": ([], [("LightSourcePosition", vec(*LIGHT)),
                                   ("LightSourceHalfVector", vec(*HALF))])},
    "bump-normals-tangent": {"frag": ([], [("LightSourcePosition", vec(*LIGHT)),
                                           ("LightSourceHalfVector", vec(*HALF))])},
    "bump-height": {"frag": ([], [("LightSourcePosition", vec(*LIGHT)),
                                  ("LightSourceHalfVector", vec(*HALF)),
                                  ("TextureStepX", vec(1.0 / 1024.0)),
                                  ("TextureStepY", vec(1.0 / 1024.0))])},
    # refract, index=1.2
    "light-refract": {"frag": ([], [("LightColor", vec(0.4, 0.4, 0.4, 1.0)),
                                    ("LightSourcePosition", vec(1.0, 1.0, 2.0, 1.0)),
                                    ("RefractiveIndex", vec(1.2))])},
    # shadow's ground
    "shadow": {"vert": ([], [("MaterialDiffuse", vec(0.3, 0.3, 0.3, 1.0))])},
    # terrain: only the precision macros
    "terrain": {},
    # conditionals / function / loop, one step in each stage
    "conditionals": {s: ([("$MAIN$", lambda: step_file("conditionals-step-conditional.all"))], [])
                     for s in ("vert", "frag")},
    "function": {s: ([("$PROCESS$", lambda: step_file("function-step-low.all")),
                      ("$MAIN$", lambda: step_file("function-call.all"))], [])
                 for s in ("vert", "frag")},
    "loop": {"vert": ([("$MAIN$", lambda: step_file("loop-step-loop.all").replace(
                         "$NLOOPS$", "VertexLoops"))], []),
             "frag": ([("$MAIN$", lambda: step_file("loop-step-loop.all").replace(
                         "$NLOOPS$", "FragmentLoops"))], [])},
}

# glmark2 prepends macros for precision qualifiers that exist in GLSL ES only; on
# desktop GL (no GL_ES) they expand to nothing.
GLMARK2_PREAMBLE = "#define HIGHP_OR_DEFAULT\n#define MEDIUMP_OR_DEFAULT\n"


def glmark2_instance(path, out_dir):
    """The instantiated copy of a glmark2 template stage under `out_dir`, or `path`
    itself when it is no template."""
    stem, ext = os.path.splitext(os.path.basename(path))
    if os.path.dirname(path) != GLMARK2_SHADERS or stem not in GLMARK2:
        return path
    replaces, consts = GLMARK2[stem].get(ext[1:], ([], []))
    with open(path) as f:
        text = f.read()
    for placeholder, fill in replaces:
        text = text.replace(placeholder, fill())
    # add_const inserts each definition at the top (no precision statement in
    # these files), so the last added comes first.
    for name, (ty, value) in consts:
        text = f"const {ty} {name} = {value};\n" + text
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, stem + ext)
    with open(out, "w") as f:
        f.write(GLMARK2_PREAMBLE + text)
    return out


order = ["vert", "tesc", "tese", "geom", "frag"]
sections = {"vertex shader": "vert", "tessellation control shader": "tesc",
            "tessellation evaluation shader": "tese", "geometry shader": "geom",
            "fragment shader": "frag"}
groups = {}
split = sys.argv[2]
os.makedirs(split, exist_ok=True)
for n, line in enumerate(open(sys.argv[1])):
    p = line.strip()
    if p.endswith(".shader_test"):
        try:
            text = open(p, errors="replace").read()
        except OSError:
            continue
        current, found = None, {}
        for l in text.splitlines():
            if l.startswith("["):
                current = sections.get(l.strip("[] \t").lower())
                if current:
                    found[current] = []
                continue
            if current:
                found[current].append(l)
        if len(found) < 2:
            continue
        stem = os.path.join(split, f"t{n}")
        for ext, lines in found.items():
            with open(f"{stem}.{ext}", "w") as f:
                f.write("\n".join(lines) + "\n")
            groups.setdefault(stem, {})[ext] = f"{stem}.{ext}"
        continue
    stem, ext = os.path.splitext(p)
    groups.setdefault(stem, {})[ext[1:]] = glmark2_instance(p, os.path.join(split, "glmark2"))
for stem in sorted(groups):
    g = groups[stem]
    chain = [g[s] for s in order if s in g]
    for a, b in zip(chain, chain[1:]):
        print(a, b)
