//! Test cases for the code-motion rules (flat.rules, interp.rules, tess.rules), used
//! by `tests/rules.rs`: each rule, run alone, joins its case and leaves its non-case
//! apart. The operator lists are written out here, independently of the rule files,
//! so a rule file that drops an operator or adds one without a case fails the test.

const UNARY: &[&str] = &[
    "mov", "fneg", "fabs", "fsat", "frcp", "frsq", "fsqrt", "fexp2", "flog2", "fsin", "fcos",
    "ffloor", "fceil", "ffract", "fsign", "ineg", "iabs", "inot", "f2f16", "f2f32", "f2i32",
    "f2u32", "i2f32", "u2f32", "i2f16", "i2i32", "u2u32", "i2i16",
];
const BINARY: &[&str] = &[
    "fadd", "fsub", "fmul", "fdiv", "fmin", "fmax", "fpow", "iadd", "isub", "imul", "idiv", "udiv",
    "irem", "umod", "imin", "imax", "umin", "umax", "ishl", "ishr", "ushr", "iand", "ior", "ixor",
];
const COMPARE: &[&str] = &[
    "flt", "fge", "feq", "fneu", "ilt", "ige", "ieq", "ine", "ult", "uge",
];

const A: &str = "in:ATTR0.x";
const B: &str = "in:ATTR1.x";
const C: &str = "in:ATTR2.x";
const U: &str = "uniform:0";
const V: &str = "uniform:1";

fn x(mode: &str, v: &str) -> String {
    format!("(xfer {mode} {v})")
}

/// Operand lists for each placement of transferred (`x`) and free (`f`) operands.
fn placed(mode: &str, shape: &str) -> (Vec<String>, Vec<String>) {
    let (mut consumer, mut producer) = (vec![], vec![]);
    let (mut xs, mut fs) = ([A, B, C].into_iter(), [U, V].into_iter());
    for c in shape.chars() {
        let (cv, pv) = match c {
            'x' => {
                let v = xs.next().unwrap_or(A);
                (x(mode, v), v.to_string())
            }
            _ => {
                let v = fs.next().unwrap_or(U);
                (v.to_string(), v.to_string())
            }
        };
        consumer.push(cv);
        producer.push(pv);
    }
    (consumer, producer)
}

fn case(name: String, mode: &str, op: &str, shape: &str) -> (String, String, String) {
    let (c, p) = placed(mode, shape);
    let lhs = format!("({op} {})", c.join(" "));
    let rhs = x(mode, &format!("({op} {})", p.join(" ")));
    (name, lhs, rhs)
}

fn flat_cases() -> Vec<(String, String, String)> {
    let mut out = vec![];
    // Each law is checked with a different uninterpolated mode, round robin.
    let modes = ["flat", "(vertex 1i32)", "patch"];
    let mut mode = modes.iter().cycle();
    for op in UNARY {
        out.push(case(
            format!("flat-{op}"),
            mode.next().unwrap_or(&"flat"),
            op,
            "x",
        ));
    }
    for op in BINARY {
        for (suffix, shape) in [("", "xx"), ("-uf", "xf"), ("-fu", "fx")] {
            let m = mode.next().unwrap_or(&"flat");
            out.push(case(format!("flat-{op}{suffix}"), m, op, shape));
        }
    }
    for op in ["ffma", "flrp"] {
        for (suffix, shape) in [
            ("", "xxx"),
            ("-xxf", "xxf"),
            ("-xfx", "xfx"),
            ("-fxx", "fxx"),
            ("-xff", "xff"),
            ("-fxf", "fxf"),
            ("-ffx", "ffx"),
        ] {
            let m = mode.next().unwrap_or(&"flat");
            out.push(case(format!("flat-{op}{suffix}"), m, op, shape));
        }
    }
    let sel = |cond: &str, a: &str, b: &str| format!("(bcsel {cond} {a} {b})");
    let xa = x("flat", A);
    let xb = x("flat", B);
    out.push((
        "flat-bcsel".into(),
        sel(U, &xa, &xb),
        x("flat", &sel(U, A, B)),
    ));
    for op in COMPARE {
        for widen in ["b2f32", "b2i32"] {
            for (suffix, shape) in [("", "xx"), ("-xf", "xf"), ("-fx", "fx")] {
                let m = mode.next().unwrap_or(&"flat");
                let (_, lhs, rhs) = case(String::new(), m, op, shape);
                let rhs = rhs.trim_start_matches(&format!("(xfer {m} "));
                let inner = &rhs[..rhs.len() - 1];
                out.push((
                    format!("flat-{widen}-{op}{suffix}"),
                    format!("({widen} {lhs})"),
                    x(m, &format!("({widen} {inner})")),
                ));
            }
        }
    }
    for op in COMPARE {
        let m = "(vertex 2i32)";
        let cond = format!("({op} {} {})", x(m, C), x(m, A));
        out.push((
            format!("flat-bcsel-{op}"),
            sel(&cond, &x(m, A), &x(m, B)),
            x(m, &sel(&format!("({op} {C} {A})"), A, B)),
        ));
    }
    // Selects with a constant value, round robin over the uninterpolated modes.
    const K: &str = "0.5f32";
    let xk = |m: &str| (x(m, A), A.to_string());
    let cond_cmp = "(ine uniform:0 0i32)";
    for (suffix, then_else) in [("xk", true), ("kx", false)] {
        let m = mode.next().unwrap_or(&"flat");
        let (xa, pa) = xk(m);
        let (c_then, c_else, p_then, p_else) = if then_else {
            (xa.clone(), K.to_string(), pa.clone(), K.to_string())
        } else {
            (K.to_string(), xa.clone(), K.to_string(), pa.clone())
        };
        out.push((
            format!("flat-bcsel-{suffix}"),
            sel(cond_cmp, &c_then, &c_else),
            x(m, &sel(cond_cmp, &p_then, &p_else)),
        ));
        for op in COMPARE {
            for (cshape, cons_cond, prod_cond) in [
                (
                    "",
                    format!("({op} {} {})", x(m, C), x(m, B)),
                    format!("({op} {C} {B})"),
                ),
                (
                    "xf-",
                    format!("({op} {} {U})", x(m, C)),
                    format!("({op} {C} {U})"),
                ),
                (
                    "fx-",
                    format!("({op} {U} {})", x(m, C)),
                    format!("({op} {U} {C})"),
                ),
            ] {
                out.push((
                    format!("flat-bcsel-{op}-{cshape}{suffix}"),
                    sel(&cons_cond, &c_then, &c_else),
                    x(m, &sel(&prod_cond, &p_then, &p_else)),
                ));
            }
        }
    }
    out
}

