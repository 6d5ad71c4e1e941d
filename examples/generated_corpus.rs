//! Writes generated pairs (the property tests' generator) to a directory as `.pair`
//! files, so two builds can be compared on them (`scripts/compare_generated.py OLD
//! NEW DIR`): how a change that prunes the search (the sharing gate of
//! `egraph::sharing`) is checked on pairs no real shader resembles.
//!
//! `cargo run --release --example generated_corpus -- [CASES] [SEED] [vs-fs|tcs-tes|all] [DIR]`
//! (defaults: 2,000 pairs, seed 1, every stage pair, `/tmp/generated-corpus`).

use std::path::PathBuf;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};
use varysat::internals::gen::{arb_readable, describe, GenConfig};
use varysat::ir::Stage;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let cases: u32 = arg(0).and_then(|s| s.parse().ok()).unwrap_or(2_000);
    let seed: u64 = arg(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let config = match arg(2) {
        Some("vs-fs") => GenConfig::for_pair((Stage::Vertex, Stage::Fragment)),
        Some("tcs-tes") => GenConfig::for_pair((Stage::TessCtrl, Stage::TessEval)),
        _ => GenConfig::default(),
    };
    let dir = PathBuf::from(arg(3).unwrap_or("/tmp/generated-corpus"));
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
    let mut written = 0;
    for case in 0..cases {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let file = dir.join(format!("g{seed}_{case:05}.pair"));
        if let Err(e) = std::fs::write(&file, describe(&tree.current().0)) {
            eprintln!("error: cannot write {}: {e}", file.display());
            std::process::exit(1);
        }
        written += 1;
    }
    println!("{written} pairs in {}", dir.display());
}
