//! Every rule of the default set is exercised: run alone, it makes its two sides one
//! e-class (and the sides start apart). An unsound rule is caught by the interpreter's
//! equivalence check.

use egg::{RecExpr, Runner};
use varysat::internals::egraph::{RuleSet, VAnalysis, VGraph, VNode};
use varysat::interpreter::{check_equivalent, EquivConfig, Inequivalence};
use varysat::{optimize, Options};

#[path = "motion_support/cases.rs"]
mod motion_cases;

/// (rule, left expression, right expression they must become equal to).
const CASES: &[(&str, &str, &str)] = &[
    (
        "propagate-free",
        "(xfer persp.center uniform:0)",
        "uniform:0",
    ),
    (
        "propagate-free",
        "(xfer flat (fmul uniform:0 uniform:1))",
        "(fmul uniform:0 uniform:1)",
    ),
    ("fadd-negzero", "(fadd in:ATTR0.x -0f32)", "in:ATTR0.x"),
    (
        "fadd-negzero",
        "(fadd.exact in:ATTR0.x -0f32)",
        "in:ATTR0.x",
    ),
    ("fadd-zero", "(fadd in:ATTR0.x 0f32)", "in:ATTR0.x"),
    (
        "fadd-zero16",
        "(fadd (f2f16 in:ATTR0.x) 0f16)",
        "(f2f16 in:ATTR0.x)",
    ),
    ("fmul-one", "(fmul in:ATTR0.x 1f32)", "in:ATTR0.x"),
    (
        "fmul-one16",
        "(fmul (f2f16 in:ATTR0.x) 1f16)",
        "(f2f16 in:ATTR0.x)",
    ),
    ("fneg-fneg", "(fneg (fneg in:ATTR0.x))", "in:ATTR0.x"),
    (
        "fsub-to-fadd",
        "(fsub in:ATTR0.x in:ATTR1.x)",
        "(fadd in:ATTR0.x (fneg in:ATTR1.x))",
    ),
    (
        "ffma-unfuse",
        "(ffma in:ATTR0.x in:ATTR1.x in:ATTR2.x)",
        "(fadd (fmul in:ATTR0.x in:ATTR1.x) in:ATTR2.x)",
    ),
    (
        "fmix-same",
        "(fadd (fmul in:ATTR0.x in:ATTR1.x) (fmul in:ATTR0.x (fsub 1f32 in:ATTR1.x)))",
        "in:ATTR0.x",
    ),
    (
        "flrp-same",
        "(flrp in:ATTR0.x in:ATTR0.x in:ATTR1.x)",
        "in:ATTR0.x",
    ),
    (
        "xfer-bcsel-complement",
        "(xfer flat (bcsel (flt in:ATTR0.x in:ATTR1.x) 0f32 1f32))",
        "(fadd 1f32 (fneg (xfer flat (bcsel (flt in:ATTR0.x in:ATTR1.x) 1f32 0f32))))",
    ),
    (
        "xfer-bcsel-complement",
        "(xfer flat (bcsel (flt uniform:0 uniform:1) 0f32 1f32))",
        "(fadd 1f32 (fneg (xfer flat (bcsel (flt uniform:0 uniform:1) 1f32 0f32))))",
    ),
    (
        "xfer-bcsel-complement-interp",
        "(xfer persp.center (bcsel (flt in:ATTR0.x in:ATTR1.x) 0f32 1f32))",
        "(fadd 1f32 (fneg (xfer persp.center (bcsel (flt in:ATTR0.x in:ATTR1.x) 1f32 0f32))))",
    ),
    ("iadd-zero", "(iadd in:ATTR0.x 0i32)", "in:ATTR0.x"),
    ("imul-one", "(imul in:ATTR0.x 1i32)", "in:ATTR0.x"),
    ("ior-zero", "(ior in:ATTR0.x 0i32)", "in:ATTR0.x"),
    ("ixor-zero", "(ixor in:ATTR0.x 0i32)", "in:ATTR0.x"),
    (
        "isub-to-iadd",
        "(isub in:ATTR0.x in:ATTR1.x)",
        "(iadd in:ATTR0.x (ineg in:ATTR1.x))",
    ),
    (
        "fmul-two",
        "(fmul in:ATTR0.x 2f32)",
        "(fadd in:ATTR0.x in:ATTR0.x)",
    ),
    (
        "fmul-two16",
        "(fmul (f2f16 in:ATTR0.x) 2f16)",
        "(fadd (f2f16 in:ATTR0.x) (f2f16 in:ATTR0.x))",
    ),
    (
        "imul-two",
        "(imul in:ATTR0.x 2i32)",
        "(iadd in:ATTR0.x in:ATTR0.x)",
    ),
    (
        "iadd-assoc",
        "(iadd (iadd in:ATTR0.x uniform:0) uniform:1)",
        "(iadd in:ATTR0.x (iadd uniform:0 uniform:1))",
    ),
    // Commutative matching finds the grouping in either operand order.
    (
        "iadd-assoc",
        "(iadd (iadd in:ATTR0.x uniform:0) uniform:1)",
        "(iadd (iadd in:ATTR0.x uniform:1) uniform:0)",
    ),
    // Received values group like free ones.
    (
        "iadd-assoc",
        "(iadd (iadd in:ATTR0.x (xfer flat in:ATTR1.x)) (xfer flat in:ATTR2.x))",
        "(iadd in:ATTR0.x (iadd (xfer flat in:ATTR1.x) (xfer flat in:ATTR2.x)))",
    ),
    (
        "imul-assoc",
        "(imul (imul in:ATTR0.x uniform:0) uniform:1)",
        "(imul in:ATTR0.x (imul uniform:0 uniform:1))",
    ),
    (
        "iand-assoc",
        "(iand (iand in:ATTR0.x uniform:0) uniform:1)",
        "(iand in:ATTR0.x (iand uniform:0 uniform:1))",
    ),
    (
        "ior-assoc",
        "(ior (ior in:ATTR0.x uniform:0) uniform:1)",
        "(ior in:ATTR0.x (ior uniform:0 uniform:1))",
    ),
    (
        "ixor-assoc",
        "(ixor (ixor in:ATTR0.x uniform:0) uniform:1)",
        "(ixor in:ATTR0.x (ixor uniform:0 uniform:1))",
    ),
    (
        "bcsel-same",
        "(bcsel (flt in:ATTR0.x in:ATTR1.x) in:ATTR2.x in:ATTR2.x)",
        "in:ATTR2.x",
    ),
    (
        "bcsel-true",
        "(bcsel true in:ATTR0.x in:ATTR1.x)",
        "in:ATTR0.x",
    ),
    (
        "bcsel-false",
        "(bcsel false in:ATTR0.x in:ATTR1.x)",
        "in:ATTR1.x",
    ),
    (
        "per-emit-same",
        "(per-emit 1i32 in:ATTR0.x in:ATTR0.x)",
        "in:ATTR0.x",
    ),
];

