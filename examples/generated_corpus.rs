//! Writes generated pairs (the property tests' generator) to a directory as `.pair`
//! files, so two builds can be compared on them (`scripts/compare_generated.py OLD
//! NEW DIR`): how a change that prunes the search (the sharing gate of
//! `egraph::sharing`) is checked on pairs no real shader resembles.
//!
//! `cargo run --release --example generated_corpus -- [CASES] [SEED] [vs-fs|tcs-tes|all] [DIR]`
//! (defaults: 2,000 pairs, seed 1, every stage pair, `/tmp/generated-corpus`).

use varysat::internals::gen::{describe, Scan};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scan = match Scan::from_args(&args, 2_000, "/tmp/generated-corpus") {
        Ok(scan) => scan,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let mut written = 0;
    for (case, p) in scan.pairs() {
        let file = scan.dir.join(format!("g{}_{case:05}.pair", scan.seed));
        if let Err(e) = std::fs::write(&file, describe(&p)) {
            eprintln!("error: cannot write {}: {e}", file.display());
            std::process::exit(1);
        }
        written += 1;
    }
    println!("{written} pairs in {}", scan.dir.display());
}
