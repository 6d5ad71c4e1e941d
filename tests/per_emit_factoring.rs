//! GS per-emit factoring (`src/egraph/per_emit.rs`), checked through the interpreter
//! for every pure op: a GS stores `op(x_k, z_k, …)` at each of its three emits next to
//! the operands, and the FS computes the same op from the operand varyings. Backward
//! motion makes the FS's op an expression of per-emit values in the GS; only the
//! factored form of the stored output shows the two equal, so one varying serves both
//! uses. Each optimized pair must be interpreter-equivalent to its input.

use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::{optimize, Options};

#[derive(Clone, Copy, PartialEq)]
enum Bits {
    B1,
    B16,
    B32,
}

/// (op, operand sizes, result size) of every pure op.
const OPS: &[(&str, &[Bits], Bits)] = {
    use Bits::*;
    &[
        ("mov", &[B32], B32),
        ("fneg", &[B32], B32),
        ("fabs", &[B32], B32),
        ("fsat", &[B32], B32),
        ("frcp", &[B32], B32),
        ("frsq", &[B32], B32),
        ("fsqrt", &[B32], B32),
        ("fexp2", &[B32], B32),
        ("flog2", &[B32], B32),
        ("fsin", &[B32], B32),
        ("fcos", &[B32], B32),
        ("ffloor", &[B32], B32),
        ("fceil", &[B32], B32),
        ("ffract", &[B32], B32),
        ("fsign", &[B32], B32),
        ("ineg", &[B32], B32),
        ("iabs", &[B32], B32),
        ("inot", &[B32], B32),
        ("f2f16", &[B32], B16),
        ("f2f32", &[B16], B32),
        ("f2i32", &[B32], B32),
        ("f2u32", &[B32], B32),
        ("i2f32", &[B32], B32),
        ("u2f32", &[B32], B32),
        ("i2f16", &[B32], B16),
        ("i2i32", &[B16], B32),
        ("u2u32", &[B16], B32),
        ("i2i16", &[B32], B16),
        ("b2f32", &[B1], B32),
        ("b2f16", &[B1], B16),
        ("b2i32", &[B1], B32),
        ("fadd", &[B32, B32], B32),
        ("fsub", &[B32, B32], B32),
        ("fmul", &[B32, B32], B32),
        ("fdiv", &[B32, B32], B32),
        ("fmin", &[B32, B32], B32),
        ("fmax", &[B32, B32], B32),
        ("fpow", &[B32, B32], B32),
        ("iadd", &[B32, B32], B32),
        ("isub", &[B32, B32], B32),
        ("imul", &[B32, B32], B32),
        ("idiv", &[B32, B32], B32),
        ("udiv", &[B32, B32], B32),
        ("irem", &[B32, B32], B32),
        ("umod", &[B32, B32], B32),
        ("imin", &[B32, B32], B32),
        ("imax", &[B32, B32], B32),
        ("umin", &[B32, B32], B32),
        ("umax", &[B32, B32], B32),
        ("ishl", &[B32, B32], B32),
        ("ishr", &[B32, B32], B32),
        ("ushr", &[B32, B32], B32),
        ("iand", &[B32, B32], B32),
        ("ior", &[B32, B32], B32),
        ("ixor", &[B32, B32], B32),
        ("flt", &[B32, B32], B1),
        ("fge", &[B32, B32], B1),
        ("feq", &[B32, B32], B1),
        ("fneu", &[B32, B32], B1),
        ("ilt", &[B32, B32], B1),
        ("ige", &[B32, B32], B1),
        ("ieq", &[B32, B32], B1),
        ("ine", &[B32, B32], B1),
        ("ult", &[B32, B32], B1),
        ("uge", &[B32, B32], B1),
        ("ffma", &[B32, B32, B32], B32),
        ("flrp", &[B32, B32, B32], B32),
        ("bcsel", &[B1, B32, B32], B32),
    ]
};

const COMPONENTS: [&str; 3] = ["x", "y", "z"];

fn slot(base: &str, bits: Bits) -> String {
    if bits == Bits::B16 {
        format!("{base}.lo")
    } else {
        base.to_string()
    }
}