/// Pairs the named rule alone must NOT make equal (inexact laws on exact ops, the
/// propagation limit).
const NON_CASES: &[(&str, &str, &str)] = &[
    // 2a is a + a, not a + b nor 3a.
    (
        "fmul-two",
        "(fmul in:ATTR0.x 3f32)",
        "(fadd in:ATTR0.x in:ATTR0.x)",
    ),
    // Float addition does not associate (rounding): the integer law leaves it alone.
    (
        "iadd-assoc",
        "(fadd (fadd in:ATTR0.x in:ATTR1.x) in:ATTR2.x)",
        "(fadd in:ATTR0.x (fadd in:ATTR1.x in:ATTR2.x))",
    ),
    // Operands alike for motion are not regrouped (chains are canonical from
    // lowering on; the law only gathers what a transfer law can move).
    (
        "iadd-assoc",
        "(iadd (iadd in:ATTR0.x in:ATTR1.x) in:ATTR2.x)",
        "(iadd in:ATTR0.x (iadd in:ATTR1.x in:ATTR2.x))",
    ),
    (
        "iand-assoc",
        "(iand (iand uniform:0 uniform:1) uniform:2)",
        "(iand uniform:0 (iand uniform:1 uniform:2))",
    ),
    // Mixed ops do not associate.
    (
        "ior-assoc",
        "(ixor (ior in:ATTR0.x in:ATTR1.x) in:ATTR2.x)",
        "(ior in:ATTR0.x (ixor in:ATTR1.x in:ATTR2.x))",
    ),
    ("fadd-zero", "(fadd.exact in:ATTR0.x 0f32)", "in:ATTR0.x"),
    (
        "fmix-same",
        "(fadd (fmul uniform:0 in:ATTR1.x) (fmul uniform:0 (fsub 1f32 in:ATTR1.x)))",
        "uniform:0",
    ),
    (
        "fmix-same",
        "(fadd.exact (fmul.exact in:ATTR0.x in:ATTR1.x) (fmul.exact in:ATTR0.x (fsub.exact 1f32 in:ATTR1.x)))",
        "in:ATTR0.x",
    ),
    (
        "ffma-unfuse",
        "(ffma.exact in:ATTR0.x in:ATTR1.x in:ATTR2.x)",
        "(fadd.exact (fmul.exact in:ATTR0.x in:ATTR1.x) in:ATTR2.x)",
    ),
    (
        "propagate-free",
        "(xfer flat (fpow (fpow uniform:0 uniform:1) uniform:1))",
        "(fpow (fpow uniform:0 uniform:1) uniform:1)",
    ),
    ("propagate-free", "(xfer flat in:ATTR0.x)", "in:ATTR0.x"),
    (
        "per-emit-same",
        "(per-emit 0i32 in:ATTR0.x in:ATTR1.x)",
        "in:ATTR0.x",
    ),
];

