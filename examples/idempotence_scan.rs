//! Counts the generated pairs on which optimizing the optimizer's own output finds
//! fewer varying components or slots (the idempotence property of tests/opt_props.rs,
//! without its stop at the first failure), and writes each such pair to a directory
//! for reading. Used to decide where the fixed-point round can be skipped
//! (docs/performance.md).
//!
//! `cargo run --release --example idempotence_scan -- [CASES] [SEED] [vs-fs|tcs-tes|all] [DIR]`
//! (defaults: 4,000 pairs, seed 1, every stage pair, `/tmp/idempotence-scan`).

use std::path::PathBuf;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};
use varysat::internals::gen::{arb_readable, describe, GenConfig};
use varysat::ir::Stage;
use varysat::{optimize, Options};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let cases: u32 = arg(0).and_then(|s| s.parse().ok()).unwrap_or(4_000);
    let seed: u64 = arg(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let config = match arg(2) {
        Some("vs-fs") => GenConfig::for_pair((Stage::Vertex, Stage::Fragment)),
        Some("tcs-tes") => GenConfig::for_pair((Stage::TessCtrl, Stage::TessEval)),
        _ => GenConfig::default(),
    };
    let dir = PathBuf::from(arg(3).unwrap_or("/tmp/idempotence-scan"));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        std::process::exit(1);
    }
    let mut runner = TestRunner::new(Config {
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    });
    let strategy = arb_readable(config);
    let mut found = 0;
    for case in 0..cases {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let p = tree.current().0;
        let opts = Options::new();
        let Ok(once) = optimize(&p, &opts) else {
            continue;
        };
        let Ok(twice) = optimize(&once.pipeline, &opts) else {
            continue;
        };
        let (a, b) = (once.report.after, twice.report.after);
        if (b.components, b.slots) != (a.components, a.slots) {
            found += 1;
            let file = dir.join(format!("s{seed}_{case}.pair"));
            if let Err(e) = std::fs::write(&file, describe(&p)) {
                eprintln!("error: cannot write {}: {e}", file.display());
                std::process::exit(1);
            }
            println!(
                "{}: {} components / {} slots, then {} / {}",
                file.display(),
                a.components,
                a.slots,
                b.components,
                b.slots
            );
        }
    }
    println!("{found} of {cases} pairs change on a second run (seed {seed})");
}
