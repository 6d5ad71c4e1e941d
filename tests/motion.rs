//! Cross-stage code motion (issue 5, part A): the laws are in the saturated e-graph
//! where they hold and absent where they do not, the per-move report adds up, and the
//! cases only a global extractor finds are found.

use std::path::Path;

use varysat::internals::egraph::analysis::VAnalysis;
use varysat::internals::egraph::lower::{lower, Lowered};
use varysat::internals::egraph::saturate::saturate;
use varysat::internals::egraph::{RuleSet, VGraph, VNode};
use varysat::internals::moves::Direction;
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::Stage;
use varysat::{optimize, Options, Pipeline};

fn pair(path: &str) -> Pipeline {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    varysat::text::parse_file(&full).expect("test pair parses")
}

fn saturated(p: &Pipeline) -> (VGraph, Lowered) {
    let analysis = VAnalysis {
        propagation_limit: Some(12),
        producer_is_gs: p.producer.stage() == Stage::Geometry,
        visibility: p.visibility.clone(),
        ..Default::default()
    };
    let lowered = lower(p, analysis, false);
    let rewrites = RuleSet::default_set().rewrites().expect("default rules");
    let budgets = Options::new().budgets;
    let (g, _) = saturate(lowered.egraph.clone(), &rewrites, &budgets);
    (g, lowered)
}

fn holds_xfer(g: &VGraph, id: egg::Id) -> bool {
    g[g.find(id)]
        .nodes
        .iter()
        .any(|n| matches!(n, VNode::Xfer(_)))
}

fn holds_alu(g: &VGraph, id: egg::Id) -> bool {
    g[g.find(id)]
        .nodes
        .iter()
        .any(|n| matches!(n, VNode::Alu { .. }))
}

#[test]
fn linear_consumer_work_over_interpolated_inputs_can_cross() {
    let (g, l) = saturated(&pair("examples/pairs/vs_fs_shared_inputs.pair"));
    assert_eq!(l.roots.len(), 2);
    for root in l.roots.values() {
        assert!(holds_xfer(&g, *root), "t0 and t1 are each one transfer");
    }
}

#[test]
fn a_product_of_interpolated_inputs_never_crosses() {
    let (g, l) = saturated(&pair("tests/opt/motion_interp_product.pair"));
    assert_eq!(l.roots.len(), 1);
    for root in l.roots.values() {
        assert!(!holds_xfer(&g, *root));
    }
}

#[test]
fn producer_work_over_a_per_vertex_input_can_move_forward() {
    let (g, l) = saturated(&pair("tests/motion/forward_needs_global.pair"));
    // Every load carries a function of v: each is also that function computed in
    // the TES over the one transfer of v.
    assert_eq!(l.loads.len(), 5);
    for ld in &l.loads {
        assert!(holds_alu(&g, ld.class), "{} has no forward form", ld.slot);
    }
}

#[test]
fn gs_per_emit_values_cross_like_any_other() {
    // The GS stores a different value at each of three emits; the FS's linear
    // combinations of them are each one transfer of a per-emit expression.
    let (g, l) = saturated(&pair("tests/opt/gs_motion_shared_inputs.pair"));
    assert_eq!(l.roots.len(), 2);
    for root in l.roots.values() {
        assert!(holds_xfer(&g, *root), "t0 and t1 are each one transfer");
    }
    // Their product is not linear and stays two transfers.
    let (g, l) = saturated(&pair("tests/opt/gs_motion_product.pair"));
    assert!(l.roots.values().all(|r| !holds_xfer(&g, *r)));
}

/// On pairs where motion is the only change, the per-move deltas (GS work priced
/// per emit) add up to the whole cost change.
#[test]
fn gs_move_reports_add_up_to_the_cost_change() {
    for path in [
        "tests/opt/gs_motion_shared_inputs.pair",
        "tests/opt/gs_motion_forward.pair",
        "tests/opt/gs_motion_emits_moved.pair",
    ] {
        let out = optimize(&pair(path), &Options::new()).expect("optimizes");
        let r = &out.report;
        assert!(!r.moves.is_empty(), "{path}: {r}");
        let total: i64 = r.moves.iter().map(|m| m.cost_delta).sum();
        assert_eq!(
            total,
            r.cost_after.0 as i64 - r.cost_before.0 as i64,
            "{path}: {r}"
        );
    }
}

#[test]
fn move_report_adds_up_to_the_cost_change() {
    let p = pair("examples/pairs/vs_fs_shared_inputs.pair");
    let out = optimize(&p, &Options::new()).expect("optimizes");
    let r = &out.report;
    assert_eq!(r.moves.len(), 2, "{r}");
    for m in &r.moves {
        assert_eq!(m.direction, Direction::Backward);
        let replaced: Vec<String> = m.replaced.iter().map(ToString::to_string).collect();
        assert_eq!(replaced, ["VAR0.x", "VAR0.y", "VAR0.z"]);
        assert_eq!(m.via.len(), 1);
    }
    let total: i64 = r.moves.iter().map(|m| m.cost_delta).sum();
    assert_eq!(total, r.cost_after.0 as i64 - r.cost_before.0 as i64);
    let json = r.to_json();
    assert_eq!(json["moves"][0]["direction"], "backward");
    assert!(json["moves"][1]["expr"]
        .as_str()
        .is_some_and(|e| e.contains("uniform:0")));
}

