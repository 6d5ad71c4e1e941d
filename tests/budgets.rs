//! One budget for the whole run: the time, node and iteration limits of `Options` (and
//! the CLI's `--time-limit`, `--node-limit`, `--iter-limit`) bound every stage, a spent
//! budget still yields a valid pair that behaves like the input, and the report says
//! which budget stopped which stage. Timing itself is measured, not asserted here
//! (`docs/performance.md`, `examples/big_pair.rs`).

#[allow(dead_code)]
mod cli_support;

use std::time::Duration;

use cli_support::{stderr, varysat};
use varysat::internals::gen::synth_pair;
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::text::parse_file;
use varysat::{optimize, Options, Pipeline, Stage};

fn example(name: &str) -> Pipeline {
    let path = format!("{}/examples/pairs/{name}", env!("CARGO_MANIFEST_DIR"));
    parse_file(std::path::Path::new(&path)).expect("example parses")
}

fn assert_same_behaviour(a: &Pipeline, b: &Pipeline) {
    check_equivalent(a, b, &EquivConfig::default()).expect("same observable behaviour");
}

#[test]
fn a_spent_time_budget_returns_a_valid_pair_and_says_where_it_stopped() {
    for p in [
        example("vs_fs_fma.pair"),
        example("gs_fs_emits.pair"),
        synth_pair((Stage::Vertex, Stage::Fragment), 400, 3),
    ] {
        let out = optimize(&p, &Options::new().time_limit(Duration::ZERO)).expect("runs");
        // Lowering alone outlasts a zero budget: nothing after it runs.
        let stops = &out.report.budget_stops;
        assert!(
            stops.iter().any(|s| s.starts_with("lowering: time-limit")),
            "{stops:?}"
        );
        assert!(out.report.fallback.is_some());
        // Nothing was priced: the report says so instead of showing a cost of 0.
        assert!(!out.report.cost_priced);
        assert!(out.report.to_string().contains("not priced"));
        assert!(out.report.to_json()["cost"]["before"].is_null());
        // Never worse than the input: no extra varyings.
        assert!(out.report.after.components <= out.report.before.components);
        assert!(out.report.after.slots <= out.report.before.slots);
        varysat::validate::validate(&out.pipeline).expect("valid output");
        assert_same_behaviour(&p, &out.pipeline);
    }
}