fn interp_cases() -> Vec<(String, String, String)> {
    let p = "persp.center";
    let l = "linear.sample";
    let flat_inst = x("flat", "psv:instance_id");
    let mut out = vec![
        case("interp-fadd".into(), p, "fadd", "xx"),
        case("interp-fsub".into(), l, "fsub", "xx"),
        case("interp-fneg".into(), p, "fneg", "x"),
        case("interp-fadd-uf".into(), l, "fadd", "xf"),
        case("interp-fsub-uf".into(), p, "fsub", "xf"),
        case("interp-fsub-fu".into(), p, "fsub", "fx"),
        case("interp-fmul-uf".into(), p, "fmul", "xf"),
        case("interp-fmul-fu".into(), l, "fmul", "fx"),
        case("interp-fdiv".into(), p, "fdiv", "xf"),
        case("interp-ffma-xfx".into(), p, "ffma", "xfx"),
        case("interp-ffma-fxx".into(), l, "ffma", "fxx"),
        case("interp-ffma-xff".into(), p, "ffma", "xff"),
        case("interp-ffma-fxf".into(), p, "ffma", "fxf"),
        case("interp-flrp".into(), p, "flrp", "xxf"),
    ];
    out.push((
        "interp-bcsel".into(),
        format!("(bcsel {U} {} {})", x(p, A), x(p, B)),
        x(p, &format!("(bcsel {U} {A} {B})")),
    ));
    out.push((
        "interp-bcsel-xk".into(),
        format!("(bcsel (flt {U} {V}) {} 0f32)", x(p, A)),
        x(p, &format!("(bcsel (flt {U} {V}) {A} 0f32)")),
    ));
    out.push((
        "interp-bcsel-kx".into(),
        format!("(bcsel (flt {U} {V}) -1f32 {})", x(l, A)),
        x(l, &format!("(bcsel (flt {U} {V}) -1f32 {A})")),
    ));
    out.push((
        "interp-fmul-uc".into(),
        format!("(fmul {} {flat_inst})", x(p, A)),
        x(p, &format!("(fmul {A} psv:instance_id)")),
    ));
    out.push((
        "interp-fmul-cu".into(),
        format!("(fmul {flat_inst} {})", x(p, A)),
        x(p, &format!("(fmul psv:instance_id {A})")),
    ));
    out.push((
        "promote-convergent".into(),
        x(p, "(i2f32 psv:instance_id)"),
        x("flat", "(i2f32 psv:instance_id)"),
    ));
    out
}

/// The coordinate weighting vertex 0, 1 and 2 in each open-coded interpolation form:
/// `v0*u + v1*v + v2*w`, and the rotated `v0*w + v1*u + v2*v`.
const UVW: [&str; 3] = ["x", "y", "z"];
const WUV: [&str; 3] = ["z", "x", "y"];