#[test]
fn forward_motion_that_pays_only_when_taken_together() {
    // Five functions of v, none stored as v itself: the laws give the forward forms
    // (see `producer_work_over_a_per_vertex_input_can_move_forward`), but taking any
    // single one costs as much as it saves; only moving enough of them together frees
    // the second slot (per-vertex varyings are priced per slot), which the global
    // extractor finds.
    let p = pair("tests/motion/forward_needs_global.pair");
    let out = optimize(&p, &Options::new()).expect("optimizes");
    // Before a TES the VS's POS is plain data (dead here): it is the third slot.
    assert_eq!(out.report.before.slots, 3);
    assert_eq!(out.report.after.slots, 1, "{}", out.report);
    assert!(out
        .report
        .moves
        .iter()
        .any(|m| m.direction == Direction::Forward));
    check_equivalent(&p, &out.pipeline, &EquivConfig::default()).expect("equivalent");
}

#[test]
fn equal_cost_motion_is_found_in_the_first_run() {
    // The fully moved sum (two varyings) costs the same as keeping three; the single-
    // flip DAG extractor found it only when run again on its own output (a 2000-case
    // idempotence counterexample); the global extractor finds it at once.
    let p = pair("tests/motion/idempotence_tie.pair");
    let first = optimize(&p, &Options::new()).expect("optimizes");
    let second = optimize(&first.pipeline, &Options::new()).expect("optimizes again");
    assert_eq!(second.report.after, first.report.after, "{}", second.report);
}

#[test]
fn the_moved_sum_is_in_the_first_runs_graph() {
    let (g, l) = saturated(&pair("tests/motion/idempotence_tie.pair"));
    // The TCS stores the sum of its four inputs: that root's class holds the sum as
    // consumer fadds and as one transfer of the producer-side sum.
    let loads: Vec<egg::Id> = l.loads.iter().map(|ld| g.find(ld.class)).collect();
    let sums: Vec<&egg::Id> = l
        .roots
        .values()
        .filter(|r| holds_alu(&g, **r) && !loads.contains(&g.find(**r)))
        .collect();
    assert_eq!(sums.len(), 1);
    assert!(holds_xfer(&g, *sums[0]));
}

/// A select whose condition folds to a constant (`ilt(x, x)`) once kept moving across
/// its transfer, one more select each iteration, until the iteration budget stopped
/// saturation on this generated pair.
#[test]
fn a_select_on_a_constant_condition_does_not_keep_growing() {
    let p = varysat::internals::gen::synth_pair((Stage::Vertex, Stage::Geometry), 300, 1);
    let out = optimize(&p, &Options::new()).expect("optimizes");
    assert_eq!(out.report.stop_reason, "saturated", "{}", out.report);
    assert!(out.report.egraph_nodes < 728, "{}", out.report);
    assert!(check_equivalent(&p, &out.pipeline, &EquivConfig::default()).is_ok());
}

/// A select with a constant value moves across interpolation only on a free condition
/// (`interp-bcsel-xk`). The same law on a condition that varies across the primitive
/// (an interpolated input compared with a threshold) is wrong, saves a varying, and
/// the reference interpreter catches it; the shipped rules leave that select alone.
#[test]
fn a_select_moved_across_interpolation_on_a_divergent_condition_is_caught() {
    const PAIR: &str = "(pair (uniforms 1)
      (producer vs
        (%a = load_input ATTR0.x)
        (%p = load_input ATTR1.x)
        (store_output POS.x %a)
        (store_output VAR0.x %a)
        (store_output VAR1.x %p))
      (consumer fs
        (%ia = load_interpolated_input VAR0.x persp center)
        (%ip = load_interpolated_input VAR1.x persp center)
        (%u = load_uniform 0)
        (%zero = const 32 0.0)
        (%t = flt %ip %u)
        (%r = bcsel %t %ia %zero)
        (store_output DATA0.x %r)))";
    let p = varysat::text::parse(PAIR, Some("select.pair")).expect("parses");
    let sound = optimize(&p, &Options::new()).expect("optimizes");
    assert_eq!(sound.report.after.components, 2, "{}", sound.report);
    assert!(check_equivalent(&p, &sound.pipeline, &EquivConfig::default()).is_ok());

    let bad = "(rule bad (bcsel (flt (xfer ?m ?p) ?u) (xfer ?m ?a) ?k) \
               (xfer ?m (bcsel (flt ?p ?u) ?a ?k)) \
               (if (not-free ?a) (interpolated ?m) (free ?u) (const ?k)) inexact)";
    let opts = Options::new()
        .extra_rules("bad.rules", bad)
        .expect("rule parses");
    let unsound = optimize(&p, &opts).expect("optimizes");
    assert_eq!(unsound.report.after.components, 1, "{}", unsound.report);
    assert!(
        check_equivalent(&p, &unsound.pipeline, &EquivConfig::default()).is_err(),
        "the divergent-condition select law went unnoticed"
    );
    // The rule checker refuses it too.
    let set = RuleSet::parse("bad.rules", bad).expect("rule parses");
    assert_eq!(varysat::rulecheck::check_set(&set, 400).len(), 1);
}

