//! Compares the fast global extractor with the exact branch-and-bound on generated
//! pairs (fixed seed) and prints the total costs, the gap and the as-written total.
//!
//! `cargo run --release --example extraction_gap -- [PAIRS] [EXACT_SECONDS]`
//! (defaults: 240 pairs, 5 s per pair). The rules are the shipped set plus the
//! stand-in code-motion laws of `tests/extraction/motion.rules`.

use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};
use varysat::extract::{DagExtractor, ExactExtractor, Extractor, GlobalExtractor, Instance};
use varysat::gen::{arb_pipeline, GenConfig};
use varysat::Options;

const MOTION: &str = include_str!("../tests/extraction/motion.rules");
const SEED: u64 = 0x6578_7472_6163_7400;

fn main() -> Result<(), varysat::Error> {
    let mut args = std::env::args().skip(1);
    let pairs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(240);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5.0);
    let opts = Options::new().extra_rules("motion.rules", MOTION)?;
    let exact = ExactExtractor::with_limit(Duration::from_secs_f64(secs));
    let mut runner = TestRunner::new(Config {
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(SEED),
        ..Config::default()
    });
    let strategy = arb_pipeline(GenConfig::default());
    let (mut written, mut fast_all, mut fast_proved, mut exact_proved) = (0u64, 0u64, 0u64, 0u64);
    let (mut proved, mut worse, mut differ) = (0usize, 0usize, 0usize);
    let (mut dag_all, mut nodes) = (0u64, 0u64);
    let (mut t_fast, mut t_exact) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..pairs {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let inst = Instance::new(&tree.current(), &opts)?;
        let p = inst.problem();
        let t = Instant::now();
        let fast = inst.cost(&GlobalExtractor::default().extract(&p));
        t_fast += t.elapsed();
        let t = Instant::now();
        let out = exact.solve(&p);
        t_exact += t.elapsed();
        let as_written = inst.as_written();
        dag_all += inst.cost(&DagExtractor::default().extract(&p)).0;
        nodes += out.nodes;
        written += as_written.0;
        fast_all += fast.0;
        worse += usize::from(fast > as_written);
        if out.proved_optimal {
            proved += 1;
            fast_proved += fast.0;
            exact_proved += out.cost.0;
            differ += usize::from(fast != out.cost);
        }
    }
    let gap = 100.0 * (fast_proved as f64 - exact_proved as f64) / (exact_proved.max(1) as f64);
    println!("pairs: {pairs} (seed {SEED:#x}), exact limit {secs} s per pair");
    println!("as-written total cost: {written}");
    println!("dag (greedy + single flips) total cost: {dag_all}");
    println!("fast total cost: {fast_all} ({worse} pairs worse than as written)");
    println!("exact proved optimal:  {proved} of {pairs} pairs");
    println!(
        "on those: fast {fast_proved}, exact {exact_proved}, gap {gap:.3}% ({differ} pairs differ)"
    );
    println!(
        "time: fast {:.1} ms, exact {:.1} ms in total ({nodes} search nodes)",
        t_fast.as_secs_f64() * 1e3,
        t_exact.as_secs_f64() * 1e3
    );
    Ok(())
}