/// The term `vk * coord` of vertex `k` over `a`.
fn tess_term(a: &str, k: usize, pairing: [&str; 3]) -> String {
    format!(
        "(fmul (xfer (vertex {k}i32) {a}) csv:tess_coord_{})",
        pairing[k]
    )
}

/// The open-coded interpolation of `a` in `pairing`, in its canonical bracketing.
fn tess_in(a: &str, pairing: [&str; 3]) -> String {
    let t = |k| tess_term(a, k, pairing);
    format!("(fadd (fadd {} {}) {})", t(0), t(1), t(2))
}

/// `v0*u + v1*v + v2*w` over `a`, in the canonical bracketing.
fn tess(a: &str) -> String {
    tess_in(a, UVW)
}

/// `v0*w + v1*u + v2*v` over `a`, in its canonical bracketing.
fn tess_rot(a: &str) -> String {
    tess_in(a, WUV)
}

/// The cases of one pairing's rules: `order` (terms 2, 0, 1), `right` (right-nested)
/// and the four linearity laws named `{prefix}-fadd` etc.
fn tess_family(
    order: &str,
    right: &str,
    prefix: &str,
    pairing: [&str; 3],
) -> Vec<(String, String, String)> {
    let s = |a: &str| tess_in(a, pairing);
    let t = |k| tess_term(A, k, pairing);
    vec![
        (
            order.into(),
            format!("(fadd (fadd {} {}) {})", t(2), t(0), t(1)),
            s(A),
        ),
        (
            right.into(),
            format!("(fadd {} (fadd {} {}))", t(0), t(1), t(2)),
            s(A),
        ),
        (
            format!("{prefix}-fadd"),
            format!("(fadd {} {})", s(A), s(B)),
            s(&format!("(fadd {A} {B})")),
        ),
        (
            format!("{prefix}-fsub"),
            format!("(fsub {} {})", s(A), s(B)),
            s(&format!("(fsub {A} {B})")),
        ),
        (
            format!("{prefix}-fneg"),
            format!("(fneg {})", s(A)),
            s(&format!("(fneg {A})")),
        ),
        (
            format!("{prefix}-fmul"),
            format!("(fmul {} {U})", s(A)),
            s(&format!("(fmul {A} {U})")),
        ),
    ]
}

fn tess_cases() -> Vec<(String, String, String)> {
    let mut out = tess_family("tes-interp-wuv", "tes-interp-right", "tes-interp", UVW);
    out.extend(tess_family(
        "tes-interp-rot-order",
        "tes-interp-rot-right",
        "tes-interp-rot",
        WUV,
    ));
    // A factor the same in every producer invocation: a patch input of a control
    // point read at a fixed index, or a per-vertex input of a uniform expression's
    // producer-convergent value (vertex 1 of `instance_id * 1.0`).
    let patch_q = x("patch", "vin:0:VAR1.x");
    out.push((
        "tes-interp-fmul-uc".into(),
        format!("(fmul {} {patch_q})", tess(A)),
        tess(&format!("(fmul {A} vin:0:VAR1.x)")),
    ));
    let conv = "(i2f32 psv:instance_id)";
    out.push((
        "tes-interp-rot-fmul-uc".into(),
        format!("(fmul {} {})", tess_rot(A), x("(vertex 1i32)", conv)),
        tess_rot(&format!("(fmul {A} {conv})")),
    ));
    out
}

/// Every motion rule's positive case.
pub fn cases() -> Vec<(String, String, String)> {
    let mut out = flat_cases();
    out.extend(interp_cases());
    out.extend(tess_cases());
    out
}