/// Open-coded TES interpolation times a factor moves into the producer only when the
/// factor is the same in every producer invocation of the patch
/// (`tes-interp-fmul-uc`). Without that condition the law is wrong: with the factor
/// read from control point 0 of a per-vertex value, it saves a varying and the
/// interpreter and the rule checker both catch it.
#[test]
fn a_divergent_factor_moved_into_open_coded_interpolation_is_caught() {
    let p = pair("tests/opt/motion_tes_interp_patch.pair");
    let sound = optimize(&p, &Options::new()).expect("optimizes");
    assert_eq!(sound.report.after.components, 3, "{}", sound.report);
    let s = |a: &str| {
        let t = |k: usize, c: &str| format!("(fmul (xfer (vertex {k}i32) {a}) csv:tess_coord_{c})");
        format!("(fadd (fadd {} {}) {})", t(0, "x"), t(1, "y"), t(2, "z"))
    };
    let bad = format!(
        "(rule bad (fmul {} (xfer ?n ?q)) {} (if (not-free ?a) (uninterpolated ?n)) inexact)",
        s("?a"),
        s("(fmul ?a ?q)")
    );
    let opts = Options::new()
        .extra_rules("bad.rules", &bad)
        .expect("rule parses");
    let unsound = optimize(&p, &opts).expect("optimizes");
    assert_eq!(unsound.report.after.components, 2, "{}", unsound.report);
    assert!(
        check_equivalent(&p, &unsound.pipeline, &EquivConfig::default()).is_err(),
        "the divergent-factor law went unnoticed"
    );
    let set = RuleSet::parse("bad.rules", &bad).expect("rule parses");
    assert_eq!(varysat::rulecheck::check_set(&set, 400).len(), 1);
}

/// GS emits inside an `if` are emit sites of their own: the varyings are stored
/// before each, with the values stored on the way to it. The optimized pair is
/// equivalent; a wrong routing (each branch's emit getting the other branch's stores,
/// here by swapping the branches of the optimized GS) is caught by the interpreter.
#[test]
fn gs_emits_inside_an_if_get_their_own_stores() {
    use varysat::ir::{InstKind, Stmt};
    let p = pair("tests/opt/gs_branch_emit_motion.pair");
    let out = optimize(&p, &Options::new()).expect("optimizes");
    assert_eq!(out.report.after.components, 1, "{}", out.report);
    assert!(check_equivalent(&p, &out.pipeline, &EquivConfig::default()).is_ok());

    let mut wrong = out.pipeline.clone();
    let emits = |b: &[Stmt]| {
        b.iter()
            .any(|s| matches!(s, Stmt::Inst(i) if i.kind == InstKind::EmitVertex))
    };
    let mut swapped = false;
    for stmt in &mut wrong.producer.body {
        if let Stmt::If {
            then_body,
            else_body,
            ..
        } = stmt
        {
            if emits(then_body) && emits(else_body) {
                std::mem::swap(then_body, else_body);
                swapped = true;
            }
        }
    }
    assert!(swapped, "the optimized GS keeps its branched emits");
    assert!(
        check_equivalent(&p, &wrong, &EquivConfig::default()).is_err(),
        "stores routed to the other branch's emit went unnoticed"
    );
}

/// VS -> TCS motion through inputs read at `invocation_id` (`in[gl_InvocationID]`):
/// the laws hold for any vertex index as long as every operand crosses at the same
/// one. A law that ignores the index (here: a product of reads of two different
/// vertices computed in the VS and read at the first index) saves a varying, and the
/// interpreter catches it.
#[test]
fn a_product_of_two_vertices_moved_into_the_vs_is_caught() {
    let p = pair("tests/opt/motion_vs_tcs_invocation.pair");
    let sound = optimize(&p, &Options::new()).expect("optimizes");
    assert_eq!(sound.report.after.components, 4, "{}", sound.report);
    assert!(check_equivalent(&p, &sound.pipeline, &EquivConfig::default()).is_ok());

    let bad = "(rule bad (fmul (xfer (vertex ?i) ?a) (xfer (vertex ?j) ?b)) \
               (xfer (vertex ?i) (fmul ?a ?b)) (if (not-free ?a) (not-free ?b)))";
    let opts = Options::new()
        .extra_rules("bad.rules", bad)
        .expect("rule parses");
    let unsound = optimize(&p, &opts).expect("optimizes");
    assert_eq!(unsound.report.after.components, 3, "{}", unsound.report);
    assert!(
        check_equivalent(&p, &unsound.pipeline, &EquivConfig::default()).is_err(),
        "the mixed-vertex product law went unnoticed"
    );
    let set = RuleSet::parse("bad.rules", bad).expect("rule parses");
    assert_eq!(varysat::rulecheck::check_set(&set, 400).len(), 1);
}
