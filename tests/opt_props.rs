//! Property tests of the whole optimizer on random well-formed pairs (issue 4), with the
//! reference interpreter as the oracle. Each property is its own test so a failure
//! names what broke; counterexamples shrink and print as `.pair` text.
//!
//! `VARYSAT_PROPTEST_CASES` raises the number of cases and `VARYSAT_PROPTEST_SEED`
//! picks another seed (docs/testing.md). Shrunk counterexamples are kept as `.pair`
//! files in `tests/regressions/`, which every property replays first.

use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestError, TestRunner};
use varysat::internals::extract::CostModel;
use varysat::internals::gen::{arb_readable, describe, synth_pair, GenConfig, Readable};
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::{Pipeline, Stage};
use varysat::{optimize, Options, Outcome};

/// Cases per property of the six generated-pair properties: 6 x 1,700 = 10,200 random
/// pairs per `cargo test` (issue #14 asks for 10^4 in CI): the test binary takes 36 s
/// in the debug build on two cores (13 s at the former 256/128), 31 s in release.
const CI_CASES: u32 = 1_700;

fn cases(default: u32) -> u32 {
    std::env::var("VARYSAT_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A runner with a fixed seed, so CI runs are reproducible; failures are kept as
/// regression files by the caller, not by proptest's persistence.
fn runner(cases: u32) -> TestRunner {
    runner_from(cases, seed())
}

fn runner_from(cases: u32, seed: u64) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    };
    TestRunner::new(config)
}

/// The seed CI runs with.
const DEFAULT_SEED: u64 = 0x7661_7279_7361_7400;

/// The fixed seed of every property run; `VARYSAT_PROPTEST_SEED` explores others.
fn seed() -> u64 {
    std::env::var("VARYSAT_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED)
}

/// The shrunk counterexamples of earlier failures.
fn regressions() -> Vec<(String, Pipeline)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/regressions exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pair"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let p = varysat::text::parse_file(&f).expect("regression files parse");
            (f.display().to_string(), p)
        })
        .collect()
}

