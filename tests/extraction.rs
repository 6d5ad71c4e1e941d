//! Global and exact extraction on generated pairs (fixed seed): the fast extractor is
//! never worse than the pair as written, stays within 2% of the exact mode where that
//! proved optimality, and both modes are selectable through `Options` and the CLI.
//! The e-graphs get real alternatives from the default rule set's code-motion laws.

use std::time::Duration;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};
use varysat::internals::extract::{
    DagExtractor, ExactExtractor, Extraction, Extractor, GlobalExtractor,
};
use varysat::internals::gen::{arb_pipeline, synth_pair, GenConfig};
use varysat::internals::Instance;
use varysat::ir::{Pipeline, Stage};
use varysat::{optimize, Options};

fn options() -> Options {
    Options::new()
}

/// `n` generated pairs from a fixed seed.
fn pairs(n: usize, seed: u64) -> Vec<Pipeline> {
    let mut runner = TestRunner::new(Config {
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    });
    let strategy = arb_pipeline(GenConfig::default());
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).expect("a pair").current())
        .collect()
}

#[test]
fn fast_is_never_worse_than_as_written() {
    let opts = options();
    let mut improved = 0;
    for (i, p) in pairs(80, 11).iter().enumerate() {
        let inst = Instance::new(p, &opts).expect("generated pairs are valid");
        let prob = inst.problem();
        let fast = inst.cost(&GlobalExtractor::default().extract(&prob));
        let written = inst.as_written();
        assert!(
            fast <= written,
            "pair {i}: fast {fast} > as written {written}"
        );
        improved += usize::from(fast < written);
    }
    // The motion laws must give the extractor something to do on this sample.
    assert!(improved > 10, "only {improved} pairs improved");
}

#[test]
fn fast_is_never_worse_than_the_dag_extractor() {
    let opts = options();
    for (i, p) in pairs(40, 12).iter().enumerate() {
        let inst = Instance::new(p, &opts).expect("generated pairs are valid");
        let prob = inst.problem();
        let fast = inst.cost(&GlobalExtractor::default().extract(&prob));
        let dag = inst.cost(&DagExtractor::default().extract(&prob));
        assert!(fast <= dag, "pair {i}: fast {fast} > dag {dag}");
    }
}

#[test]
fn fast_is_within_two_percent_of_exact() {
    let opts = options();
    let exact = ExactExtractor::with_limit(Duration::from_secs(5));
    let (mut fast_total, mut exact_total, mut proved) = (0u64, 0u64, 0);
    for (i, p) in pairs(40, 13).iter().enumerate() {
        let inst = Instance::new(p, &opts).expect("generated pairs are valid");
        let prob = inst.problem();
        let fast = inst.cost(&GlobalExtractor::default().extract(&prob));
        let out = exact.solve(&prob);
        assert_eq!(inst.cost(&out.selection), out.cost, "pair {i}");
        // Exact starts from the fast result, so it can only be as good or better.
        assert!(
            out.cost <= fast,
            "pair {i}: exact {} > fast {fast}",
            out.cost
        );
        if out.proved_optimal {
            proved += 1;
            fast_total += fast.0;
            exact_total += out.cost.0;
        }
    }
    assert!(proved >= 30, "exact proved only {proved} of 40");
    assert!(
        fast_total * 100 <= exact_total * 102,
        "fast {fast_total} vs exact {exact_total}"
    );
}

#[test]
fn exact_mode_through_options_reports_optimality() {
    let p = synth_pair((Stage::Vertex, Stage::Fragment), 60, 3);
    let fast = optimize(&p, &options()).expect("optimizes");
    assert_eq!(fast.report.extraction, "fast");
    assert_eq!(fast.report.proved_optimal, None);
    let exact_opts = options().extraction(Extraction::Exact {
        time_limit: Duration::from_secs(20),
    });
    let exact = optimize(&p, &exact_opts).expect("optimizes");
    assert_eq!(exact.report.extraction, "exact");
    assert_eq!(exact.report.proved_optimal, Some(true));
    assert!(exact.report.cost_after <= fast.report.cost_after);
    assert!(exact.report.cost_after <= exact.report.cost_before);
    let json = exact.report.to_json();
    assert_eq!(json["extraction"]["mode"], "exact");
    assert_eq!(json["extraction"]["proved_optimal"], true);
}