/// Instructions of the generated pair of the large-pair tests: small by default (the
/// suite stays fast), `VARYSAT_BUDGET_PAIR_SIZE=100000` for the size.
fn budget_pair_size() -> usize {
    std::env::var("VARYSAT_BUDGET_PAIR_SIZE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6_000)
}

#[test]
fn a_large_pair_under_short_budgets_stays_correct_and_names_each_stop() {
    let p = synth_pair((Stage::Vertex, Stage::Fragment), budget_pair_size(), 1);
    for ms in [0, 2, 20, 200] {
        let limit = Duration::from_millis(ms);
        let out = optimize(&p, &Options::new().time_limit(limit)).expect("runs");
        let r = &out.report;
        // Every stop names a stage and the time budget; one that returned the input
        // says so, and then nothing changed.
        for stop in &r.budget_stops {
            let stage = stop.split(':').next().unwrap_or("");
            assert!(
                [
                    "lowering",
                    "saturation",
                    "extraction",
                    "emission",
                    "fixed-point round",
                    "report",
                    "run"
                ]
                .contains(&stage),
                "{stop}"
            );
        }
        if r.budget_stops
            .iter()
            .any(|s| s.contains("input was returned"))
        {
            assert!(r.fallback.is_some(), "{:?}", r.budget_stops);
            assert_eq!(r.after, r.before);
            assert_eq!(varysat::optimize::count_varyings(&out.pipeline), r.before);
        }
        // A run that outlasted its budget says which budget stopped it.
        if r.time > limit {
            assert!(!r.budget_stops.is_empty(), "{ms} ms: no stop reported");
        }
        assert!(r.after.components <= r.before.components);
        varysat::validate::validate(&out.pipeline).expect("valid output");
        let cfg = EquivConfig {
            runs: 1,
            ..EquivConfig::default()
        };
        check_equivalent(&p, &out.pipeline, &cfg).expect("same observable behaviour");
    }
}

/// The target, measured rather than asserted in the default suite: with
/// `VARYSAT_BUDGET_TARGET=1` (release build, `VARYSAT_BUDGET_PAIR_SIZE=100000`), the
/// time `optimize` reports stays within 1.2 T plus its own validation of the input
/// (which is part of reading it; `varysat check` times it).
#[test]
fn whole_run_within_the_budget_target() {
    if std::env::var("VARYSAT_BUDGET_TARGET").is_err() {
        return;
    }
    let p = synth_pair((Stage::Vertex, Stage::Fragment), budget_pair_size(), 1);
    let t0 = std::time::Instant::now();
    varysat::validate::validate(&p).expect("valid");
    let validation = t0.elapsed();
    for secs in [0.5, 1.0, 2.0] {
        let limit = Duration::from_secs_f64(secs);
        let out = optimize(&p, &Options::new().time_limit(limit)).expect("runs");
        let allowed = limit.mul_f64(1.2) + validation;
        assert!(
            out.report.time <= allowed,
            "T = {secs} s: {:?} > {allowed:?} ({:?})",
            out.report.time,
            out.report.budget_stops
        );
    }
}

#[test]
fn count_budgets_name_themselves() {
    let p = example("vs_fs_fma.pair");
    let out = optimize(&p, &Options::new().iter_limit(0)).expect("runs");
    assert_eq!(
        out.report.budget_stops,
        vec!["saturation: iteration-limit (0)".to_string()]
    );
    assert_same_behaviour(&p, &out.pipeline);
    let out = optimize(&p, &Options::new().node_limit(1)).expect("runs");
    assert!(
        out.report.budget_stops[0].starts_with("saturation: node-limit (1)"),
        "{:?}",
        out.report.budget_stops
    );
    assert_same_behaviour(&p, &out.pipeline);
}

#[test]
fn an_ample_budget_reports_no_stop() {
    let p = example("vs_fs_fma.pair");
    let out = optimize(&p, &Options::new()).expect("runs");
    assert!(
        out.report.budget_stops.is_empty(),
        "{:?}",
        out.report.budget_stops
    );
    // The seed case moves the ffma into the VS: one varying instead of two.
    assert_eq!(out.report.after.components, 1);
    assert!(out.report.cost_priced);
    assert!(out.report.cost_after < out.report.cost_before);
}

#[test]
fn the_cli_takes_the_budget_flags() {
    let pair = "examples/pairs/vs_fs_fma.pair";
    let o = varysat(&["opt", "--time-limit", "0", "--report", "json", pair]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stderr(&o)).expect("JSON report");
    let stops = report["budget_stops"].as_array().expect("budget_stops");
    assert!(stops.iter().any(|s| s
        .as_str()
        .is_some_and(|s| s.starts_with("lowering: time-limit"))));
    assert!(report["cost"]["before"].is_null(), "{}", report["cost"]);
    let o = varysat(&["opt", "--iter-limit", "0", pair]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("budget: saturation: iteration-limit (0)"));
    for args in [
        vec![
            "stats",
            "--node-limit",
            "100",
            "--iter-limit",
            "1",
            "--time-limit",
            "5",
            pair,
        ],
        vec![
            "experiment",
            "--time-limit",
            "0.5",
            "--iter-limit",
            "2",
            pair,
        ],
    ] {
        let o = varysat(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    for bad in [
        vec!["opt", "--node-limit", "0", pair],
        vec!["opt", "--time-limit", "-1", pair],
        vec!["opt", "--time-limit", "soon", pair],
    ] {
        let o = varysat(&bad);
        assert!(!o.status.success(), "{bad:?} accepted");
    }
}