fn only(rule: &str) -> RuleSet {
    let all = RuleSet::default_set();
    let kept = all
        .rules()
        .iter()
        .filter(|r| r.name == rule)
        .cloned()
        .collect();
    RuleSet::from_rules(kept).expect("a subset has unique names")
}

/// Whether `rule` alone makes `a` and `b` equal, after checking they start apart.
fn joins(rule: &str, a: &str, b: &str) -> bool {
    let rules = only(rule);
    assert_eq!(rules.rules().len(), 1, "rule {rule} is in the default set");
    let analysis = VAnalysis {
        propagation_limit: Some(12),
        producer_is_gs: false,
        visibility: Default::default(),
        ..Default::default()
    };
    let mut g = VGraph::new(analysis);
    let ea: RecExpr<VNode> = a.parse().expect("left side parses");
    let eb: RecExpr<VNode> = b.parse().expect("right side parses");
    let (ia, ib) = (g.add_expr(&ea), g.add_expr(&eb));
    g.rebuild();
    assert_ne!(g.find(ia), g.find(ib), "{a} and {b} start equal");
    let runner = Runner::default()
        .with_egraph(g)
        .with_iter_limit(8)
        .run(&rules.rewrites().expect("rewrites build"));
    runner.egraph.find(ia) == runner.egraph.find(ib)
}

#[test]
fn every_default_rule_is_exercised() {
    for (rule, a, b) in CASES {
        assert!(joins(rule, a, b), "{rule} should join {a} and {b}");
    }
    for (rule, a, b) in NON_CASES {
        assert!(!joins(rule, a, b), "{rule} must not join {a} and {b}");
    }
    let motion = motion_cases::cases();
    for (rule, a, b) in motion.iter().chain(&motion_cases::exact_cases()) {
        assert!(joins(rule, a, b), "{rule} should join {a} and {b}");
    }
    for (rule, a, b) in motion_cases::non_cases() {
        assert!(!joins(&rule, &a, &b), "{rule} must not join {a} and {b}");
    }
    for name in RuleSet::default_set().names() {
        assert!(
            CASES.iter().any(|(r, _, _)| *r == name) || motion.iter().any(|(r, _, _)| r == name),
            "default rule `{name}` has no test case"
        );
    }
}

/// Every commutative op, exact or not, in both operand orders is one node of the
/// e-graph (no commutativity rule is needed for that).
#[test]
fn commutative_twins_are_one_node() {
    for op in [
        "fadd",
        "fmul",
        "fmin",
        "fmax",
        "feq",
        "fneu",
        "iadd",
        "imul",
        "imin",
        "imax",
        "umin",
        "umax",
        "ieq",
        "ine",
        "iand",
        "ior",
        "ixor",
        "fadd.exact",
    ] {
        let mut g = VGraph::new(VAnalysis::default());
        let ab: RecExpr<VNode> = format!("({op} in:ATTR0.x in:ATTR1.x)").parse().unwrap();
        let ba: RecExpr<VNode> = format!("({op} in:ATTR1.x in:ATTR0.x)").parse().unwrap();
        let (x, y) = (g.add_expr(&ab), g.add_expr(&ba));
        g.rebuild();
        assert_eq!(g.find(x), g.find(y), "{op}");
        assert_eq!(g[x].nodes.len(), 1, "{op}: one node, not twins");
    }
    // Not commutative: both orders stay apart.
    let mut g = VGraph::new(VAnalysis::default());
    let ab: RecExpr<VNode> = "(fsub in:ATTR0.x in:ATTR1.x)".parse().unwrap();
    let ba: RecExpr<VNode> = "(fsub in:ATTR1.x in:ATTR0.x)".parse().unwrap();
    let (x, y) = (g.add_expr(&ab), g.add_expr(&ba));
    g.rebuild();
    assert_ne!(g.find(x), g.find(y));
}