#[test]
fn cli_selects_the_extraction_mode() {
    let pair = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/pairs/vs_fs_forward.pair"
    );
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_varysat"))
            .args(args)
            .output()
            .expect("varysat runs")
    };
    let out = run(&["opt", pair, "--extract", "exact", "--report", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&out.stderr).expect("the report is JSON");
    assert_eq!(report["extraction"]["mode"], "exact");
    assert_eq!(report["extraction"]["proved_optimal"], true);
    let fast = run(&["opt", pair, "--report", "json"]);
    let fast: serde_json::Value = serde_json::from_slice(&fast.stderr).expect("JSON");
    assert_eq!(fast["extraction"]["mode"], "fast");
    assert!(fast["extraction"]["proved_optimal"].is_null());
    let bad = run(&[
        "opt",
        pair,
        "--extract",
        "exact",
        "--exact-time-limit",
        "soon",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("non-negative number of seconds"));
}

/// The pair at `path` (relative to the crate) and its optimizations in both modes.
fn in_both_modes(path: &str) -> (Pipeline, Vec<(Extraction, varysat::Outcome)>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let p = varysat::text::parse_file(&path).expect("parses");
    let outs = [Extraction::Fast, Extraction::exact()]
        .into_iter()
        .map(|mode| {
            let out = optimize(&p, &options().extraction(mode)).expect("optimizes");
            (mode, out)
        })
        .collect();
    (p, outs)
}

#[test]
fn both_modes_break_cost_ties_by_components() {
    // Into a TES the VS's `x - 1/x`, sent beside `x` and `1/x`, costs what computing
    // it there does (varyings are priced by the vec4 slot): 4 components and 3 cost
    // the same, and both modes must end with the 3 (x, 1/x and the fog value): the
    // exact search starts from the fast mode's tie-broken result and replaces it only
    // by a cheaper one.
    let (_, outs) = in_both_modes("tests/regressions/vs_tes_cost_tie_broken_by_components.pair");
    for (mode, out) in &outs {
        let r = &out.report;
        assert_eq!(r.after.components, 3, "{mode:?}\n{r}");
    }
    let costs: Vec<_> = outs.iter().map(|(_, o)| o.report.cost_after).collect();
    assert_eq!(costs[0], costs[1], "the tie-break costs nothing");
}

#[test]
fn shared_linear_inputs_need_two_varyings_in_both_modes() {
    // t0 = a+b+c, t1 = a+b*k1+c*k2 over three interpolated inputs: moving both sums
    // into the producer needs two varyings instead of three.
    let (p, outs) = in_both_modes("examples/pairs/vs_fs_shared_inputs.pair");
    let cfg = varysat::interpreter::EquivConfig::default();
    for (mode, out) in &outs {
        let r = &out.report;
        assert_eq!(
            (r.before.components, r.after.components),
            (3, 2),
            "{mode:?}\n{r}"
        );
        assert!(r.cost_after < r.cost_before, "{mode:?}\n{r}");
        if let Err(e) = varysat::interpreter::check_equivalent(&p, &out.pipeline, &cfg) {
            panic!("{mode:?}: {e}");
        }
    }
}

#[test]
fn moved_pairs_stay_equivalent_in_both_modes() {
    let cfg = varysat::interpreter::EquivConfig::default();
    let exact = options().extraction(Extraction::Exact {
        time_limit: Duration::from_secs(5),
    });
    for (i, p) in pairs(40, 14).iter().enumerate() {
        for opts in [options(), exact.clone()] {
            let out = optimize(p, &opts).expect("optimizes");
            let r = &out.report;
            assert_eq!(r.fallback, None, "pair {i}");
            assert!(r.after.slots <= r.before.slots, "pair {i}: {r}");
            if let Err(e) = varysat::interpreter::check_equivalent(p, &out.pipeline, &cfg) {
                panic!("pair {i} ({}): {e}\n{r}", r.extraction);
            }
        }
    }
}