/// The pair for `op`, and whether the FS can compute the op itself (its operands cross
/// as varyings and a motion law applies): then the law leaves one varying.
fn pair(op: &str, srcs: &[Bits], result: Bits) -> (String, bool) {
    // A 1-bit result is consumed by a select over the compared values (a varying is
    // never 1-bit); 1-bit operands are comparisons computed in each stage.
    let compare = result == Bits::B1;
    let bool_operand = srcs.contains(&Bits::B1);
    let stored_bits = if compare { Bits::B32 } else { result };
    let mut gs = String::new();
    let mut fs = String::new();
    for k in 0..3 {
        gs += &format!("    (%k{k} = const 32 {k})\n");
        for c in COMPONENTS {
            gs += &format!("    (%{c}{k} = load_per_vertex_input VAR0.{c} %k{k})\n");
        }
    }
    for k in 0..3 {
        let mut operands = vec![];
        for (i, b) in srcs.iter().enumerate() {
            let c = COMPONENTS[i];
            let name = format!("%o{i}_{k}");
            match b {
                Bits::B32 => gs += &format!("    ({name} = mov %{c}{k})\n"),
                Bits::B16 => gs += &format!("    ({name} = f2f16 %{c}{k})\n"),
                Bits::B1 => gs += &format!("    ({name} = flt %x{k} %y{k})\n"),
            }
            operands.push(name);
        }
        let value = format!("%r{k}");
        gs += &format!("    ({value} = {op} {})\n", operands.join(" "));
        let stored = if compare {
            gs += &format!("    (%s{k} = bcsel {value} %x{k} %y{k})\n");
            format!("%s{k}")
        } else {
            value
        };
        gs += &format!(
            "    (store_output {} {stored})\n",
            slot("VAR1.x", stored_bits)
        );
        for (i, b) in srcs.iter().enumerate() {
            if *b != Bits::B1 {
                let c = COMPONENTS[i];
                gs += &format!(
                    "    (store_output {} %o{i}_{k})\n",
                    slot(&format!("VAR2.{c}"), *b)
                );
            }
        }
        if bool_operand || compare {
            gs += &format!("    (store_output VAR3.x %x{k})\n    (store_output VAR3.y %y{k})\n");
        }
        gs += "    (emit_vertex)\n";
    }
    // The FS: the stored result, and the op recomputed from the operand varyings.
    fs += &format!("    (%y = load_input {})\n", slot("VAR1.x", stored_bits));
    let mut operands = vec![];
    if bool_operand || compare {
        fs += "    (%px = load_input VAR3.x)\n    (%py = load_input VAR3.y)\n";
    }
    for (i, b) in srcs.iter().enumerate() {
        let c = COMPONENTS[i];
        match b {
            Bits::B1 => fs += &format!("    (%a{i} = flt %px %py)\n"),
            _ => {
                fs += &format!(
                    "    (%a{i} = load_input {})\n",
                    slot(&format!("VAR2.{c}"), *b)
                )
            }
        }
        operands.push(format!("%a{i}"));
    }
    fs += &format!("    (%r = {op} {})\n", operands.join(" "));
    let recomputed = if compare {
        fs += "    (%s = bcsel %r %px %py)\n";
        "%s"
    } else {
        "%r"
    };
    fs += &format!(
        "    (store_output {} {recomputed})\n    (store_output {} %y)\n",
        slot("DATA0.x", stored_bits),
        slot("DATA1.x", stored_bits)
    );
    let text = format!(
        "(pair\n  (producer gs\n    (input triangles)\n    (output triangle_strip)\n    \
         (max_vertices 3)\n    (invocations 1)\n{gs}    (end_primitive))\n  (consumer fs\n    \
         (provoking first)\n{fs}))\n"
    );
    // Comparisons of two flat inputs have no motion law of their own (they cross only
    // inside the select that consumes them), so a 1-bit operand stays in the FS.
    (text, !bool_operand)
}

#[test]
fn every_op_factors_soundly_and_one_varying_serves_both_uses() {
    for (op, srcs, result) in OPS {
        let (text, deduplicates) = pair(op, srcs, *result);
        let p = varysat::text::parse(&text, Some(&format!("{op}.pair")))
            .unwrap_or_else(|e| panic!("{op}: {e}\n{text}"));
        let out = optimize(&p, &Options::new()).unwrap_or_else(|e| panic!("{op}: {e}"));
        if let Err(e) = check_equivalent(&p, &out.pipeline, &EquivConfig::default()) {
            panic!("{op}: not equivalent: {e}\n{text}");
        }
        if deduplicates {
            assert_eq!(
                out.report.after.components, 1,
                "{op}: the recomputed op should share the stored varying\n{text}\n{}",
                out.report
            );
        }
    }
}

#[test]
fn a_wrong_law_over_per_emit_values_is_caught() {
    // Swapping the operands of a non-commutative op over per-emit values is unsound.
    // (The pair's operands are `mov`s of per-emit inputs.)
    let bad = "(rule bad-per-emit-fsub \
               (fsub (mov (per-emit ?k ?a ?b)) (mov (per-emit ?k ?c ?d))) \
               (fsub (mov (per-emit ?k ?c ?d)) (mov (per-emit ?k ?a ?b))))";
    let opts = Options::new()
        .extra_rules("bad.rules", bad)
        .expect("the bad rule parses");
    // The FS computes y - x, the GS stores x - y at every emit: different values,
    // which only the wrong law makes one varying.
    let (text, _) = pair("fsub", &[Bits::B32, Bits::B32], Bits::B32);
    let swapped = "(%r = fsub %a1 %a0)";
    let text = text.replace("(%r = fsub %a0 %a1)", swapped);
    assert!(text.contains(swapped));
    let p = varysat::text::parse(&text, Some("fsub.pair")).expect("parses");
    let sound = optimize(&p, &Options::new()).expect("optimizes");
    assert!(check_equivalent(&p, &sound.pipeline, &EquivConfig::default()).is_ok());
    let out = optimize(&p, &opts).expect("optimizes");
    assert_eq!(out.report.after.components, 1, "{}", out.report);
    assert!(
        check_equivalent(&p, &out.pipeline, &EquivConfig::default()).is_err(),
        "the swapped law went unnoticed:\n{}",
        varysat::text::print(&out.pipeline)
    );
}