/// Runs `property` over random pairs of every stage pair and panics with the shrunk
/// counterexample printed as `.pair` text.
fn check(name: &str, default_cases: u32, property: impl Fn(&Pipeline) -> Result<(), String>) {
    for (file, p) in regressions() {
        if let Err(why) = property(&p) {
            panic!("{name} fails on regression {file}: {why}");
        }
    }
    let result = runner(cases(default_cases)).run(&arb_readable(GenConfig::default()), |r| {
        property(&r.0).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        match e {
            TestError::Fail(why, Readable(p)) => {
                panic!(
                    "{name} fails: {why}\nshrunk counterexample:\n{}",
                    describe(&p)
                )
            }
            TestError::Abort(why) => panic!("{name} aborted: {why}"),
        }
    }
}

fn opt(p: &Pipeline, opts: &Options) -> Result<Outcome, String> {
    optimize(p, opts).map_err(|e| format!("optimize failed: {e}"))
}

fn equivalent(a: &Pipeline, b: &Pipeline) -> Result<(), String> {
    let cfg = EquivConfig {
        runs: 3,
        ..EquivConfig::default()
    };
    check_equivalent(a, b, &cfg).map_err(|e| format!("{e}\noptimized:\n{}", describe(b)))
}

#[test]
fn optimized_pairs_validate() {
    check("validation", CI_CASES, |p| {
        let out = opt(p, &Options::new())?;
        if let Some(why) = &out.report.fallback {
            return Err(format!("the optimizer fell back to the input: {why}"));
        }
        varysat::validate::validate(&out.pipeline)
            .map_err(|e| format!("{e}\noptimized:\n{}", describe(&out.pipeline)))
    });
}

#[test]
fn optimized_pairs_are_interpreter_equivalent() {
    check("equivalence", CI_CASES, |p| {
        let out = opt(p, &Options::new())?;
        equivalent(p, &out.pipeline)
    });
}

#[test]
fn varying_components_and_slots_never_increase() {
    check("monotonicity", CI_CASES, |p| {
        let r = opt(p, &Options::new())?.report;
        if r.after.components > r.before.components || r.after.slots > r.before.slots {
            return Err(format!(
                "components {} -> {}, slots {} -> {}",
                r.before.components, r.after.components, r.before.slots, r.after.slots
            ));
        }
        // The model cost itself may rise: propagation within the consumer's limit is
        // mandatory, as in Mesa (docs/design.md), even where the model would rather
        // keep a varying whose slot is already paid for.
        Ok(())
    });
}

#[test]
fn optimizing_twice_changes_nothing_more() {
    check("idempotence", CI_CASES, |p| {
        let once = opt(p, &Options::new())?;
        let twice = opt(&once.pipeline, &Options::new())?;
        let (a, b) = (once.report.after, twice.report.after);
        if (b.components, b.slots) != (a.components, a.slots) {
            return Err(format!(
                "second run: components {} -> {}, slots {} -> {}",
                a.components, b.components, a.slots, b.slots
            ));
        }
        Ok(())
    });
}

#[test]
fn the_same_input_gives_byte_identical_output() {
    check("determinism", CI_CASES, |p| {
        let a = opt(p, &Options::new())?;
        let b = opt(p, &Options::new())?;
        let (ta, tb) = (
            varysat::text::print(&a.pipeline),
            varysat::text::print(&b.pipeline),
        );
        if ta != tb {
            return Err(format!("two runs differ:\n{ta}\n----\n{tb}"));
        }
        let (mut ja, mut jb) = (a.report.to_json(), b.report.to_json());
        for j in [&mut ja, &mut jb] {
            if let Some(o) = j.as_object_mut() {
                o.remove("time");
                o.remove("time_ms");
                o.remove("timings_ms");
                o.remove("time_us");
            }
        }
        if ja != jb {
            return Err(format!("reports differ:\n{ja}\n----\n{jb}"));
        }
        Ok(())
    });
}

#[test]
fn a_node_budget_stops_saturation_with_a_correct_result() {
    // A large pair with many movable expressions would grow the e-graph far beyond
    // this budget; the run must stop at it, say so, and still be correct.
    let p = synth_pair((Stage::Vertex, Stage::Fragment), 1500, 7);
    let opts = Options::new().node_limit(300);
    let out = optimize(&p, &opts).expect("optimize runs under a budget");
    let reason = out.report.stop_reason.to_lowercase();
    assert!(reason.contains("node"), "stop reason: {reason}");
    varysat::validate::validate(&out.pipeline).expect("valid under a budget");
    equivalent(&p, &out.pipeline).unwrap();
    assert!(out.report.after.slots <= out.report.before.slots);
}

#[test]
fn an_iteration_budget_is_reported_and_correct() {
    let p = synth_pair((Stage::Vertex, Stage::Fragment), 400, 11);
    let out = optimize(&p, &Options::new().iter_limit(1)).expect("optimize runs");
    let reason = out.report.stop_reason.to_lowercase();
    assert!(reason.contains("iteration"), "stop reason: {reason}");
    equivalent(&p, &out.pipeline).unwrap();
}

#[test]
fn an_injected_unsound_law_is_caught_and_shrunk() {
    // Interpolation is linear, not multiplicative: interp(x)*interp(y) != interp(x*y).
    let bad = "(rule bad-interp-mul (fmul (xfer persp.center ?a) (xfer persp.center ?b)) \
               (xfer persp.center (fmul ?a ?b)))";
    // Extraction takes the law only where it pays. With the RADV-calibrated profiles a
    // product whose operands other uses keep in varyings costs one more interpolated
    // component (two FS `v_interp`) to save one FS multiply, so this demonstration
    // makes FS work dear (weight 16) to have the law chosen wherever it fires.
    let dear_fs = CostModel {
        weight_fs: 16,
        ..CostModel::amd_gfx10()
    };
    let opts = Options::new()
        .extra_rules("bad.rules", bad)
        .expect("the bad rule parses")
        .cost(dear_fs);
    // Only fragment shaders interpolate, so only pairs into one can expose the law.
    let into_fs = GenConfig {
        pairs: vec![
            (Stage::Vertex, Stage::Fragment),
            (Stage::TessEval, Stage::Fragment),
            (Stage::Geometry, Stage::Fragment),
        ],
        ..GenConfig::default()
    };
    // A demonstration of the harness, not an exploration: whether some case of a
    // run exposes the law, and how far shrinking gets, depend on the cases drawn, so
    // this test always draws them from the CI seed and the three after it (the first
    // run that exposes the law is the one shrunk).
    let mut result = Ok(());
    for k in 0..4 {
        result =
            runner_from(cases(512), DEFAULT_SEED + k).run(&arb_readable(into_fs.clone()), |r| {
                let out = opt(&r.0, &opts).map_err(TestCaseError::fail)?;
                equivalent(&r.0, &out.pipeline).map_err(TestCaseError::fail)
            });
        if result.is_err() {
            break;
        }
    }
    let Err(TestError::Fail(why, Readable(p))) = result else {
        panic!("the unsound law went unnoticed: {result:?}");
    };
    let text = describe(&p);
    assert!(why.message().contains("mismatch"), "{why}");
    // The shrunk pair still shows the law's shape, and is small enough to read.
    assert!(text.contains("fmul"), "{text}");
    let size = p.producer.inst_count() + p.consumer.inst_count();
    assert!(size <= 30, "shrunk to {size} instructions:\n{text}");
    // The sound rule set optimizes that same pair correctly.
    let sound = opt(&p, &Options::new()).unwrap();
    equivalent(&p, &sound.pipeline).unwrap();
}

/// Opaque ops of one purity class in a shader, counted.
fn opaque_count(s: &varysat::ir::Shader, purity: varysat::ir::Purity) -> usize {
    let mut n = 0;
    s.for_each_inst(|i| {
        if matches!(&i.kind, varysat::ir::InstKind::Opaque { op, .. } if op.purity == purity) {
            n += 1;
        }
    });
    n
}

#[test]
fn stage_bound_and_effect_opaque_ops_stay_in_their_stage() {
    use varysat::ir::Purity;
    check("opaque stages", CI_CASES, |p| {
        let out = opt(p, &Options::new())?;
        let q = &out.pipeline;
        for (name, before, after) in [
            ("producer", &p.producer, &q.producer),
            ("consumer", &p.consumer, &q.consumer),
        ] {
            let effects = (
                opaque_count(before, Purity::Effect),
                opaque_count(after, Purity::Effect),
            );
            if effects.0 != effects.1 {
                return Err(format!(
                    "{name}: {} effects became {}",
                    effects.0, effects.1
                ));
            }
            let bound = (
                opaque_count(before, Purity::Stage),
                opaque_count(after, Purity::Stage),
            );
            if bound.1 > bound.0 {
                return Err(format!(
                    "{name}: {} stage-bound ops became {}",
                    bound.0, bound.1
                ));
            }
        }
        Ok(())
    });
}

/// The most pairs the generator's coverage check draws.
const MAX_COVERAGE_PAIRS: usize = 3_000;

#[test]
fn the_generator_makes_opaque_ops_of_every_class() {
    use proptest::strategy::{Strategy, ValueTree};
    use varysat::ir::Purity;
    let mut runner = runner(1);
    let mut seen = [0usize; 3];
    // Opaque ops are rare: in a fixed sample of 200 pairs a class turned up 0 to 3
    // times, so seeds 106 and 119 missed one. The run now stops as soon as every
    // class is seen; at that rate, 3,000 pairs miss a class with odds below 10^-6.
    for _ in 0..MAX_COVERAGE_PAIRS {
        if seen.iter().all(|n| *n > 0) {
            break;
        }
        let tree = arb_readable(GenConfig::default())
            .new_tree(&mut runner)
            .expect("a pair");
        let p = tree.current().0;
        for s in [&p.producer, &p.consumer] {
            for (i, class) in [Purity::Pure, Purity::Stage, Purity::Effect]
                .iter()
                .enumerate()
            {
                seen[i] += opaque_count(s, *class);
            }
        }
    }
    assert!(
        seen.iter().all(|n| *n > 0),
        "opaque ops per class: {seen:?}"
    );
}