/// A rule's left-hand side matches a commutative op in either operand order, also
/// nested and also when a merge reorders the operands after the node was added.
#[test]
fn rules_match_commutative_ops_in_either_order() {
    let zero = "(rule z (fadd ?x 0f32) ?x inexact)";
    assert!(joins_with(zero, "(fadd in:ATTR0.x 0f32)", "in:ATTR0.x"));
    assert!(joins_with(zero, "(fadd 0f32 in:ATTR0.x)", "in:ATTR0.x"));
    let nested = "(rule n (fmul (fadd ?x 0f32) 1f32) ?x inexact)";
    assert!(joins_with(
        nested,
        "(fmul 1f32 (fadd 0f32 in:ATTR0.x))",
        "in:ATTR0.x"
    ));
    assert!(joins_with(
        nested,
        "(fmul (fadd in:ATTR0.x 0f32) 1f32)",
        "in:ATTR0.x"
    ));
    // fsub is not commutative: its operands keep their order.
    let sub = "(rule s (fsub ?x 0f32) ?x)";
    assert!(!joins_with(sub, "(fsub 0f32 in:ATTR0.x)", "in:ATTR0.x"));
    // Many commutative nodes: every combination of operand orders still matches.
    let sum = "(rule s4 (fadd (fadd (fmul ?a 2f32) (fmul ?b 3f32)) (fadd (fmul ?c 4f32) ?d)) \
               (fsub ?a ?d) inexact)";
    assert!(joins_with(
        sum,
        "(fadd (fadd in:ATTR3.x (fmul 4f32 in:ATTR2.x)) (fadd (fmul 3f32 in:ATTR1.x) (fmul in:ATTR0.x 2f32)))",
        "(fsub in:ATTR0.x in:ATTR3.x)"
    ));
}

const PRODUCT: &str = "
(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%a = load_input ATTR1.x)
    (%b = load_input ATTR2.x)
    (store_output POS.x %p)
    (store_output VAR0.x %a)
    (store_output VAR1.x %b))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%y = load_interpolated_input VAR1.x persp center)
    (%r = fmul %x %y)
    (store_output DATA0.x %r)))";

#[test]
fn an_unsound_rule_is_caught_by_the_interpreter() {
    let p = varysat::text::parse(PRODUCT, Some("product.pair")).expect("parses");
    let sound = optimize(&p, &Options::new()).expect("optimizes");
    assert!(check_equivalent(&p, &sound.pipeline, &EquivConfig::default()).is_ok());
    assert_eq!(sound.report.after.components, 2);

    // Interpolation does not commute with a product of two interpolated values.
    let bad = "(rule bad (fmul (xfer persp.center ?a) (xfer persp.center ?b)) \
               (xfer persp.center (fmul ?a ?b)))";
    let opts = Options::new()
        .extra_rules("bad.rules", bad)
        .expect("rule parses");
    let unsound = optimize(&p, &opts).expect("optimizes");
    // The law saves a varying, so extraction takes it ...
    assert_eq!(unsound.report.after.components, 1);
    // ... and the reference interpreter sees the difference.
    match check_equivalent(&p, &unsound.pipeline, &EquivConfig::default()) {
        Err(Inequivalence::Mismatch(_)) => {}
        other => panic!("the unsound rule went unnoticed: {other:?}"),
    }
}

/// Whether the rules in `text` join `a` and `b` (with the given propagation limit).
fn joins_with(text: &str, a: &str, b: &str) -> bool {
    let rules = RuleSet::parse("cond.rules", text).expect("rules parse");
    let mut g = VGraph::new(VAnalysis {
        propagation_limit: Some(12),
        producer_is_gs: false,
        visibility: Default::default(),
        ..Default::default()
    });
    let ea: RecExpr<VNode> = a.parse().expect("left side parses");
    let eb: RecExpr<VNode> = b.parse().expect("right side parses");
    let (ia, ib) = (g.add_expr(&ea), g.add_expr(&eb));
    g.rebuild();
    let runner = Runner::default()
        .with_egraph(g)
        .with_iter_limit(4)
        .run(&rules.rewrites().expect("rewrites build"));
    runner.egraph.find(ia) == runner.egraph.find(ib)
}