/// Pairs the named motion rule alone must NOT make equal.
pub fn non_cases() -> Vec<(String, String, String)> {
    let p = "persp.center";
    let pairs: Vec<(&str, String, String)> = vec![
        // A product of two interpolated values is not linear.
        (
            "interp-fmul-uf",
            format!("(fmul {} {})", x(p, A), x(p, B)),
            x(p, &format!("(fmul {A} {B})")),
        ),
        // Different interpolation modes never combine.
        (
            "interp-fadd",
            format!("(fadd {} {})", x(p, A), x("linear.center", B)),
            x(p, &format!("(fadd {A} {B})")),
        ),
        // Interpolation laws are inexact: an exact op blocks them.
        (
            "interp-fadd",
            format!("(fadd.exact {} {})", x(p, A), x(p, B)),
            x(p, &format!("(fadd.exact {A} {B})")),
        ),
        // fabs does not commute with interpolation...
        (
            "flat-fabs",
            format!("(fabs {})", x(p, A)),
            x(p, &format!("(fabs {A})")),
        ),
        // ...but flat laws are exact and hold for exact ops.
        // Per-vertex transfers of different vertices never combine.
        (
            "flat-fadd",
            format!("(fadd {} {})", x("(vertex 0i32)", A), x("(vertex 1i32)", B)),
            x("(vertex 0i32)", &format!("(fadd {A} {B})")),
        ),
        // Promotion needs a producer-convergent value.
        ("promote-convergent", x(p, A), x("flat", A)),
        // A flat factor must be producer-convergent.
        (
            "interp-fmul-uc",
            format!("(fmul {} {})", x(p, A), x("flat", B)),
            x(p, &format!("(fmul {A} {B})")),
        ),
        // A select on a constant condition is its taken branch already: no motion.
        (
            "flat-bcsel",
            format!("(bcsel true {} {})", x("flat", A), x("flat", B)),
            x("flat", &format!("(bcsel true {A} {B})")),
        ),
        // Nor through a comparison whose first operand is free.
        (
            "flat-bcsel-ilt",
            format!(
                "(bcsel (ilt {} {}) {} {})",
                x("flat", U),
                x("flat", C),
                x("flat", A),
                x("flat", B)
            ),
            x("flat", &format!("(bcsel (ilt {U} {C}) {A} {B})")),
        ),
        // A select on a condition that varies across the primitive does not commute
        // with interpolation, even with a constant value ...
        (
            "interp-bcsel-xk",
            format!("(bcsel (flt {} {U}) {} 0f32)", x(p, B), x(p, A)),
            x(p, &format!("(bcsel (flt {B} {U}) {A} 0f32)")),
        ),
        // ... nor does the flat law apply to interpolated transfers.
        (
            "flat-bcsel-flt-xf-xk",
            format!("(bcsel (flt {} {U}) {} 0f32)", x(p, B), x(p, A)),
            x(p, &format!("(bcsel (flt {B} {U}) {A} 0f32)")),
        ),
        // Only a constant mixes into a select, not any free value (growth guard).
        (
            "flat-bcsel-xk",
            format!("(bcsel (ine {U} 0i32) {} {V})", x("flat", A)),
            x("flat", &format!("(bcsel (ine {U} 0i32) {A} {V})")),
        ),
        // Nor on a constant condition.
        (
            "flat-bcsel-xk",
            format!("(bcsel true {} 0f32)", x("flat", A)),
            x("flat", &format!("(bcsel true {A} 0f32)")),
        ),
        // Per-vertex transfers of different vertices in the condition and value.
        (
            "flat-bcsel-flt-xk",
            format!(
                "(bcsel (flt {} {}) {} 0f32)",
                x("(vertex 0i32)", C),
                x("(vertex 0i32)", B),
                x("(vertex 1i32)", A)
            ),
            x("(vertex 1i32)", &format!("(bcsel (flt {C} {B}) {A} 0f32)")),
        ),
        // Motion does not split a free value kept transferred by the limit.
        (
            "flat-fpow-uf",
            x("flat", &format!("(fpow (fpow {U} {V}) {V})")),
            format!("(fpow {} {V})", x("flat", &format!("(fpow {U} {V})"))),
        ),
        // A factor that differs between the producer's invocations never moves into
        // the open-coded interpolation.
        (
            "tes-interp-fmul-uc",
            format!("(fmul {} {})", tess(A), x("(vertex 0i32)", B)),
            tess(&format!("(fmul {A} {B})")),
        ),
        // The two pairings of vertices with coordinates never mix.
        (
            "tes-interp-rot-fadd",
            format!("(fadd {} {})", tess_rot(A), tess(B)),
            tess_rot(&format!("(fadd {A} {B})")),
        ),
        // Open-coded interpolation needs the matching tessellation coordinates.
        (
            "tes-interp-fadd",
            format!(
                "(fadd {} {})",
                tess(A),
                tess(B).replace("tess_coord_z", "tess_coord_x")
            ),
            tess(&format!("(fadd {A} {B})")),
        ),
    ];
    pairs
        .into_iter()
        .map(|(n, a, b)| (n.to_string(), a, b))
        .collect()
}

/// The exact instantiation of a flat law applies to exact ops; per-emit GS values move
/// like any other.
pub fn exact_cases() -> Vec<(String, String, String)> {
    let per_emit = format!("(per-emit 0i32 {A} {B})");
    vec![
        (
            "flat-fadd".into(),
            format!("(fadd.exact {} {})", x("flat", A), x("flat", B)),
            x("flat", &format!("(fadd.exact {A} {B})")),
        ),
        (
            "flat-fmul-uf".into(),
            format!("(fmul {} {U})", x("flat", &per_emit)),
            x("flat", &format!("(fmul {per_emit} {U})")),
        ),
        (
            "interp-fadd".into(),
            format!(
                "(fadd {} {})",
                x("persp.center", &per_emit),
                x("persp.center", C)
            ),
            x("persp.center", &format!("(fadd {per_emit} {C})")),
        ),
    ]
}
