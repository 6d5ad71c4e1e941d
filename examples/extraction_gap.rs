//! Compares the fast global extractor with the exact branch-and-bound (and with the
//! single-flip DAG extractor) on generated pairs from a fixed seed, and prints the
//! total costs, the gap and the as-written total — once for default-size pairs and
//! once for pairs with twice the ops and outputs.
//!
//! `cargo run --release --example extraction_gap -- [PAIRS] [EXACT_SECONDS]`
//! (defaults: 240 pairs per sample, 5 s per pair). The rules are the default set,
//! code-motion laws included.

use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};
use varysat::internals::extract::{DagExtractor, ExactExtractor, Extractor, GlobalExtractor};
use varysat::internals::gen::{arb_pipeline, GenConfig};
use varysat::internals::Instance;
use varysat::Options;

const SEED: u64 = 0x6578_7472_6163_7400;

/// Sums over one sample.
#[derive(Default)]
struct Totals {
    pairs: usize,
    written: u64,
    dag: u64,
    fast: u64,
    worse: usize,
    proved: usize,
    fast_proved: u64,
    exact_proved: u64,
    differ: usize,
    nodes: u64,
    t_fast: Duration,
    t_exact: Duration,
}

fn sample(cfg: GenConfig, pairs: usize, opts: &Options, exact: &ExactExtractor) -> Totals {
    let mut runner = TestRunner::new(Config {
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(SEED),
        ..Config::default()
    });
    let strategy = arb_pipeline(cfg);
    let mut t = Totals::default();
    for _ in 0..pairs {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let Ok(inst) = Instance::new(&tree.current(), opts) else {
            continue;
        };
        let p = inst.problem();
        let start = Instant::now();
        let fast = inst.cost(&GlobalExtractor::default().extract(&p));
        t.t_fast += start.elapsed();
        let start = Instant::now();
        let out = exact.solve(&p);
        t.t_exact += start.elapsed();
        let written = inst.as_written();
        t.pairs += 1;
        t.written += written.0;
        t.dag += inst.cost(&DagExtractor::default().extract(&p)).0;
        t.fast += fast.0;
        t.worse += usize::from(fast > written);
        t.nodes += out.nodes;
        if out.proved_optimal {
            t.proved += 1;
            t.fast_proved += fast.0;
            t.exact_proved += out.cost.0;
            t.differ += usize::from(fast != out.cost);
        }
    }
    t
}

fn print(name: &str, t: &Totals) {
    let gap =
        100.0 * (t.fast_proved as f64 - t.exact_proved as f64) / (t.exact_proved.max(1) as f64);
    println!("{name}: {} pairs", t.pairs);
    println!("  as-written total cost:       {}", t.written);
    println!("  DAG extractor total cost:    {}", t.dag);
    println!(
        "  fast total cost:             {} ({} pairs worse than as written)",
        t.fast, t.worse
    );
    println!(
        "  exact proved optimal:        {} of {} pairs",
        t.proved, t.pairs
    );
    println!(
        "  on those: fast {}, exact {}, gap {gap:.3}% ({} pairs differ)",
        t.fast_proved, t.exact_proved, t.differ
    );
    println!(
        "  time: fast {:.1} ms, exact {:.1} ms in total ({} search nodes)",
        t.t_fast.as_secs_f64() * 1e3,
        t.t_exact.as_secs_f64() * 1e3,
        t.nodes
    );
}

fn main() -> Result<(), varysat::Error> {
    let mut args = std::env::args().skip(1);
    let pairs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(240);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5.0);
    let opts = Options::new();
    let exact = ExactExtractor::with_limit(Duration::from_secs_f64(secs));
    println!("seed {SEED:#x}, exact limit {secs} s per pair");
    let small = GenConfig::default();
    print(
        "default-size pairs",
        &sample(small.clone(), pairs, &opts, &exact),
    );
    let large = GenConfig {
        max_ops: small.max_ops * 2,
        max_outputs: small.max_outputs * 2,
        max_results: small.max_results * 2,
        ..small
    };
    print("double-size pairs", &sample(large, pairs, &opts, &exact));
    Ok(())
}