#[test]
fn conditions_gate_rules() {
    // A deliberately odd law, so only the condition decides whether it fires.
    let rule = |cond: &str| format!("(rule r (fabs ?x) (fneg ?x) (if {cond}))");
    let (attr, unif) = ("(fabs in:ATTR0.x)", "(fabs uniform:0)");
    let (attr_n, unif_n) = ("(fneg in:ATTR0.x)", "(fneg uniform:0)");
    assert!(joins_with(&rule("(free ?x)"), unif, unif_n));
    assert!(!joins_with(&rule("(free ?x)"), attr, attr_n));
    assert!(joins_with(
        &rule("(const ?x)"),
        "(fabs 2f32)",
        "(fneg 2f32)"
    ));
    assert!(!joins_with(&rule("(const ?x)"), unif, unif_n));
    assert!(joins_with(
        &rule("(convergent-p ?x)"),
        "(fabs psv:instance_id)",
        "(fneg psv:instance_id)"
    ));
    assert!(!joins_with(
        &rule("(convergent-p ?x)"),
        "(fabs psv:vertex_id)",
        "(fneg psv:vertex_id)"
    ));
    assert!(joins_with(
        &rule("(convergent-c ?x)"),
        "(fabs (xfer flat in:ATTR0.x))",
        "(fneg (xfer flat in:ATTR0.x))"
    ));
    assert!(!joins_with(
        &rule("(convergent-c ?x)"),
        "(fabs (xfer persp.center in:ATTR0.x))",
        "(fneg (xfer persp.center in:ATTR0.x))"
    ));
    let interp = "(rule r (xfer ?m ?p) (fneg (xfer ?m ?p)) (if (interpolated ?m)))";
    assert!(joins_with(
        interp,
        "(xfer linear.centroid in:ATTR0.x)",
        "(fneg (xfer linear.centroid in:ATTR0.x))"
    ));
    assert!(!joins_with(
        interp,
        "(xfer flat in:ATTR0.x)",
        "(fneg (xfer flat in:ATTR0.x))"
    ));
    let bits = "(rule r (bcsel ?c ?a ?b) ?a (if (same-bits ?a ?c)))";
    assert!(joins_with(bits, "(bcsel true true false)", "true"));
    assert!(!joins_with(
        bits,
        "(bcsel (flt in:ATTR0.x 0f32) in:ATTR1.x in:ATTR2.x)",
        "in:ATTR1.x"
    ));
}

#[test]
fn a_stopping_budget_is_reported_and_the_result_stays_correct() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/opt/motion_shared_inputs.pair"
    );
    let text = std::fs::read_to_string(path).expect("readable");
    let p = varysat::text::parse(&text, Some(path)).expect("parses");
    // Moving the shared inputs' sums into the VS takes several iterations.
    let out = optimize(&p, &Options::new().iter_limit(1)).expect("optimizes");
    assert_eq!(out.report.stop_reason, "iteration-limit (1)");
    assert!(check_equivalent(&p, &out.pipeline, &EquivConfig::default()).is_ok());
    let out = optimize(&p, &Options::new().node_limit(1)).expect("optimizes");
    assert_eq!(out.report.stop_reason, "node-limit (1)");
    assert!(check_equivalent(&p, &out.pipeline, &EquivConfig::default()).is_ok());
}

/// `xfer-bcsel-complement` holds bit for bit only where the consumer receives the
/// producer's value unchanged: interpolating `c ? 0 : 1` is not `1 - ` the
/// interpolated `c ? 1 : 0` in the last bits, so an interpolated transfer is left to
/// `xfer-bcsel-complement-interp`, the inexact form, which takes interpolated
/// transfers only.
#[test]
fn bcsel_complement_needs_an_uninterpolated_transfer() {
    let (x, y) = (
        "(bcsel (flt in:ATTR0.x in:ATTR1.x) 0f32 1f32)",
        "(bcsel (flt in:ATTR0.x in:ATTR1.x) 1f32 0f32)",
    );
    for (mode, exact, inexact) in [
        ("flat", true, false),
        ("(vertex 1i32)", true, false),
        ("persp.center", false, true),
        ("linear.centroid", false, true),
    ] {
        let a = format!("(xfer {mode} {x})");
        let b = format!("(fadd 1f32 (fneg (xfer {mode} {y})))");
        assert_eq!(joins("xfer-bcsel-complement", &a, &b), exact, "{mode}");
        assert_eq!(
            joins("xfer-bcsel-complement-interp", &a, &b),
            inexact,
            "{mode}"
        );
    }
}
